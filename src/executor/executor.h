// Executors: corral as a library for a harness that runs many commands.
//
// An ExecutorSet owns everything it creates: its executors, their scratch
// directories, every process tree they start. For(key) gives the executor of
// that key (memoised: the same key, the same Executor), which runs commands
// under the set's policy with a HOME and a TMPDIR of its own.
//
//   auto host = CaptureHostContext();
//   ExecutorPolicy policy{.request = {}, .host = *host};   // as `corral run` with no flags
//   auto set = ExecutorSet::Create(std::move(policy), {.scratch_root = "/srv/scratch"});
//   Executor* executor = *(*set)->For("agent-1");
//   Result<RunOutput> out = executor->RunArgv(workspace, {"make", "test"});
//   (*set)->Close();   // kills what still runs, removes the scratch
//
// The policy is the schema the CLI reads (ExecutorPolicy: a RunRequest, as
// the flags fill it, plus optionally a config file's text), resolved once
// when the set is made. A policy change means a new set.
//
// Every call goes through the one gate (gate::Admit, gate/admit.h) with the
// set's Approver, then through RunConfined (run/run.h): the same admission,
// plan, spawn, supervision, sweep and audit as `corral run`. The default
// approver answers every question "no", so a policy that asks (an approval
// policy that asks about a dangerous command, a profile's Gated dimension)
// refuses the call (ExecutorErrc::kRefusedByGate) and nothing runs.
//
// Calls run warm: each executor starts a warm sandbox of its own
// (exec/warm_sandbox.h) at its first call and runs its calls in it. A call
// the warm path refuses before anything ran (a pty, the sandbox busy with a
// prepared process, a changed plan, arguments over 1 MiB) runs cold under
// the same plan; a sandbox whose init was killed from outside is replaced
// at the next call; a plan that cannot run warm (no namespaces, the egress
// proxy, a cgroup of its own, --overlay) makes every call cold, and
// Report()'s "calls" says so (docs/executors.md).
//
// What the calls of one executor share: its HOME and its TMPDIR (directories
// under the set's scratch, granted writable, named by $HOME and $TMPDIR), its
// warm sandbox's private /tmp, and the workspace, which every executor of
// the set shares. What they never share: processes (each call's tree, its
// daemons included, is killed and reaped before the call returns), the
// Landlock domain and seccomp filter (each call restricts itself afresh;
// what a call adds dies with it), the environment (scrubbed per call;
// additions are per process). Executors never share a HOME, TMPDIR or /tmp
// with each other.
//
// A call's directory (`cwd`) must be inside the workspace: it is resolved
// beneath the workspace's descriptor (openat2 RESOLVE_BENEATH), so a `..`
// or a symlink that leads out is ExecutorErrc::kCwdOutsideWorkspace, and
// the command runs in the canonical directory found there. Empty: the
// workspace itself; relative: below the workspace.
//
// Threads: a set may be used from any number of threads. The calls of one
// Executor (RunArgv, RunCommand, RunArgvLimited) run one at a time, in the
// order they take its lock; different executors run in parallel. Prepared
// processes (executor/process.h) are not serialised.
//
// Close() (the set's, or one executor's) cancels what runs: every running
// tree is killed through its init (the PID namespace takes grandchildren
// that called setsid with it), every call still running returns
// kCancelled, the warm sandboxes are stopped and their inits reaped, then
// the scratch is removed on descriptors (never following a
// symlink the command planted), and every later call fails with
// kSetClosed (or kExecutorClosed). Close is idempotent; the destructor
// closes. Executors stay valid objects until the set is destroyed.
//
// Security: the set adds to the policy only the write grants of each
// executor's two directories; everything else is the caller's policy. The
// scratch root is opened once without following symlinks and must be the
// caller's (ExecutorErrc::kScratchUnsafe otherwise).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "base/result.h"
#include "confine/guarantees.h"
#include "confine/plan.h"
#include "executor/errors.h"
#include "gate/admit.h"
#include "gate/approval.h"
#include "policy/roots.h"
#include "resolve/request.h"
#include "run/run.h"

