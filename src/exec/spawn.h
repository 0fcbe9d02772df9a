// Spawn: one clone into the sandbox, and the command is its PID 1.
//
// The parent prepares everything before clone (argv/envp arrays, the mount
// plan, the embedded seccomp filter, the id maps), so the child allocates
// nothing. The child is cloned with CLONE_VM|CLONE_VFORK onto a private
// stack: no page tables are copied and no copy-on-write faults follow, and
// the parent waits until the child execs (or fails). The child runs in a
// fixed order:
//
//   id maps -> hostname -> mount view (+ Landlock rules) -> setsid ->
//   RLIMIT_CORE=0 -> capabilities dropped -> no_new_privs -> Landlock ->
//   seccomp -> signals restored, fds >= 3 closed on exec, scrubbed
//   environment -> exec
//
// Between clone and exec only async-signal-safe calls are made (the child
// shares the parent's memory until exec, so it writes nothing the parent
// needs); a failure is written as a fixed-size ChildReport to a CLOEXEC
// pipe, so EOF on that pipe means the command was exec'd.
//
// The command is the sandbox's PID 1: when it exits, the kernel kills every
// process left in its PID namespace. PR_SET_PDEATHSIG ties it to corral.
// Forwarded signals go to its whole process group, as a terminal sends them;
// since PID 1 never receives a signal it has no handler for, a forwarded
// signal the command neither catches nor ignores takes its default action
// the only way it can: corral kills the sandbox and reports death by that
// signal. Orphans are not reaped before PID 1 exits (see SECURITY.md).
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
  // Unconfined (danger-full-access): not in a PID namespace of its own.
  bool unconfined() const { return unconfined_; }

  // Kills the command (for a sandbox, the whole PID namespace with it).
  Result<void> Kill();
  // Delivers a forwarded signal to the command's process group (see above).
  Result<void> Forward(int signal);
  // After Reap: the command's wait status, with a forwarded signal whose
  // default action corral carried out reported as death by that signal.
  std::optional<int> CommandStatus() const;
  // Waits for init to exit. Idempotent.
  void Reap();
  bool reaped() const { return reaped_; }
  // The raw wait status, once reaped.
  int wait_status() const { return wait_status_; }

 private:
  friend class Spawner;
  bool unconfined_ = false;
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  bool reaped_ = false;
  int wait_status_ = 0;
  int emulated_signal_ = 0;  // a forwarded signal corral carried out by killing the sandbox
};

// Spawns `command` under `plan`. With `probe_only`, the child sets up every
// mechanism and exits 0 instead of running anything (for `corral check`).
// The forwarded signals must already be blocked in the calling thread
// (BlockForwardedSignals) so none is lost before the supervisor watches them.
Result<SandboxProcess> Spawn(const Plan& plan, Command& command, bool probe_only = false);

// danger-full-access: spawn `command` with no confinement at all, in its own
// session and process group. `command.env` is used as given.
Result<SandboxProcess> SpawnUnconfined(Command& command);

// Blocks the forwarded signals and SIGCHLD; returns the previous mask.
sigset_t BlockForwardedSignals();

}  // namespace corral
