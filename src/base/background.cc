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
  if (!started_) work_();  // one CPU, or no thread: the work runs here
}

Background::~Background() {
  if (!started_) return;
  ::pthread_join(thread_, nullptr);  // the work is done by then, or waited for here
}

void Background::Wait() {
  if (!started_) return;
  // The work is mostly about to end when the caller gets here: it is
  // watched for kSpin before the caller sleeps, since waking a sleeping CPU
  // took longer here (about 40 us in a VM) than the work had left.
  const auto until = std::chrono::steady_clock::now() + kSpin;
  while (done_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until) CpuRelax();
  done_.wait(0, std::memory_order_acquire);
}

void* Background::Run(void* arg) {
  auto* self = static_cast<Background*>(arg);
  self->started_on_ = ::sched_getcpu();
  // Started away from the caller; from here on the scheduler may move the
  // work anywhere the caller may run (onto the caller's CPU once it waits,
  // when another task keeps this one busy).
  (void)::sched_setaffinity(0, sizeof self->cpus_, &self->cpus_);
  self->work_();
  // seq_cst: the store is seen before the check for sleepers in notify_all
  // (a release store could pass that check, and a sleeper then miss it).
  self->done_.store(1, std::memory_order_seq_cst);
  self->done_.notify_all();
  return nullptr;
}

}  // namespace corral
