// The pieces every call of an executor shares (internal to executor/):
//
// - LiveCall: the RunWatcher of one running call. It holds the sandbox's
//   init (its pidfd) between Started and Ended, so another thread can signal
//   or kill the whole tree; a kill asked for before the sandbox started is
//   delivered the moment it starts.
// - Tracker: the calls running under one owner (the set, or one executor).
//   Enter refuses once the owner is closed; CloseAndKill marks it closed and
//   kills every tree running under it; WaitIdle waits for their threads to
//   finish, so scratch is removed only once no sandbox can write there.
#pragma once

#include <condition_variable>
#include <mutex>
#include <set>

#include "base/result.h"
#include "base/unique_fd.h"
#include "run/run.h"

namespace corral::executor {

// Why corral, not the command, ended a call.
enum class EndedBy { kCommand, kOutputLimit, kDeadline, kCancelled, kSignal };

class LiveCall : public RunWatcher {
 public:
  LiveCall() = default;
  LiveCall(const LiveCall&) = delete;
  LiveCall& operator=(const LiveCall&) = delete;
  ~LiveCall() override = default;
  void Started(int pidfd) override;
  void Ended() override;
  void PtyOpened(int master) override;

  // Sends `signal` to the sandbox's init (which passes SIGINT, SIGTERM,
  // SIGHUP and SIGQUIT on to the command's process group; SIGKILL ends the
  // whole PID namespace). Before the start, a SIGKILL is kept for it.
  Result<void> Send(int signal);
  // SIGKILL, remembering who asked (the first reason wins).
  void Kill(EndedBy reason);
  EndedBy ended_by() const;
  // Waits until the sandbox started or the run ended; true when it started.
  bool WaitStarted();
  // The run ended before or after starting (for WaitStarted).
  void MarkFinished();
  // A dup of the pty master (PtyOpened), or invalid.
  UniqueFd TakePtyMaster();

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int pidfd_ = -1;
  bool started_ = false;
  bool finished_ = false;
  bool kill_pending_ = false;
  UniqueFd pty_master_;
  EndedBy ended_by_ = EndedBy::kCommand;
};

// The typed error of a run corral ended (RunResult::error).
Error RunError(const RunResult& result);

class Tracker {
 public:
  // Registers `call`; `closed` is returned once the owner is closed.
  Result<void> Enter(LiveCall* call, const Error& closed);
  void Leave(LiveCall* call);
  bool closed() const;
  // Closed from now on; every running call is killed (EndedBy::kCancelled).
  void CloseAndKill();
  // Until no call is running.
  void WaitIdle();

 private:
  mutable std::mutex mutex_;
  std::condition_variable idle_;
  bool closed_ = false;
  std::set<LiveCall*> live_;
};

// Enter on the set's tracker and the executor's; Leave on both at the end.
class TrackedCall {
 public:
  static Result<void> EnterBoth(Tracker& set, Tracker& executor, LiveCall* call, const Error& set_closed,
                                const Error& executor_closed);
};

}  // namespace corral::executor
