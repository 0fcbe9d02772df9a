// RunConfined: the whole life of one confined command, as every front end
// (CLI, agent tools, MCP) runs it. It runs only what the gate admitted
// (gate::Admit, gate/admit.h): the AdmittedRun's policy and argv, once.
//
//   compile the plan (fail closed) -> audit `spawned` -> spawn
//     (with --best-effort, a namespace refusal retries without namespaces
//      and audits `degraded`) -> supervise (signals, deadline) ->
//   audit `exited` or `failed` -> sweep the protected paths (audit
//   `protected`; when something the run made there could not be taken out,
//   the exit status is kExitProtectedPathLeft, whatever the command's was)
//   -> reap the sandbox's init, last: its status was taken as soon as it
//   had emptied its PID namespace, and the kernel frees the namespaces
//   while the post-run work goes on, so nothing is left to the caller's
//   reaper of orphans. A caller that ends right after the run (the CLI)
//   may take init and reap it as its own last step instead
//   (RunOptions::reap_later, ExitingInit).
//
// After the command, SIGPIPE is blocked in the calling thread until the
// run returns (or, under reap_later, until init is reaped): a write to a
// closed stderr fails with EPIPE instead of ending corral before the sweep
// and the reap, and the pending SIGPIPE takes effect after.
//
// With --max-procs or --max-memory on a host that offers a cgroup
// (kernel/cgroup.h) the sandbox starts in a cgroup of its own, removed
// after init is reaped; the `exited` record names the limit that hit, where
// corral can know it (LimitHit).
//
// Under --overlay (Policy::write_view) the run's overlay directory is made
// in the state directory first (overlay/overlay_run.h; no state directory,
// no run), the plan mounts the workspace as an overlayfs over it, and when
// the sandbox is gone the upper is read against the real tree: the
// baseline apply checks, the `overlay` audit record (run, root, upper
// size, counts; paths never, contents never) and the summary.
//
// The result says whether the exit status came from the command or from
// corral, so callers never mistake a sandbox refusal for a command failure.
// Under read-only mode the command's stderr is relayed through corral and
// scanned for the kernel's denial texts (RunResult::denial). When this
// process's stdin and stdout are terminals, the command gets a pty of its
// own, relayed with that terminal in raw mode (exec/pty_relay.h), and no
// stderr scan.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "base/result.h"
#include "confine/host.h"
#include "exec/supervisor.h"
#include "exec/warm_sandbox.h"
#include "gate/admit.h"
#include "policy/policy.h"
#include "policy/protected.h"
#include "repair/git_config_stage.h"
#include "repair/sweep.h"
#include "repair/sweep_journal.h"
#include "state/state_dir.h"

namespace corral {

// The running command, as another thread may end or signal it.
class RunControl {
 public:
  virtual ~RunControl() = default;
  // Kills every process of the command's tree (a warm call's alone: its
  // sandbox takes the next call).
  virtual Result<void> Kill() = 0;
  // Passes `signal` to the command's process group.
  virtual Result<void> Forward(int signal) = 0;
};

// Watches one run from another thread: the seam a server cancels through.
class RunWatcher {
 public:
  virtual ~RunWatcher() = default;
  // The sandbox is running; `pidfd` is its init (or, unconfined, the
  // command). Killing it (pidfd_send_signal SIGKILL) ends the whole tree:
  // the kernel kills every process of a PID namespace whose init dies.
  // Valid until Ended().
  virtual void Started(int pidfd) = 0;
  // Called once the run is over and before `pidfd` is closed.
  virtual void Ended() = 0;
  // With RunOptions::pty: the master of the command's pty, before Started().
  // Owned by the run (dup it to keep it); closed after Ended().
  virtual void PtyOpened(int /*master*/) {}
  // Just before Started(): what ends or signals the command from another
  // thread, valid until Ended(). Prefer it to the pidfd: for a call of a
  // warm sandbox the pidfd is the sandbox's init, whose death ends the
  // whole sandbox and which passes no signal on.
  virtual void Controls(RunControl* /*control*/) {}
};

enum class WarmRefusal { kFail, kRunCold };

// A confined run's init handed to the caller (RunOptions::reap_later):
// every process of the sandbox is gone, init may still be exiting while the
// kernel frees the namespaces. Until it is destroyed, the calling thread
// keeps the run's signal mask (the forwarded signals and SIGPIPE blocked);
// destroying it reaps init, then puts the caller's mask back, so a signal
// that came meanwhile takes effect only then.
class ExitingInit {
 public:
  ExitingInit() = default;
  ExitingInit(const ExitingInit&) = delete;
  ExitingInit& operator=(const ExitingInit&) = delete;
  ~ExitingInit();
  void Keep(SandboxProcess init, const sigset_t& mask);

