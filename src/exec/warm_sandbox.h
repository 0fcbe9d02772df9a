// WarmSandbox: a sandbox set up once, then run many times, one call at a
// time: the warm path of a harness's executor.
//
//   Result<std::unique_ptr<WarmSandbox>> warm = WarmSandbox::Start(plan);
//   Command command;  // argv, env (already scrubbed), cwd inside the view,
//                     // fds 0-2; -1 passes this process's own
//   Result<SandboxProcess> call = (*warm)->Run(command);
//   Supervise(*call, options);  // as a cold spawn: signals, deadline, kill
//
// Start pays the cold set-up once (exec/spawn.h, SpawnMode::kWarm): the
// namespaces, id maps, mount view, lo and the name server's sockets, the
// capabilities dropped and no_new_privs. Its result is a small init (PID 1
// of the sandbox, corral's own code, allocating nothing) waiting on a
// control channel: a SOCK_SEQPACKET socketpair, close-on-exec, whose ends
// only corral and init hold (exec/warm_protocol.h).
//
// Run sends one call: argv, env and the working directory, and by
// SCM_RIGHTS its descriptors 0-2 and a pinned program. Init forks the
// call's process, which gets a session and process group of its own, the
// environment given and no other, every descriptor >= 3 closed, no
// capability, no_new_privs and the seccomp filter (inherited from init,
// which dropped the one and installed the others before its first call: a
// call has exactly init's one filter, never one a previous call added), a
// fresh Landlock domain from the ruleset init prepared once (restrict_self
// per call), its working directory (chdir inside the view; one that is not
// there fails the call with kChdir's error), then exec. The SandboxProcess Run returns is
// a call: Supervise waits on it as on a cold spawn; Forward passes
// SIGINT/SIGTERM/SIGHUP/SIGQUIT (then SIGCONT) to the call's process group;
// Kill kills every process of the call, and the sandbox takes the next
// call. When the call's process ends, init kills and reaps every other
// process of the PID namespace before it writes the status: nothing of call
// N is alive when call N+1 starts.
//
// What calls share: the mount view with its private /tmp and HOME (what one
// call writes there, the next one sees), the network namespace and its name
// server. What they never share: processes, Landlock domains, seccomp
// filters, environment, session and process group (docs/warm.md).
//
// Init stays out of the calls' reach: it is not dumpable, holds no
// capability, runs under the command's own seccomp filter, has no signal
// handler (SIGCHLD is blocked and read from a signalfd; as PID 1 of the
// namespace it gets no other signal from inside, and under Landlock's
// signal scoping, ABI 6, none at all), and the control channel closes at
// each call's exec. Its only input is corral's channel.
//
// One call at a time: Run refuses a second call while the first one's
// SandboxProcess is not reaped (code "warm_busy"). Run and Close are safe
// from any thread; a call's SandboxProcess belongs to one thread. Close
// kills the whole sandbox and reaps its init (so does the destructor);
// later calls fail (code "warm_closed"). An init killed from outside (a
// RunWatcher's SIGKILL to its pidfd) ends the sandbox: the call in flight
// is reported lost, the next Run fails (code "warm_lost"). The lifeline is
// the channel, not the starting thread: when corral dies, init reads EOF
// and the namespace dies with it.
//
// Start refuses a plan without namespaces of its own (only its PID
// namespace proves a call's processes gone) and, for now, one whose
// sandbox forwards to corral's egress proxy (--allow-host, --allow-local,
// captured ports), nor one with a cgroup of its own (--max-procs,
// --max-memory where the host offers one): those run cold (code
// "warm_unsupported"). The plan's rlimits apply to each call's process, as
// to a cold command's. A call with a pty is refused (code
// "tty_unsupported"), never silently run without one.
//
// Below the gate: Run runs whatever Command it is given, as Spawn does; it
// checks nothing about who asked. Its one caller is RunConfined (run/run.h),
// which takes only a gate::AdmittedRun and compares the run's freshly
// compiled plan with the sandbox's fingerprint first (code
// "policy_changed"). Front ends hold a sandbox through run/warm_slot.h and
// hand it to RunConfined; none calls Run. It is not part of the installed
// API (include/corral/corral.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"
#include "confine/plan.h"
#include "exec/spawn.h"

namespace corral {

struct WarmState;

class WarmSandbox {
 public:
  static Result<std::unique_ptr<WarmSandbox>> Start(const Plan& plan);
  // Why Start would refuse `plan` (code "warm_unsupported"), before any
  // spawn: a caller that runs cold then knows it up front.
  static Result<void> Supports(const Plan& plan);
  WarmSandbox(const WarmSandbox&) = delete;
  WarmSandbox& operator=(const WarmSandbox&) = delete;
  ~WarmSandbox();

  // Runs `command` (its argv, env, cwd and descriptors 0-2; program, when
  // valid, is exec'd by descriptor) as the sandbox's next call.
  Result<SandboxProcess> Run(Command& command);
  // Kills the whole sandbox and reaps its init. Idempotent.
  void Close();

  // Plan::Fingerprint of the plan it was started from.
  const std::string& fingerprint() const { return fingerprint_; }
  // Plan::etc_view of that plan: how its /etc view was made, which a call's
  // plan takes as given (CompileOptions::warm_etc_view).
  EtcViewOutcome etc_view() const { return etc_view_; }
  // Its init, as this process sees it.
  pid_t pid() const { return init_.pid(); }
  // The calls it has run.
  uint32_t calls() const;
  // Its init has ended (killed from outside): every later Run fails with
  // "warm_lost". False once closed.
  bool lost() const;

 private:
  WarmSandbox() = default;
  SandboxProcess init_;
  std::shared_ptr<WarmState> state_;
  std::string fingerprint_;
  EtcViewOutcome etc_view_ = EtcViewOutcome::kMasked;
};

}  // namespace corral
