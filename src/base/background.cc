#include "base/background.h"

#include <pthread.h>
#include <sched.h>

#include <utility>

#include "base/blocked_signals.h"

namespace corral {
namespace {

// The CPUs the caller may use but the one it is on; empty with one CPU.
cpu_set_t OtherCpus() {
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  if (::sched_getaffinity(0, sizeof cpus, &cpus) != 0) {
    CPU_ZERO(&cpus);
    return cpus;
  }
  if (int here = ::sched_getcpu(); here >= 0 && here < CPU_SETSIZE) CPU_CLR(here, &cpus);
  return cpus;
}

}  // namespace

Background::Background(std::function<void()> work) : work_(std::move(work)) {
  cpu_set_t others = OtherCpus();
  pthread_attr_t attributes;
  if (CPU_COUNT(&others) > 0 && ::pthread_attr_init(&attributes) == 0) {
    // The thread's CPUs are set before it runs its first instruction
    // (glibc holds it until then), so it never takes turns with the caller.
    if (::pthread_attr_setaffinity_np(&attributes, sizeof others, &others) == 0) {
      // The new thread inherits this mask: blocked from its first instruction.
      BlockedSignals held(BlockedSignals::kAll);
      started_ = ::pthread_create(&thread_, &attributes, &Background::Run, this) == 0;
    }
    ::pthread_attr_destroy(&attributes);
  }
  if (!started_) work_();  // one CPU, or no thread: the work runs here
}

Background::~Background() { Wait(); }

void Background::Wait() {
  if (!started_) return;
  ::pthread_join(thread_, nullptr);
  started_ = false;
}

void* Background::Run(void* self) {
  static_cast<Background*>(self)->work_();
  return nullptr;
}

}  // namespace corral
