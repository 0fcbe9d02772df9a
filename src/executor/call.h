// The pieces every call of an executor shares (internal to executor/):
//
// - LiveCall: the RunWatcher of one running call. It holds the run's
//   control (run/run.h RunControl) between Started and Ended, so another
//   thread can signal the command's process group or kill its whole tree
//   (a warm call's through its sandbox's channel: the sandbox stays); a
//   kill asked for before the run started is delivered the moment it
//   starts.
// - Tracker: the calls running under one owner (the set, or one executor).
//   Enter refuses once the owner is closed; CloseAndKill marks it closed and
//   kills every tree running under it; WaitIdle waits for their threads to
//   finish, so scratch is removed only once no sandbox can write there.
#pragma once

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

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
  void Controls(RunControl* control) override;

  // SIGKILL kills the command's whole tree; any other signal goes to the
  // command's process group (RunControl). Before the start, a SIGKILL is
  // kept for it.
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
  Result<void> SendLocked(int signal);  // mutex_ held, running
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int pidfd_ = -1;
  RunControl* control_ = nullptr;
  bool started_ = false;
  bool finished_ = false;
  bool kill_pending_ = false;
  UniqueFd pty_master_;
  EndedBy ended_by_ = EndedBy::kCommand;
};

// The typed error of a run corral ended (RunResult::error).
Error RunError(const RunResult& result);

// How a run whose command ran ended, for a caller of the library: the
// command's own status (never corral's exit 79, which the CLI gives when
// something is left at a protected path, and which the command could give
// too), and the paths the sweep had to leave in place (SweepFinding
// kLeftInPlace: a hook or a shell file that may run outside the sandbox).
struct CommandEnd {
  int exit_code = 0;
  std::optional<int> signal;
  std::vector<std::string> protected_left;
};
CommandEnd CommandEndOf(const RunResult& result);

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
