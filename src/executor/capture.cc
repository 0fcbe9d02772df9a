#include "executor/capture.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace corral::executor {

void CaptureThread::Begin(int out, int err, std::optional<size_t> cap, std::function<void()> on_cap) {
  std::unique_lock lock(mutex_);
  fds_[0] = out;
  fds_[1] = err;
  cap_ = cap;
  on_cap_ = std::move(on_cap);
  kept_ = 0;
  capped_ = false;
  output_ = CapturedOutput();
  run_over_ = false;
  phase_ = Phase::kReading;
  if (!thread_.joinable()) thread_ = std::thread([this] { Main(); });
  lock.unlock();
  changed_.notify_all();
}

CapturedOutput CaptureThread::End() {
  run_over_ = true;
  std::unique_lock lock(mutex_);
  if (phase_ == Phase::kIdle) return {};
  changed_.wait(lock, [this] { return phase_ == Phase::kRead; });
  phase_ = Phase::kIdle;
  on_cap_ = nullptr;
  return std::move(output_);
}

void CaptureThread::Stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    changed_.notify_all();
  }
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mutex_);
  stopping_ = false;  // a later Begin starts the thread again
}

void CaptureThread::Main() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [this] { return phase_ == Phase::kReading || stopping_; });
    if (phase_ != Phase::kReading) return;  // stopping, no call
    lock.unlock();
    Read();
    lock.lock();
    phase_ = Phase::kRead;
    changed_.notify_all();
  }
}

void CaptureThread::Read() {
  bool open[2] = {true, true};
  int quiet_polls = 0;
  char buffer[65536];
  while (open[0] || open[1]) {
    struct pollfd polls[2] = {{open[0] ? fds_[0] : -1, POLLIN, 0}, {open[1] ? fds_[1] : -1, POLLIN, 0}};
    int ready = ::poll(polls, 2, 50);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      // Without a PID namespace an escaped process may hold the pipe:
      // once the run is over, a quiet pipe is done.
      if (run_over_ && ++quiet_polls >= 4) break;
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if (!open[i] || polls[i].revents == 0) continue;
      ssize_t n = ::read(fds_[i], buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        open[i] = false;
        continue;
      }
      Keep(i == 0 ? output_.out : output_.err, buffer, static_cast<size_t>(n));
    }
  }
}

void CaptureThread::Keep(std::string& into, const char* data, size_t size) {
  if (!cap_) {
    into.append(data, size);
    return;
  }
  size_t room = *cap_ > kept_ ? *cap_ - kept_ : 0;
  size_t take = std::min(room, size);
  into.append(data, take);
  kept_ += take;
  if (take < size && !capped_) {
    capped_ = true;
    on_cap_();
  }
}

}  // namespace corral::executor
