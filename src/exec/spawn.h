// Spawn: one clone into the sandbox, then the confined command.
//
// The parent prepares everything before clone (argv/envp arrays, the mount
// plan, the compiled seccomp filter, the id maps), so the child allocates
// nothing. The child, the sandbox's PID 1, runs in a fixed order:
//
//   id maps -> hostname -> mount view (+ Landlock rules) -> setsid ->
//   RLIMIT_CORE=0 -> capabilities dropped -> no_new_privs -> Landlock ->
//   seccomp -> fork the command -> (command) signals restored, fds >= 3 closed
//   on exec, scrubbed environment -> exec
//
// Between clone and exec only async-signal-safe calls are made; a failure is
// written as a fixed-size ChildReport to a CLOEXEC pipe, so EOF on that pipe
// means the command was exec'd. PID 1 stays behind as a minimal init: it
// forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to every process in the
// sandbox, reaps orphans, and exits with the command, which kills everything
// left in the PID namespace. PR_SET_PDEATHSIG ties it to the parent.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "confine/plan.h"

namespace corral {

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in the sandbox's PATH unless it has a '/'
  std::vector<std::string> env;   // "NAME=value", already scrubbed
  std::string cwd;                // inside the sandbox
  UniqueFd program;               // a pinned program to exec by descriptor, or invalid
};

// The signals corral forwards to the sandbox.
sigset_t ForwardedSignals();

class SandboxProcess {
 public:
  SandboxProcess() = default;
  SandboxProcess(SandboxProcess&&) = default;
  SandboxProcess& operator=(SandboxProcess&&) = default;
  ~SandboxProcess();

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  // Init writes the command's wait status here just before it exits.
  int status_fd() const { return status_.get(); }

  // Sends `signal` to the sandbox's init (SIGKILL tears the whole tree down).
  Result<void> Signal(int signal) const;
  // Waits for init to exit. Idempotent.
  void Reap();
  bool reaped() const { return reaped_; }
  // Init's own wait status, once reaped.
  int wait_status() const { return wait_status_; }

 private:
  friend Result<SandboxProcess> Spawn(const Plan&, Command&, bool);
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd status_;
  bool reaped_ = false;
  int wait_status_ = 0;
};

// Spawns `command` under `plan`. With `probe_only`, the child sets up every
// mechanism and exits 0 instead of running anything (for `corral check`).
// The forwarded signals must already be blocked in the calling thread
// (BlockForwardedSignals) so none is lost before the supervisor watches them.
Result<SandboxProcess> Spawn(const Plan& plan, Command& command, bool probe_only = false);

// Blocks the forwarded signals and SIGCHLD; returns the previous mask.
sigset_t BlockForwardedSignals();

}  // namespace corral
