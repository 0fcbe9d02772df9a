// Work done on another CPU while the calling thread goes on:
//
//   Background compare([&] { path = ComparePath(policy, program); });
//   ... the caller's own work ...
//   compare.Wait();  // or when `compare` goes: it is always waited for
//
// The work runs on a thread of its own that no signal is ever delivered to
// (it starts with every signal blocked), so a handler of the process runs
// on the thread that expects it, and a signal a thread waits for (sigwait,
// signalfd) is never taken by this one; unless the caller takes it first
// (below), when it runs in the caller, with the caller's signal mask. It
// begins off the CPU the caller ran on (its CPUs are set before its first
// instruction): a new thread is queued on its creator's CPU and would take
// turns with it there while another CPU idles. Once begun it may run on any CPU the caller may, so a
// busy other CPU does not hold it while the caller waits. With one CPU, or
// when no thread can be made, the work runs at once in the caller.
//
// The work runs once, on whichever side takes it first: a caller that
// waits before the thread has begun (the other CPUs were busy: a thread
// queued behind corral's nursery helper began after the caller had slept
// 0.5 ms with its own CPU idle) runs the work itself, and the thread, once
// it begins, finds it taken and only ends. Wait returns as soon as the work
// is done, not once its thread has ended (a thread's exit took about 50 us
// more here, time the caller waited for nothing); the thread, which then
// only ends, is joined when the object goes.
//
// The work must be safe beside the caller's: it may read what the caller
// does not change meanwhile, and share nothing else without a lock.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <cstdint>
#include <functional>

namespace corral {

class Background {
 public:
  explicit Background(std::function<void()> work);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // Returns once the work is done (at once the second time), having done
  // it here when the thread had not begun it. The thread may still be
  // ending; it is joined when the object goes.
  void Wait();

  // The CPU the work's thread began the work on, once it has (tests); -1
  // while it has not, and for good when the caller did the work.
  int started_on() const { return started_on_.load(std::memory_order_acquire); }
  // The caller's CPU the thread began away from (tests); -1 without one.
  int kept_off() const { return kept_off_; }

 private:
  static void* Run(void* self);

  std::function<void()> work_;
  cpu_set_t cpus_;  // the caller's: the thread may run on all of them once begun
  pthread_t thread_{};
  enum State : uint32_t { kPending, kTaken, kDone };
  // Whoever moves it from kPending to kTaken does the work; kDone once
  // the work has returned.
  bool Take() {
    uint32_t pending = kPending;
    return state_.compare_exchange_strong(pending, kTaken, std::memory_order_acq_rel);
  }
  void Finish();

  bool started_ = false;  // a thread was made (joined by the destructor)
  std::atomic<uint32_t> state_{kPending};
  std::atomic<int> started_on_{-1};
  int kept_off_ = -1;
};

}  // namespace corral