namespace corral::executor {

class ExecutorSet;
class Process;
struct ProcessOptions;
struct SetState;

// The policy of a set: what `corral run` would resolve from these flags and
// files, on this host.
struct ExecutorPolicy {
  RunRequest request;  // the flags' request (overrides, config files, preset, approval)
  HostContext host;    // CaptureHostContext(); its cwd only names the default workspace
  // A config file's text ([sandbox], [approval]; the user config's schema,
  // docs/config.md), read in place of the user config file. Unset: the
  // request's files.
  std::optional<std::string> config_toml;
};

// The same tables as JSON ({"sandbox": {"mode": "read-only", ...}}), as the
// config file's TOML text; each key and value is read by the TOML reader,
// so the schema and its checks are the config file's.
Result<std::string> ConfigJsonToToml(std::string_view json);

struct ExecutorSetOptions {
  std::string scratch_root;  // a directory of the caller's; empty: /tmp
  int max_executors = 64;
  // Asked every question of the gate; not owned, outlives the set. Null:
  // every question is answered "no".
  Approver* approver = nullptr;
  // The audit trail of every call; not owned, outlives the set. Null: none.
  const AuditTrail* trail = nullptr;
  // corral's state directory (quarantine, sweep journal) is
  // <state_home>/corral; unset: $XDG_STATE_HOME's (RunOptions::state_home).
  std::optional<std::string> state_home;
};

// What one call produced.
struct RunOutput {
  std::string stdout_bytes;
  std::string stderr_bytes;
  int exit_code = 0;          // the command's, or 128 + the signal that killed it
  std::optional<int> signal;  // the signal that killed the command
  bool output_limit = false;  // RunArgvLimited: the cap was passed and the tree killed
  // What the command made at a protected path in the workspace (a git
  // hook, a .envrc, ...) that corral could not take out after the call: it
  // may run outside the sandbox; inspect and remove it before you use git
  // or an editor there. Empty after nearly every call.
  std::vector<std::string> protected_left;
};

class Executor {
 public:
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;
  ~Executor();

  const std::string& key() const { return key_; }
  const std::string& home() const { return home_; }
  const std::string& tmpdir() const { return tmpdir_; }

  // argv[0] is looked up in the sandbox's PATH unless it has a '/'.
  Result<RunOutput> RunArgv(const std::string& cwd, const std::vector<std::string>& argv);
  // `/bin/sh -c shell`.
  Result<RunOutput> RunCommand(const std::string& cwd, const std::string& shell);
  // At most `max_output` bytes of stdout and stderr together are kept; once
  // more arrive the whole tree is killed and output_limit is set.
  Result<RunOutput> RunArgvLimited(const std::string& cwd, const std::vector<std::string>& argv, size_t max_output);

  // What this host enforces for the executor's policy (confine/plan.h).
  Level level() const { return level_; }
  Guarantees guarantees() const { return guarantees_; }
  // The policy and the plan as `corral explain --json` describes them.
  std::string Report() const;

  // How its calls got their policy: derived again, or the last call's, kept
  // while nothing it was derived from has changed (executor/policy_cache.h).
  struct PolicyDerivations {
    int derived = 0;       // calls that derived it (BuildPolicy)
    int reused = 0;        // calls that got the kept one
    int observed = 0;      // derivations watched to be kept (after one that could not be: 1 in 2, 4, ... 64)
    std::string not_kept;  // why the last derivation is not kept; "" when it is
  };
  PolicyDerivations policy_derivations() const;

  // A process to drive by hand (executor/process.h).
  Result<std::unique_ptr<Process>> PrepareProcess(ProcessOptions options);

  // Kills what this executor runs, removes its HOME and TMPDIR; later calls
  // fail with kExecutorClosed. Idempotent.
  void Close();
  bool closed() const;

 private:
  friend class ExecutorSet;
  friend class Process;
  friend struct SetState;
 public:
  struct State;  // executor/set_state.h

 private:
  Executor(std::string key, SetState* set, std::unique_ptr<State> state);

  // The gate's admission of `argv` in `cwd` for this executor.
  Result<gate::AdmittedRun> Admit(const std::string& cwd, const std::vector<std::string>& argv) const;
  // The RunOptions of every call (HOME, TMPDIR, state home, no signals).
  RunOptions BaseRunOptions() const;
  Result<RunOutput> Run(const std::string& cwd, const std::vector<std::string>& argv,
                        std::optional<size_t> max_output);

  std::string key_;
  std::string home_;
  std::string tmpdir_;
  Level level_ = Level::kNone;
  Guarantees guarantees_;
  SetState* set_;  // owns this executor
  std::unique_ptr<State> state_;
};

class ExecutorSet {
 public:
  static Result<std::unique_ptr<ExecutorSet>> Create(ExecutorPolicy policy, ExecutorSetOptions options = {});
  ExecutorSet(const ExecutorSet&) = delete;
  ExecutorSet& operator=(const ExecutorSet&) = delete;
  ~ExecutorSet();  // Close()

  // The executor of `key` (memoised; a closed one is replaced by a new one).
  // A new key beyond max_executors open ones: kExecutorLimit. The pointer
  // stays valid until the set is destroyed.
  Result<Executor*> For(const std::string& key);
  // The scratch directory holding the executors' HOME and TMPDIR.
  const std::string& scratch_path() const;
  // The workspace every executor's calls run in (canonical), or "" with none.
  const std::string& workspace() const;

  void Close();
  bool closed() const;

 private:
  explicit ExecutorSet(std::shared_ptr<SetState> state) : state_(std::move(state)) {}
  std::shared_ptr<SetState> state_;
};

}  // namespace corral::executor
