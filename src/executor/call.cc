#include "executor/call.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "base/mutant.h"
#include "executor/errors.h"

namespace corral::executor {

void LiveCall::Started(int pidfd) {
  std::lock_guard lock(mutex_);
  pidfd_ = pidfd;
  started_ = true;
  if (kill_pending_) ::syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
  changed_.notify_all();
}

void LiveCall::Ended() {
  std::lock_guard lock(mutex_);
  pidfd_ = -1;
}

void LiveCall::PtyOpened(int master) {
  std::lock_guard lock(mutex_);
  pty_master_.Reset(::fcntl(master, F_DUPFD_CLOEXEC, 3));
}

Result<void> LiveCall::Send(int signal) {
  std::lock_guard lock(mutex_);
  if (pidfd_ < 0) {
    if (signal == SIGKILL && !finished_) kill_pending_ = true;
    return {};  // not running (yet, or any more): nothing to signal
  }
  if (::syscall(SYS_pidfd_send_signal, pidfd_, signal, nullptr, 0) != 0 && errno != ESRCH) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot signal the sandbox", "pidfd_send_signal", errno);
  }
  return {};
}

void LiveCall::Kill(EndedBy reason) {
  {
    std::lock_guard lock(mutex_);
    if (ended_by_ == EndedBy::kCommand) ended_by_ = reason;
  }
  (void)Send(SIGKILL);
}

EndedBy LiveCall::ended_by() const {
  std::lock_guard lock(mutex_);
  return ended_by_;
}

bool LiveCall::WaitStarted() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return started_ || finished_; });
  return started_;
}

void LiveCall::MarkFinished() {
  std::lock_guard lock(mutex_);
  finished_ = true;
  kill_pending_ = false;
  changed_.notify_all();
}

UniqueFd LiveCall::TakePtyMaster() {
  std::lock_guard lock(mutex_);
  return std::move(pty_master_);
}

Result<void> Tracker::Enter(LiveCall* call, const Error& closed) {
  std::lock_guard lock(mutex_);
  if (closed_) return closed;
  live_.insert(call);
  return {};
}

void Tracker::Leave(LiveCall* call) {
  std::lock_guard lock(mutex_);
  live_.erase(call);
  if (live_.empty()) idle_.notify_all();
}

bool Tracker::closed() const {
  std::lock_guard lock(mutex_);
  return closed_;
}

void Tracker::CloseAndKill() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  if (MutantActive(Mutant::kExecutorCancel)) return;
  for (LiveCall* call : live_) call->Kill(EndedBy::kCancelled);
}

void Tracker::WaitIdle() {
  if (MutantActive(Mutant::kExecutorCancel)) return;
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return live_.empty(); });
}

Result<void> TrackedCall::EnterBoth(Tracker& set, Tracker& executor, LiveCall* call, const Error& set_closed,
                                    const Error& executor_closed) {
  CORRAL_TRY(set.Enter(call, set_closed));
  Result<void> entered = executor.Enter(call, executor_closed);
  if (!entered.ok()) set.Leave(call);
  return entered;
}

}  // namespace corral::executor
