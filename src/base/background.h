// Work done on another CPU while the calling thread goes on:
//
//   Background probe([] { (void)ProbeHost(); });
//   ... the caller's own work ...
//   probe.Wait();  // or when `probe` goes: it is always waited for
//
// The work runs on a thread of its own that no signal is ever delivered to
// (it starts with every signal blocked), so a handler of the process runs
// on the thread that expects it, and a signal a thread waits for (sigwait,
// signalfd) is never taken by this one. It is kept off the CPU the caller
// ran on when it started it, from its first instruction: a new thread is
// queued on its creator's CPU and would take turns with it there while
// another CPU idles. With one CPU, or when no thread can be made, the work
// runs at once in the caller.
//
// The work must be safe beside the caller's: it may read what the caller
// does not change meanwhile, and share nothing else without a lock.
#pragma once

#include <pthread.h>

#include <functional>

namespace corral {

class Background {
 public:
  explicit Background(std::function<void()> work);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;

  // Returns once the work is done (at once the second time).
  void Wait();

 private:
  static void* Run(void* self);

  std::function<void()> work_;
  pthread_t thread_{};
  bool started_ = false;
};

}  // namespace corral
