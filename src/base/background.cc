#include "base/background.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <utility>

#include "base/blocked_signals.h"
#include "base/cpu_relax.h"

namespace corral {
namespace {

// The CPUs in `cpus` but the one the caller is on (`*here`); empty with one.
cpu_set_t OtherCpus(const cpu_set_t& cpus, int* here) {
  cpu_set_t others = cpus;
  *here = ::sched_getcpu();
  if (*here >= 0 && *here < CPU_SETSIZE) CPU_CLR(*here, &others);
  return others;
}

constexpr std::chrono::microseconds kSpin{200};

}  // namespace

Background::Background(std::function<void()> work) : work_(std::move(work)) {
  CPU_ZERO(&cpus_);
  int here = -1;
  cpu_set_t others;
  CPU_ZERO(&others);
  if (::sched_getaffinity(0, sizeof cpus_, &cpus_) == 0) others = OtherCpus(cpus_, &here);
  pthread_attr_t attributes;
  if (CPU_COUNT(&others) > 0 && ::pthread_attr_init(&attributes) == 0) {
    // The thread's CPUs are set before it runs its first instruction
    // (glibc holds it until then), so it never takes turns with the caller.
    if (::pthread_attr_setaffinity_np(&attributes, sizeof others, &others) == 0) {
      // The new thread inherits this mask: blocked from its first instruction.
      BlockedSignals held(BlockedSignals::kAll);
      kept_off_ = here;
      started_ = ::pthread_create(&thread_, &attributes, &Background::Run, this) == 0;
      if (!started_) kept_off_ = -1;
    }
    ::pthread_attr_destroy(&attributes);
  }
  if (!started_ && Take()) {  // one CPU, or no thread: the work runs here
    work_();
    Finish();
  }
}

Background::~Background() {
  if (!started_) return;
  Wait();  // the work is done by then, or done here
  ::pthread_join(thread_, nullptr);
}

void Background::Wait() {
  if (Take()) {  // the thread has not begun: the caller does the work
    // Done however the work ends, so the destructor's Wait never waits for
    // work that threw out of this one.
    struct Finished {
      Background* self;
      ~Finished() { self->Finish(); }
    } finished{this};
    work_();
    return;
  }
  // The work is mostly about to end when the caller gets here: it is
  // watched for kSpin before the caller sleeps, since waking a sleeping CPU
  // took longer here (about 40 us in a VM) than the work had left.
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (state_.load(std::memory_order_acquire) != kDone && std::chrono::steady_clock::now() < until) CpuRelax();
  for (uint32_t now; (now = state_.load(std::memory_order_acquire)) != kDone;) {
    state_.wait(now, std::memory_order_acquire);
  }
}

void Background::Finish() {
  // seq_cst: the store is seen before the check for sleepers in notify_all
  // (a release store could pass that check, and a sleeper then miss it).
  state_.store(kDone, std::memory_order_seq_cst);
  state_.notify_all();
}

void* Background::Run(void* arg) {
  auto* self = static_cast<Background*>(arg);
  if (!self->Take()) return nullptr;  // the caller got there first and does the work
  self->started_on_.store(::sched_getcpu(), std::memory_order_release);
  // Started away from the caller; from here on the scheduler may move the
  // work anywhere the caller may run (onto the caller's CPU once it waits,
  // when another task keeps this one busy).
  (void)::sched_setaffinity(0, sizeof self->cpus_, &self->cpus_);
  self->work_();
  self->Finish();
  return nullptr;
}

}  // namespace corral