 private:
  std::optional<SandboxProcess> init_;
  sigset_t mask_ = {};
};

struct RunOptions {
  bool forward_signals = true;  // relay SIGINT/SIGTERM/SIGHUP/SIGQUIT from this process
  const char* const* environ = nullptr;  // the environment to scrub (default: this process's)
  // In place of $XDG_STATE_HOME: corral's state directory (state/state_dir.h),
  // which holds the quarantine and the sweep journal, is <state_home>/corral.
  std::optional<std::string> state_home;
  // Not owned: corral's state directory as the caller already opened it
  // (StateDir::Open for the policy's home, or OpenBelow(state_home)): the
  // run takes a copy of its descriptor (StateDir::Duplicate) instead of
  // walking from "/" again (one removed since it was opened is opened
  // again). Unset: the run opens it.
  const StateDir* state_dir = nullptr;
  // Not owned: the sweep journal's slot the caller keeps from one run to
  // the next (repair/sweep_journal.h SweepJournalSlot); used by one run at
  // a time. Unset: the run takes a slot and empties it at its end.
  SweepJournalSlot* journal_slot = nullptr;
  // The command's descriptors 0-2, when >= 0 (not owned); otherwise this
  // process's. A server whose stdout is a protocol stream passes a pipe.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  RunWatcher* watcher = nullptr;  // not owned; outlives the call
  // Not owned: where a caller that ends right after the run (the CLI)
  // takes the sandbox's init, to reap it as its last step, so the kernel
  // frees the namespaces while the caller reports. Unset, or a run with a
  // cgroup of its own (removed once init is reaped): RunConfined reaps it.
  ExitingInit* reap_later = nullptr;
  // Not owned: the sandbox's namespaces, made ahead on another core
  // (exec/nursery.h); the cold spawn uses or dismisses it. A caller that
  // made one on this thread, for one run. Unset: the spawn clones them.
  Nursery* nursery = nullptr;
  // Called once, before the run leaves anything on disk (its journal, an
  // overlay run, a cgroup), blocks the signals it forwards and spawns: once
  // the plan is compiled and accepted, or, under --overlay, before the
  // overlay run is made. The caller's last word before anything of the
  // command can run or write, while its signals still act as they would
  // (corral run's PATH warning, worked out meanwhile on another core, is
  // written here). Not called when the run fails first.
  std::function<void()> before_spawn;
  // Under --overlay: stack on this pending overlay run (`--overlay-on RUN`)
  // instead of making a new one. The run continues in that run's upper,
  // holding its lock; one that is not kept, is held by a live run, an
  // apply or a discard, or overlays another workspace is refused.
  std::optional<std::string> overlay_on;
  // Not owned: run the admitted command as a call of this warm sandbox
  // (exec/warm_sandbox.h, made by StartWarm) instead of spawning a cold
  // one. Everything else stays: the plan is compiled (and must have the
  // fingerprint the sandbox was started from: another one fails with code
  // "policy_changed" and runs nothing), the audit records, supervision and
  // deadline, the sweep, the report. The working directory is the plan's,
  // inside the sandbox's view. Refused with --overlay (each run its own
  // upper); a repository's config stays read-only (no per-run copy).
  WarmSandbox* warm = nullptr;
  // With `warm`: a call the warm path refuses before anything ran (a
  // changed plan "policy_changed", "warm_unsupported", a pty
  // "tty_unsupported", "warm_busy", "warm_lost", "warm_closed",
  // "warm_too_large") fails with that code (kFail), or runs cold instead
  // (kRunCold: its own cold `spawned` record, RunResult::cold_because).
  WarmRefusal warm_refusal = WarmRefusal::kFail;
  // "NAME=value" entries set in the command's environment after the scrub,
  // replacing a variable of that name (an executor's own HOME and TMPDIR,
  // and a prepared process's additions; executor/executor.h).
  std::vector<std::string> env_set;
  // Given: the command gets a pty of its own with these modes and size
  // (exec/spawn.h CommandPty), whatever this process's terminal, and its
  // master goes to the watcher (RunWatcher::PtyOpened), not to a relay.
  std::optional<CommandPty> pty;
};

// The limit that ended or hampered the command, where corral can know it
// (docs/limits.md): "cpu_seconds", "file_size", "memory", "procs".
struct LimitHit {
  std::string name;
  std::string detail;  // one sentence for stderr
};

struct RunResult {
  enum class Source { kCommand, kCorral };
  Source source = Source::kCorral;
  int exit_status = 0;                 // what the CLI exits with
  std::optional<Error> error;          // set when corral ended the run
  SupervisedExit outcome;              // valid when the command ran
  std::vector<SweepFinding> quarantined;
  // What the run changed in a repository's config and what of it landed
  // (repair/git_config_stage.h); only configs it changed.
  std::vector<GitConfigLanding> git_configs;
  // The limit that hit, when corral can tell (the `exited` record's
  // `limit`).
  std::optional<LimitHit> limit_hit;
  // Under --best-effort, what the run went without (the `degraded` record's
  // dropped mechanisms), for the caller's one stderr line; empty: nothing.
  std::vector<std::string> degraded;
  // The rung the run stood on (confine/rung.h), when it was spawned confined.
  std::string rung;
  // Under read-only mode, the kernel denial text the command's stderr showed
  // when it failed: the run should carry the model-facing denial marker.
  std::optional<std::string> denial;
  // Under --network none, the names the command looked up (DnsStub::Summary),
  // for the caller's one stderr line; empty: none.
  std::optional<std::string> lookups;
  // Under --overlay, the one-screen summary of what the run changed
  // (overlay/changes.h) and its run id, for the caller's stderr.
  std::optional<std::string> overlay_summary;
  // With RunOptions::warm and WarmRefusal::kRunCold: the code of the warm
  // path's refusal, when the command ran cold instead.
  std::optional<std::string> cold_because;
};

// `audit`: the trail the run was admitted with.
RunResult RunConfined(gate::AdmittedRun run, const RunOptions& options = {}, const HostSupport& host = ProbeHost());

// A warm sandbox for `policy` (RunOptions::warm): its plan compiled once,
// its set-up paid once. Refused for danger-full-access and --overlay, and
// where WarmSandbox::Start refuses the plan.
Result<std::unique_ptr<WarmSandbox>> StartWarm(const Policy& policy, const HostSupport& host = ProbeHost());

// The `protected` audit record of one sweep finding.
AuditEvent ProtectedEvent(const SweepFinding& finding);

}  // namespace corral
