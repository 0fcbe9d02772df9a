// Spawn: one clone into the sandbox's namespaces, then the command.
//
// Spawn reads the Plan (confine/plan.h) and the Command, never the Policy.
// The parent prepares everything before clone (argv/envp arrays, the mount
// plan, the embedded seccomp filters, the id maps, the sorted descriptors to
// keep), so the children allocate nothing. The first clone is the sandbox's
// PID 1, a minimal init that is corral's own code; in a fixed order it does
//
//   the lifeline's start byte (exec/child.h) -> id maps -> hostname ->
//   lo up and corral's services' sockets passed out
//   -> mount view (+ Landlock rules) -> setsid -> RLIMIT_CORE=0 ->
//   capabilities dropped -> no_new_privs -> Landlock -> seccomp -> the go
//   -> non-dumpable
//
// With a nursery (Command::nursery, exec/nursery.h; only `corral run` makes
// one), the namespaces, the id maps and the hostname already exist, made on
// another core while the policy was derived: when the plan wants exactly
// those namespaces, init is cloned into them (still corral's child, with a
// copy of corral's memory and descriptors taken at that moment) and skips
// the id maps and the hostname; any other plan dismisses the nursery and
// clones as above.
//
// The go: with its own lo, the child waits there until corral has taken
// the services' sockets and started serving the egress proxy's
// (Command::serve_egress), so nothing the command sends waits on a proxy
// that may never start.
//
// and then clones the command with CLONE_VM|CLONE_VFORK (no page tables are
// copied a second time): signals restored, fds >= 3 closed on exec, scrubbed
// environment, exec. Init then installs its own allowlist filter and waits.
// The child side, its one errno convention and its report are in
// exec/child.h: a failure is written as a fixed-size ChildReport to a
// CLOEXEC pipe, so EOF on that pipe means the command was exec'd.
//
// Init holds PR_SET_PDEATHSIG (the command cannot clear another process's),
// forwards SIGINT, SIGTERM, SIGHUP and SIGQUIT to the command's process
// group, and reaps orphans. When the command exits, init kills and reaps
// everything left in the PID namespace, then writes the command's status to
// corral and exits. The command is an ordinary process (PID 2):
// signals, SIGPIPE and alarms behave as they do outside.
//
// PR_SET_PDEATHSIG follows the thread that spawned: a library user that
// spawns from a worker thread must keep that thread alive for the run.
#pragma once

#include <signal.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <termios.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/dns_stub.h"
#include "net/synthetic_names.h"
#include "net/egress_proxy.h"
#include "base/result.h"
#include "base/unique_fd.h"
#include "confine/mount_plan.h"
#include "confine/plan.h"
#include "kernel/child_report.h"
#include "exec/nursery.h"

namespace corral {

// A pty of the command's own, for a caller whose stdin is a terminal
// (exec/pty_relay.h: CommandPtyFor makes one from the caller's terminal, and
// PtyRelay relays the master). The command leads a session with the pty as
// its controlling terminal; the descriptors that were the caller's terminal
// are the pty's slave instead, so the command holds none of the caller's.
struct CommandPty {
  unsigned descriptors = 0;  // bit N set: descriptor N (0-2) gets the slave
  struct termios modes = {};  // the slave starts with the caller's modes...
  struct winsize size = {};   // ...and window size
};

struct Command {
  std::vector<std::string> argv;  // argv[0] is looked up in the sandbox's PATH unless it has a '/'
  std::vector<std::string> env;   // "NAME=value", already scrubbed
  std::string cwd;                // SpawnUnconfined and a warm call (inside the view): a cold spawn enters the plan's
  UniqueFd program;               // a pinned program to exec by descriptor, or invalid
  int stdin_fd = -1;              // becomes the command's fd 0 when >= 0 (the caller keeps ownership)
  int stdout_fd = -1;             // becomes the command's fd 1 when >= 0 (the caller keeps ownership)
  int stderr_fd = -1;             // becomes the command's fd 2 when >= 0 (the caller keeps ownership)
  std::optional<CommandPty> pty;  // given: the command's own pty, its master in SandboxProcess::pty_master
  // A cgroup's directory (kernel/cgroup.h's RunCgroup, for the plan's
  // PlanCgroup): the sandbox's init starts in it (clone3 CLONE_INTO_CGROUP),
  // so nothing of the sandbox ever runs outside it. -1: corral's own cgroup.
  int cgroup_fd = -1;
  // Under --allow-host and --allow-local: called with the listeners of the
  // egress proxy that the sandbox's init passed out, after its set-up and
  // before the command's exec, which waits for it. The caller starts serving
  // them here; an error stops the sandbox, the command never runs, and Spawn
  // returns that error. Unset, the listeners are closed.
  std::function<Result<void>(EgressListeners)> serve_egress;
  // Under --allow-host: the table the sandbox's name server gives allowed
  // names their synthetic addresses from, shared with the proxy.
  std::shared_ptr<SyntheticNames> synthetic_names;
  // The namespaces a `corral run` made ahead on another core
  // (exec/nursery.h): the first Spawn clones init into them when its plan
  // wants exactly those, and dismisses them otherwise. Null: clone.
  Nursery* nursery = nullptr;
  // SpawnMode::kWarm only: the sandbox's end of a warm sandbox's control
  // channel (exec/warm_sandbox.h), which its init serves calls on.
  int warm_control_fd = -1;
};

// How one call of a warm sandbox (exec/warm_sandbox.h) is ended and
// signalled: through its init, which holds the call's process group.
class CallChannel {
 public:
  virtual ~CallChannel() = default;
  // Kills every process of the call (init stays, for the next call).
  virtual Result<void> Kill() = 0;
  // Passes `signal` to the call's process group.
  virtual Result<void> Forward(int signal) = 0;
  // The call's status was read: the sandbox takes the next call.
  virtual void Ended() = 0;
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
  // The master of the command's pty (Command::pty), or -1.
  int pty_master() const { return pty_master_.get(); }
  // The sandbox's name server (net/dns_stub.h) under --network none, served
  // by Supervise; null otherwise.
  DnsStub* dns() const { return dns_.get(); }
  // A call of a warm sandbox (exec/warm_sandbox.h): pid() and pidfd() are
  // its init's, which stays when the call ends; Kill, Forward and Reap act
  // on the call alone.
  bool warm_call() const { return call_ != nullptr; }

