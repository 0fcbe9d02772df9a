// CaptureThread: reads one executor call's stdout and stderr at a time,
// keeping at most `cap` bytes of the two together (past it, `on_cap` runs
// once: the caller kills the call's tree), until both pipes end, or, once
// the run is over (End), until nothing more comes for a moment: without a
// PID namespace an escaped process may hold a pipe open.
//
// The thread is the executor's own: started at its first call and joined
// by Stop (or the destructor), so a call starts no thread of its own.
//
//   capture.Begin(out_read, err_read, max_output, [&] { call.Kill(...); });
//   RunConfined(...);  // then close the write ends
//   CapturedOutput kept = capture.End();
//
// One call at a time (the executor's run_mutex): Begin, then End, before
// the next Begin. End after no Begin (or twice) returns nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace corral::executor {

struct CapturedOutput {
  std::string out;
  std::string err;
};

class CaptureThread {
 public:
  CaptureThread() = default;
  CaptureThread(const CaptureThread&) = delete;
  CaptureThread& operator=(const CaptureThread&) = delete;
  ~CaptureThread() { Stop(); }

  // Reads `out` and `err` (not owned; open until End returns) from now on.
  void Begin(int out, int err, std::optional<size_t> cap, std::function<void()> on_cap);
  // The run is over (every process of the sandbox is gone): waits until
  // the reading is done and returns what was kept.
  CapturedOutput End();
  // Ends the thread (between calls).
  void Stop();

 private:
  enum class Phase { kIdle, kReading, kRead };
  void Main();
  void Read();
  void Keep(std::string& into, const char* data, size_t size);

  std::mutex mutex_;  // guards phase_ and stopping_
  std::condition_variable changed_;
  Phase phase_ = Phase::kIdle;
  bool stopping_ = false;
  std::atomic<bool> run_over_ = false;
  // The call's, set by Begin before the thread reads them.
  int fds_[2] = {-1, -1};
  std::optional<size_t> cap_;
  std::function<void()> on_cap_;
  size_t kept_ = 0;
  bool capped_ = false;
  CapturedOutput output_;
  std::thread thread_;
};

}  // namespace corral::executor
