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

#include <optional>
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
  int stderr_fd = -1;             // becomes the command's fd 2 when >= 0 (the caller keeps ownership)
};

// The signals corral forwards to the sandbox.
sigset_t ForwardedSignals();

class SandboxProcess {
 public:
  SandboxProcess() = default;
  SandboxProcess(SandboxProcess&& other) noexcept { *this = std::move(other); }
  SandboxProcess& operator=(SandboxProcess&& other) noexcept;
  SandboxProcess(const SandboxProcess&) = delete;
  SandboxProcess& operator=(const SandboxProcess&) = delete;
  // Kills and reaps a sandbox that is still running.
  ~SandboxProcess();

  pid_t pid() const { return pid_; }
  int pidfd() const { return pidfd_.get(); }
  // Unconfined (danger-full-access): the command itself, with no init.
  bool unconfined() const { return unconfined_; }

  // Sends `signal` to the sandbox's init (SIGKILL tears the whole tree down);
  // for an unconfined command, to its process group.
  Result<void> Signal(int signal) const;
  // After Reap: the command's own wait status, if it could be learned (from
  // init's status pipe, or directly for an unconfined command).
  std::optional<int> CommandStatus() const;
  // Waits for init to exit. Idempotent.
  void Reap();
  bool reaped() const { return reaped_; }
  // Init's own wait status, once reaped.
  int wait_status() const { return wait_status_; }

 private:
  friend Result<SandboxProcess> Spawn(const Plan&, Command&, bool);
  friend Result<SandboxProcess> SpawnUnconfined(Command&);
  bool unconfined_ = false;
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

// danger-full-access: fork and exec `command` with no confinement at all, in
// its own process group. `command.env` is used as given.
Result<SandboxProcess> SpawnUnconfined(Command& command);

// Blocks the forwarded signals and SIGCHLD; returns the previous mask.
sigset_t BlockForwardedSignals();

}  // namespace corral