  // Kills the sandbox (with its own PID namespace, the whole tree).
  Result<void> Kill();
  // Kill, from another thread while Supervise runs (until the run's
  // watcher hears Ended): it reads nothing Supervise writes. A warm call's
  // kill that arrives after its call ended names that call, which init
  // ignores.
  Result<void> KillConcurrently();
  // Delivers a forwarded signal to the command's process group.
  Result<void> Forward(int signal);
  // Init's status pipe: readable once the command has ended and (with a PID
  // namespace) every other process of the sandbox has been killed and
  // reaped; at EOF without data if init died first.
  int status_fd() const { return status_.get(); }
  // Reads the command's wait status from init's pipe (once). False when init
  // died without writing one.
  bool TakeStatus();
  bool status_taken() const { return status_taken_; }
  // The status was taken and init had emptied its PID namespace first: no
  // process of the sandbox is left, only init's own exit.
  bool emptied() const { return command_status_.has_value() && own_pid_namespace_; }
  // Once emptied(): stop owning init without waiting for its exit, in which
  // the kernel frees the namespaces (a few hundred microseconds). Its zombie
  // passes to whoever reaps this process's orphans (a container's PID 1 that
  // does not reap collects one per run), so no caller does this: RunConfined
  // reaps init after its post-run work, or hands it to a caller that reaps
  // it as its own last step (RunOptions::reap_later). Only the reap_last
  // mutant (src/base/mutant.h) calls it, to show that the test sees it.
  void Release();
  // The command's wait status: from TakeStatus, or after Reap from init's
  // pipe, or directly for an unconfined command.
  std::optional<int> CommandStatus() const;
  // Waits for init to exit. Idempotent.
  void Reap();
  bool reaped() const { return reaped_; }
  // The raw wait status, once reaped.
  int wait_status() const { return wait_status_; }

 private:
  friend class Spawner;
  friend class WarmSandbox;
  bool unconfined_ = false;
  bool own_pid_namespace_ = false;
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd status_;  // init writes the command's wait status here
  UniqueFd pty_master_;
  std::shared_ptr<DnsStub> dns_;  // a warm sandbox's calls share its init's
  std::shared_ptr<CallChannel> call_;  // set for a warm call
  bool status_taken_ = false;
  std::optional<int> command_status_;
  bool reaped_ = false;
  int wait_status_ = 0;
  UniqueFd lifeline_;  // corral's end of the lifeline (exec/child.h), open while the sandbox may start
};

// kProbeOnly: the child sets up every mechanism and exits 0 instead of
// running anything (for `corral check`). kWarm: the child sets up the
// sandbox (namespaces, id maps, mount view, lo, capabilities dropped,
// no_new_privs) and becomes a warm sandbox's init, which runs each call it
// gets on Command::warm_control_fd under a fresh Landlock domain and the
// seccomp filter (exec/warm_sandbox.h); `command` carries no argv.
enum class SpawnMode { kRun, kProbeOnly, kWarm };

// Spawns `command` under `plan`. The forwarded signals must already be
// blocked in the calling thread (BlockForwardedSignals) so none is lost
// before the supervisor watches them.
Result<SandboxProcess> Spawn(const Plan& plan, Command& command, SpawnMode mode = SpawnMode::kRun);

// danger-full-access: spawn `command` with no confinement at all, in its own
// session and process group. `command.env` is used as given.
Result<SandboxProcess> SpawnUnconfined(Command& command);

// Whether `error` is the kernel refusing the sandbox a fresh /proc (a host
// that masks parts of its own): under --best-effort the run compiles again
// with CompileOptions::masked_proc.
bool ProcMountRefused(const Error& error);
// Whether a spawn failed because the kernel refused an overlayfs
// (ChildStage::kOverlay): under --overlay --best-effort the run falls back
// to a copied snapshot (overlay/snapshot.h).
bool OverlayRefused(const Error& error);

// The Error a child's report stands for; `mounts` names the mount op of a
// mount-view stage.
Error TranslateReport(const MountPlan& mounts, const ChildReport& report);

// The Error for a clone of the sandbox that failed with `clone_errno`. Only
// a refusal of the namespaces themselves is ErrorKind::kNamespace, which a
// best-effort run answers with the no-userns rung: no descriptor left for
// the process handle (EMFILE, ENFILE) or no process left (EAGAIN) is the
// caller's limit, named as such, and no reason to run with less.
Error CloneRefused(int clone_errno, const HostSupport& host);

// Blocks the forwarded signals, SIGCHLD, SIGWINCH (which the supervisor
// passes on to a pty) and SIGPIPE (held until the run is over); returns the
// previous mask. The command starts with none of them blocked.
sigset_t BlockForwardedSignals();

}  // namespace corral
