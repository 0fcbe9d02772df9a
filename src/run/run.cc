#include "run/run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/mutant.h"
#include "kernel/cgroup.h"
#include "policy/tmpfs_size.h"
#include "confine/plan.h"
#include "exec/denials.h"
#include "confine/env.h"
#include "base/exit_codes.h"
#include "run/program.h"
#include "exec/spawn.h"
#include "state/state_dir.h"
#include "repair/sweep_journal.h"
#include "exec/pty_relay.h"
#include "exec/stdio_modes.h"
#include "exec/terminal_state.h"
#include "run/egress.h"
#include "overlay/changes.h"
#include "overlay/overlay_run.h"
#include "overlay/snapshot.h"

extern char** environ;

namespace corral {
namespace {

AuditEvent SpawnedEvent(const Policy& policy, const Plan& plan, const std::vector<std::string>& argv) {
  int read = 0, write = 0, exec = 0;
  for (const PathGrant& grant : policy.grants()) {
    read += Has(grant.access, Access::kRead);
    write += Has(grant.access, Access::kWrite);
    exec += Has(grant.access, Access::kExec);
  }
  // The program's name and the argument count, never the arguments: a
  // secret the caller's shell expanded into them must not reach the trail.
  AuditEvent event("spawned");
  event.Set("policy", policy.fingerprint())
      .Set("program", argv.empty() ? std::string() : argv[0])
      .Set("argc", static_cast<int>(argv.size()))
      .Set("readable", read)
      .Set("writable", write)
      .Set("executable", exec)
      .Set("network", policy.network_name())
      .Set("env", static_cast<int>(DefaultEnvAllowlist().size() + policy.env_allow().size()))
      .Set("pinned", policy.pin_sha256().has_value())
      .Set("timeout", policy.timeout() ? static_cast<int64_t>(policy.timeout()->count()) : int64_t{0})
      .Set("mode", ModeName(policy.mode()))
      .Set("level", LevelName(plan.level()))
      .Set("rung", RungsText(plan.rungs()))
      .Set("guarantees", plan.provided().Names())
      .Set("dropped", plan.dropped());
  if (MutantActive(Mutant::kAuditArgs)) event.Set("argv", argv);
  return event;
}

// Whether the run made its overlay or stacks on a pending one: a stacked-on
// run is never removed because this run failed to start.
enum class OverlayOwned { kNew, kStackedOn };
// How the command's writes were kept from the real tree: an overlayfs, or
// (--best-effort, the kernel refused overlayfs) a copied snapshot.
enum class OverlayMode { kOverlayfs, kSnapshot };

int64_t NowNs() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

// Reads what an overlay run changed, records the baseline and the
// `overlay` record, and returns the summary.
// A stacked run (`--overlay-on`) keeps the baseline its run had: a path
// that run changed is compared with the real tree as it was when that run
// ended, so an edit the user made between the runs stays a conflict.
std::string FinishOverlay(const AuditTrail& audit, OverlayRun& run, int64_t started_ns, OverlayOwned owned,
                          OverlayMode mode, Result<void> written) {
  ChangeSet shown;  // every root's changes, an --overlay-root's named by its absolute path
  for (size_t i = 0; i < run.roots().size() && written.ok(); ++i) {
    Result<UniqueFd> upper = run.Upper(i);
    Result<UniqueFd> root = upper.ok() ? run.OpenRoot(i) : Result<UniqueFd>(upper.error());
    Result<ChangeSet> changes = root.ok() ? ScanChanges(upper->get(), root->get(), started_ns)
                                          : Result<ChangeSet>(root.error());
    if (changes.ok() && owned == OverlayOwned::kStackedOn && !MutantActive(Mutant::kOverlayStackBaseline)) {
      Result<std::string> earlier = run.ReadBaseline(i);
      Result<void> kept = earlier.ok() ? AttachBaseline(*earlier, *changes) : Result<void>(earlier.error());
      if (!kept.ok()) changes = std::move(kept).error();
    }
    written = changes.ok() ? run.WriteBaseline(SerializeBaseline(*changes), i) : Result<void>(changes.error());
    if (!written.ok()) break;
    shown.upper_bytes += changes->upper_bytes;
    for (size_t c = 0; c < changes->changes.size(); ++c) {
      Change change = changes->changes[c];
      if (i > 0) {
        change.path = run.roots()[i].path + "/" + change.path;
        if (!change.renamed_from.empty()) change.renamed_from = run.roots()[i].path + "/" + change.renamed_from;
      }
      shown.changes.push_back(std::move(change));
      shown.baseline.push_back(changes->baseline[c]);
    }
  }
  AuditEvent event("overlay");
  event.Set("overlay_run", run.id()).Set("root", run.root());
  if (run.roots().size() > 1) {
    std::vector<std::string> roots;
    for (const OverlayRoot& root : run.roots()) roots.push_back(root.path);
    event.Set("roots", roots);
  }
  if (owned == OverlayOwned::kStackedOn) event.Set("stacked", true);
  event.Set("mode", mode == OverlayMode::kSnapshot ? "snapshot" : "overlayfs");
  const std::string said = mode == OverlayMode::kSnapshot
                               ? "corral: overlay run " + run.id() +
                                     ": the kernel refused overlayfs; --best-effort ran the command on a copied "
                                     "snapshot (the real tree was not written)\n"
                               : std::string();
  if (!written.ok()) {
    event.Set("error", written.error().ToString());
    audit.Record(event);
    return said + "corral: overlay run " + run.id() + ": cannot read its changes: " + written.error().ToString() +
           "; apply will refuse them (`corral discard " + run.id() + "` drops them)\n";
  }
  int counts[5] = {};
  for (const Change& change : shown.changes) ++counts[static_cast<int>(change.kind)];
  event.Set("upper_bytes", static_cast<int64_t>(shown.upper_bytes))
      .Set("changes", static_cast<int>(shown.changes.size()))
      .Set("added", counts[static_cast<int>(ChangeKind::kAdded)])
      .Set("modified", counts[static_cast<int>(ChangeKind::kModified)])
      .Set("deleted", counts[static_cast<int>(ChangeKind::kDeleted)]);
  audit.Record(event);
  // Nothing to review: nothing is kept.
  if (shown.changes.empty() && run.Remove().ok()) {
    return said + "corral: overlay run " + run.id() + ": no changes; nothing was kept\n";
  }
  return said + RenderSummary(run.id(), shown);
}

// --overlay --best-effort after the kernel refused overlayfs (`refusal`):
// copies each tree the run overlays into its layer directory
// (overlay/snapshot.h) and returns `options` binding the copies instead.
Result<CompileOptions> PrepareSnapshots(const Policy& policy, const OverlayRun& run, CompileOptions options,
                                        const Error& refusal, std::vector<Snapshot>& taken) {
  for (size_t i = 0; i < run.roots().size(); ++i) {
    CORRAL_ASSIGN_OR_RETURN(UniqueFd layer, run.LayerDir(i));
    CORRAL_ASSIGN_OR_RETURN(UniqueFd real, run.OpenRoot(i));
    const std::string& tree = run.roots()[i].path;
    std::vector<std::string> masked;  // relative to the tree
    for (const MaskedPath& mask : policy.masks()) {
      if (mask.path.size() > tree.size() + 1 && IsWithin(mask.path, tree)) {
        masked.push_back(mask.path.substr(tree == "/" ? 1 : tree.size() + 1));
      }
    }
    Result<Snapshot> copy = Snapshot::Take(real.get(), layer.get(), masked, DefaultSnapshotLimits());
    if (!copy.ok()) {
      Error failed = std::move(copy).error();
      if (failed.kind() == ErrorKind::kUnsupported) return failed;  // the limit, named
      return Error(ErrorKind::kUnsupported, "--overlay --best-effort: the kernel refused overlayfs, and the copied "
                                            "snapshot of " + tree + " failed: " + failed.ToString() +
                                                ". The command was not run.");
    }
    for (const auto& [relative, id] : copy->placeholders()) {
      options.snapshot_pins[(tree == "/" ? std::string() : tree) + "/" + relative] = id;
    }
    options.snapshots.push_back(
        PinnedPath{run.LayerPath(i) + "/" + kSnapshotDir, copy->id(), FileType::kDirectory});
    taken.push_back(std::move(copy).value());
  }
  options.snapshot_reason = std::string(ChildStageName(ChildStage::kOverlay)) + ": " +
                            std::strerror(refusal.error_number());
  return options;
}

// corral's state directory for this run: the caller's, when it opened it
// already (and it was not removed since), else opened (and made) here.
Result<StateDir> OpenStateDir(const RunOptions& options, const Policy& policy) {
  if (options.state_dir != nullptr && options.state_dir->valid()) {
    Result<StateDir> pinned = options.state_dir->Duplicate();
    if (pinned.ok() || pinned.error().code() != kStateDirUnavailable) return pinned;
  }
  return options.state_home ? StateDir::OpenBelow(*options.state_home, StateDir::Create::kYes)
                            : StateDir::Open(policy.home(), StateDir::Create::kYes);
}

// `--overlay-on RUN`: the pending run `id`, locked (refused at once when a
// run, an apply or a discard holds it), and only when it overlays this
// run's workspace (the same path and the same (dev, inode)).
Result<OverlayRun> OpenStackedOn(const StateDir& state, const std::string& id, const PinnedPath& workspace,
                                 const std::vector<PinnedPath>& extra_roots) {
  CORRAL_ASSIGN_OR_RETURN(OverlayRun run, OverlayRun::Open(state, id, OverlayRun::Wait::kNo));
  if ((run.root() != workspace.path || run.root_id().dev != workspace.id.dev ||
       run.root_id().ino != workspace.id.ino) &&
      !MutantActive(Mutant::kOverlayStackWorkspace)) {
    return Error(ErrorKind::kUsage, "--overlay-on " + id + ": that run overlays the workspace " + run.root() +
                                        ", not " + workspace.path + ". The command was not run.")
        .WithCode(kOverlayUnknown);
  }
  // The same --overlay-root trees, in the same order: each upper goes on
  // over the tree it was made over.
  bool same_roots = run.roots().size() == extra_roots.size() + 1;
  for (size_t i = 0; same_roots && i < extra_roots.size(); ++i) {
    const OverlayRoot& kept = run.roots()[i + 1];
    same_roots = kept.path == extra_roots[i].path && kept.id.dev == extra_roots[i].id.dev &&
                 kept.id.ino == extra_roots[i].id.ino;
  }
  if (!same_roots) {
    std::string kept;
    for (size_t i = 1; i < run.roots().size(); ++i) kept += " --overlay-root " + run.roots()[i].path;
    return Error(ErrorKind::kUsage, "--overlay-on " + id + ": that run overlays other --overlay-root trees (" +
                                        (kept.empty() ? std::string("none") : kept.substr(1)) +
                                        "); stack with the same ones. The command was not run.")
        .WithCode(kOverlayUnknown);
  }
  // A run corral did not see end has no baseline: its changes are all
  // conflicts at apply, and a stacked run must not give them one.
  CORRAL_ASSIGN_OR_RETURN(std::string baseline, run.ReadBaseline());
  if (baseline.empty()) {
    return Error(ErrorKind::kPolicy, "--overlay-on " + id +
                                         ": that run never finished (corral was killed during it), so its changes "
                                         "cannot be checked against the real tree; `corral discard " + id +
                                         "` drops it. The command was not run.");
  }
  return run;
}

// RunOptions::env_set: each entry replaces the variable of its name.
void SetEnvironment(std::vector<std::string>& env, const std::vector<std::string>& set) {
  for (const std::string& entry : set) {
    std::string prefix = entry.substr(0, entry.find('=') + 1);
    std::erase_if(env, [&](const std::string& e) { return e.compare(0, prefix.size(), prefix) == 0; });
    env.push_back(entry);
  }
}

// Once armed, puts the calling thread's signal mask back when it goes,
// unless released.
class MaskBack {
 public:
  MaskBack() = default;
  MaskBack(const MaskBack&) = delete;
  MaskBack& operator=(const MaskBack&) = delete;
  ~MaskBack() {
    if (armed_) ::pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
  }
  void Arm(const sigset_t& mask) {
    mask_ = mask;
    armed_ = true;
  }
  void Release() { armed_ = false; }

 private:
  sigset_t mask_ = {};
  bool armed_ = false;
};

RunResult Failed(const AuditTrail& audit, const Policy& policy, Error error) {
  audit.Record(FailedEvent(error, policy.fingerprint()));
  RunResult result;
  result.source = RunResult::Source::kCorral;
  result.exit_status = ExitCodeFor(error.kind());
  result.error = std::move(error);
  return result;
}

// The warm path's refusals of a call before anything ran, which a caller
// may take as "run it cold" (WarmRefusal::kRunCold).
bool IsWarmRefusal(const std::string& code) {
  return code == "warm_busy" || code == "warm_lost" || code == "warm_closed" || code == "warm_too_large" ||
         code == "tty_unsupported" || code == "warm_unsupported";
}

// What a RunWatcher ends or signals the command through (RunControl).
class WatcherControl final : public RunControl {
 public:
  explicit WatcherControl(SandboxProcess* process) : process_(process) {}
  Result<void> Kill() override { return process_->KillConcurrently(); }
  Result<void> Forward(int signal) override { return process_->Forward(signal); }

 private:
  SandboxProcess* process_;
};

}  // namespace

AuditEvent ProtectedEvent(const SweepFinding& finding) {
  AuditEvent event("protected");
  event.Set("path", finding.path).Set("action", finding.what).Set("outcome", OutcomeName(finding.outcome));
  if (!finding.moved_to.empty()) event.Set("moved_to", finding.moved_to);
  if (!finding.error.empty()) event.Set("error", finding.error);
  if (!finding.detail.empty()) event.Set("detail", finding.detail);
  return event;
}

// Which limit ended or hampered the command, where corral can know: the
// signal RLIMIT_CPU and RLIMIT_FSIZE send, and the cgroup's counters. A
// refused allocation, fork or open (RLIMIT_AS, RLIMIT_NPROC, RLIMIT_NOFILE)
// is only an error inside the command, never seen from here.
std::optional<LimitHit> LimitHitBy(const ResourceLimits& limits, const SupervisedExit& outcome,
                                   const CgroupEvents& events) {
  const bool signaled = outcome.kind == SupervisedExit::Kind::kSignaled;
  if (signaled && outcome.signal == SIGXCPU && limits.cpu_seconds) {
    return LimitHit{"cpu_seconds", "the command used its " + std::to_string(*limits.cpu_seconds) +
                                       " CPU seconds (--max-cpu-seconds): SIGXCPU ended it"};
  }
  if (signaled && outcome.signal == SIGXFSZ && limits.file_size_bytes) {
    return LimitHit{"file_size", "the command wrote past " + TmpfsSizeText(*limits.file_size_bytes) +
                                     " in one file (--max-file-size): SIGXFSZ ended it"};
  }
  if (events.oom_kills > 0 && limits.memory_bytes) {
    return LimitHit{"memory", "the sandbox reached " + TmpfsSizeText(*limits.memory_bytes) +
                                  " (--max-memory, memory.max): the kernel killed " +
                                  std::to_string(events.oom_kills) + " of its processes"};
  }
  if (events.pids_max > 0 && limits.procs) {
    return LimitHit{"procs", "the sandbox reached " + std::to_string(*limits.procs) +
                                 " processes (--max-procs, pids.max): " + std::to_string(events.pids_max) +
                                 " forks were refused"};
  }
  return std::nullopt;
}

RunResult RunConfined(gate::AdmittedRun run, const RunOptions& options, const HostSupport& host) {
  const AuditTrail& audit = run.trail();
  const Policy& policy = run.policy();
  const std::vector<std::string>& argv = run.argv();
  if (argv.empty() || argv[0].empty()) return Failed(audit, policy, Error(ErrorKind::kUsage, "empty command"));
  const char* const* env = options.environ != nullptr ? options.environ : environ;

  Command command;
  command.argv = argv;
  command.nursery = options.nursery;
  std::optional<Result<Plan>> plan;
  // The warm sandbox the command runs in, until the warm path refuses it:
  // under WarmRefusal::kRunCold the command then runs cold (true), else
  // the run fails with the refusal (false).
  WarmSandbox* warm = options.warm;
  std::optional<std::string> cold_because;
  auto refuse_warm = [&](const std::string& code) {
    if (options.warm_refusal != WarmRefusal::kRunCold) return false;
    warm = nullptr;
    cold_because = code;
    return true;
  };
  // Interactive (stdin and stdout a terminal): the command gets a pty of its
  // own, relayed (exec/pty_relay.h), and never the caller's terminal.
  // (Not when the caller hands the command descriptors of its own.)
  if (options.pty) {
    command.pty = options.pty;
  } else if (options.stdin_fd < 0 && options.stdout_fd < 0) {
    command.pty = CommandPtyFor();
  }
  // A warm call has no pty of its own (exec/warm_sandbox.h).
  if (warm != nullptr && command.pty) (void)refuse_warm("tty_unsupported");
  // Read-only runs relay stderr, to recognise a denied write (see denials.h);
  // not an interactive one, where the person reads the kernel's message on
  // the pty (a second stream onto a raw terminal would lose its line ends).
  UniqueFd relay_read, relay_write;
  DenialScanner scanner;
  if (!policy.unconfined() && policy.mode() == Mode::kReadOnly && !command.pty) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      return Failed(audit, policy, Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno));
    }
    relay_read.Reset(fds[0]);
    relay_write.Reset(fds[1]);
    command.stderr_fd = relay_write.get();
  }
  command.stdin_fd = options.stdin_fd;
  command.stdout_fd = options.stdout_fd;
  if (!relay_write) command.stderr_fd = options.stderr_fd;
  // Under --allow-host and --allow-local, corral's proxy serves the
  // listeners the sandbox passes out, on its own thread, for as long as the
  // sandbox lives; it is serving before the command's exec, and a proxy that
  // cannot start stops the run before the command exists.
  EgressReporter egress(audit);
  std::unique_ptr<EgressProxy> proxy;
  // Under --allow-host the name server gives allowed names synthetic
  // addresses and the proxy maps them back (net/synthetic_names.h).
  command.synthetic_names = SyntheticNamesFor(policy);
  command.serve_egress = [&policy, &egress, &proxy, &command,
                           network = run.network_approver()](EgressListeners listeners) -> Result<void> {
    CORRAL_ASSIGN_OR_RETURN(proxy,
                            StartEgressProxy(policy, std::move(listeners), egress, command.synthetic_names, network));
    return {};
  };
  // The caller's signal mask, put back when the run returns: declared
  // before the sandbox and its cgroup, so only after init is reaped and the
  // cgroup removed (a pending SIGPIPE or signal takes effect then).
  MaskBack mask_back;
  // The run's own cgroup (--max-procs, --max-memory where the host offers
  // one): declared before the sandbox, so it is removed after init is reaped.
  std::optional<RunCgroup> cgroup;
  Result<SandboxProcess> process = Error(ErrorKind::kInternal, "not spawned");
  SweepJournal journal;  // the sweep's write-ahead record, once written
  TerminalState terminal;  // the caller's terminal, put back after a confined run
  StdioModes stdio_modes;  // the modes of the caller's files on the command's stdio, put back after it
  StateDir state;  // corral's state directory, when it could be made
  std::optional<OverlayRun> overlay;  // --overlay: the run's upper, locked while the run lives
  std::vector<Snapshot> snapshots;    // --overlay --best-effort without overlayfs: each tree's copy
  int64_t overlay_started_ns = 0;
  OverlayOwned overlay_owned = OverlayOwned::kNew;
  SweepRoots sweep_roots;  // the writable roots, opened before the command runs
  std::vector<StagedGitConfig> staged_configs;  // the repositories' configs the run writes copies of
  sigset_t previous;
  if (policy.unconfined() && policy.limits().any()) {
    return Failed(audit, policy,
                  Error(ErrorKind::kUsage, "resource limits (" + policy.limits().Describe() +
                                               "): danger-full-access runs the command with no sandbox, so nothing "
                                               "would hold them. The command was not run."));
  }
  if (policy.unconfined()) {
    // danger-full-access: acknowledged when the policy was built; no safety net.
    for (const char* const* entry = env; *entry != nullptr; ++entry) command.env.emplace_back(*entry);
    SetEnvironment(command.env, options.env_set);
    command.cwd = policy.host().cwd;
    if (options.before_spawn) options.before_spawn();
    audit.Record(AuditEvent("spawned")
                     .Set("policy", policy.fingerprint())
                     .Set("program", argv[0])
                     .Set("mode", ModeName(policy.mode()))
                     .Set("level", LevelName(Level::kNone))
                     .Set("unconfined", true)
                     .Set("acknowledged", "danger-full-access"));
    if (command.pty) terminal = TerminalState::Save();  // raw mode for the relay, put back after
    previous = BlockForwardedSignals();
    process = SpawnUnconfined(command);
  } else {
    // Descriptors 0-2 pass into the sandbox as they are; a directory (or an
    // O_PATH descriptor) there would be a way around the mount view.
    const int command_stdio[3] = {options.stdin_fd >= 0 ? options.stdin_fd : 0,
                                  options.stdout_fd >= 0 ? options.stdout_fd : 1,
                                  options.stderr_fd >= 0 ? options.stderr_fd : 2};
    for (int fd : command_stdio) {
      struct stat st;
      int flags = ::fcntl(fd, F_GETFL);
      bool unsafe = flags >= 0 && ((flags & O_PATH) != 0 || (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)));
      if (unsafe && !MutantActive(Mutant::kStdioCheck)) {
        return Failed(audit, policy,
                      Error(ErrorKind::kUsage, "descriptor " + std::to_string(fd) +
                                                   " is a directory or a path handle; the command would reach "
                                                   "outside its grants through it, so nothing was run"));
      }
    }
    // --overlay: the run's upper and work directories, in the state
    // directory, made before the plan that mounts them.
    if (warm != nullptr && policy.write_view() == WriteView::kOverlay) {
      if (!refuse_warm("warm_unsupported")) return Failed(audit, policy,
                    Error(ErrorKind::kUnsupported, "--overlay runs cold: a warm sandbox has one view for every call. "
                                                   "The command was not run.")
                        .WithCode("warm_unsupported"));
    }
    if (policy.write_view() == WriteView::kOverlay && !policy.workspace()) {
      return Failed(audit, policy,
                    Error(ErrorKind::kUsage, "--overlay: the run has no workspace to overlay. The command was not run."));
    }
    // The caller's last word (RunOptions::before_spawn), said once: before
    // an overlay run is made (a run ended there must leave none on disk),
    // else once the plan is accepted.
    bool said = false;
    auto before_spawn = [&] {
      if (said || !options.before_spawn) return;
      said = true;
      options.before_spawn();
    };
    if (policy.write_view() == WriteView::kOverlay) {
      before_spawn();
      Result<StateDir> for_overlay = OpenStateDir(options, policy);
      if (!for_overlay.ok()) {
        return Failed(audit, policy,
                      Error(ErrorKind::kUnsupported, "--overlay: the upper layer lives in corral's state directory: " +
                                                         for_overlay.error().ToString() + ". The command was not run."));
      }
      std::vector<OverlayRoot> extra_roots;
      for (const PinnedPath& root : policy.overlay_roots()) extra_roots.push_back(OverlayRoot{root.path, root.id});
      Result<OverlayRun> made =
          options.overlay_on
              ? OpenStackedOn(*for_overlay, *options.overlay_on, *policy.workspace(), policy.overlay_roots())
              : OverlayRun::Create(*for_overlay, audit.run_id(), policy.workspace()->path, policy.workspace()->id,
                                   extra_roots);
      if (!made.ok()) return Failed(audit, policy, std::move(made).error());
      overlay.emplace(std::move(made).value());
      overlay_owned = options.overlay_on ? OverlayOwned::kStackedOn : OverlayOwned::kNew;
      overlay_started_ns = NowNs();
    }
    CompileOptions compile_options;
    if (overlay) {
      compile_options.overlay_dir = overlay->path();
      for (size_t i = 1; i < overlay->roots().size(); ++i) {
        compile_options.overlay_root_dirs.push_back(overlay->LayerPath(i));
      }
    }
    // A warm call's plan is only compared with the sandbox's: it takes the
    // sandbox's /etc view as given instead of making one it never uses.
    CompileOptions compared = compile_options;
    if (warm != nullptr) compared.warm_etc_view = warm->etc_view();
    plan = Compile(policy, host, compared);
    // A call that runs cold after all needs a plan it can spawn.
    auto plan_to_spawn = [&]() -> Result<void> {
      if ((*plan)->use() == PlanUse::kSpawn || MutantActive(Mutant::kWarmPlanRecompile)) return {};
      plan = Compile(policy, host, compile_options);
      if (!plan->ok()) return plan->error();
      return {};
    };
    if (!plan->ok()) {
      if (overlay && overlay_owned == OverlayOwned::kNew) (void)overlay->Remove();
      return Failed(audit, policy, std::move(*plan).error());
    }
    // A warm sandbox runs only what its own plan would: a policy (or a host)
    // that changed since it started needs a new one.
    if (warm != nullptr && (*plan)->Fingerprint() != warm->fingerprint() &&
        !MutantActive(Mutant::kWarmFingerprint) && !refuse_warm("policy_changed")) {
      return Failed(audit, policy,
                    Error(ErrorKind::kPolicy, "policy changed: the sandbox this run would need differs from the warm "
                                              "sandbox's; start a new executor. The command was not run.")
                        .WithCode("policy_changed"));
    }
    // A warm sandbox is never in a run's cgroup (WarmSandbox::Start refuses
    // such a plan); should one be asked to run such a call, it runs nothing.
    if (warm != nullptr && (*plan)->cgroup().wanted() && !refuse_warm("warm_unsupported")) {
      return Failed(audit, policy,
                    Error(ErrorKind::kUnsupported, "limits: --max-procs and --max-memory with a cgroup run cold. The "
                                                   "command was not run.")
                        .WithCode("warm_unsupported"));
    }
    if (warm == nullptr) {
      Result<void> spawnable = plan_to_spawn();
      if (!spawnable.ok()) return Failed(audit, policy, std::move(spawnable).error());
    }
    if (policy.pin_sha256()) {
      Result<PinnedProgram> program = PreparePinnedProgram(policy, argv[0]);
      if (!program.ok()) return Failed(audit, policy, std::move(program).error());
      command.program = std::move(program->fd);
    }
    command.env = ScrubEnvironment(policy, env);
    SetEnvironment(command.env, options.env_set);
    before_spawn();
    // The journal and the quarantine live there: one a symlink or another
    // user could redirect is refused before anything runs (state_dir.h).
    Result<StateDir> opened = OpenStateDir(options, policy);
    if (!opened.ok() && opened.error().code() == kStateDirUnsafe && !MutantActive(Mutant::kStateDirChecks)) {
      return Failed(audit, policy, std::move(opened).error());
    }
    // Written ahead, so a sweep corral does not live to do happens at the
    // next run (sweep_journal.h). Without it only that safety net is lost.
    Result<SweepJournal> begun = opened.ok() ? SweepJournal::Begin(*opened, audit.run_id(), policy.protected_paths(),
                                                                   options.journal_slot)
                                             : Result<SweepJournal>(std::move(opened).error());
    // A run's overlay made above, removed when the run is refused here.
    auto refused = [&](Error error) {
      if (overlay && overlay_owned == OverlayOwned::kNew) (void)overlay->Remove();
      return Failed(audit, policy, std::move(error));
    };
    if (begun.ok()) {
      journal = std::move(begun).value();
    } else if (opened.ok() && begun.error().code() != kStateDirUnavailable &&
               policy.enforcement() != Enforcement::kBestEffort && !MutantActive(Mutant::kJournalOptional)) {
      // A state directory that is there but takes no record (a full disk, a
      // record too large): the recovery of a corral killed before its sweep
      // is a guarantee, so the run is refused. (No state directory that can
      // be written, a read-only home, goes on without one, as documented.)
      return refused(Error(ErrorKind::kIo, "the sweep journal: " + begun.error().ToString() +
                                               ". Without it, what the command left at a protected path would stay "
                                               "if corral were killed before its sweep. The command was not run "
                                               "(--best-effort runs it without the journal, and the trail says so)."));
    } else {
      audit.Record(AuditEvent("protected").Set("action", "journal").Set("error", begun.error().ToString()));
    }
    if (opened.ok()) state = std::move(opened).value();
    // The modes of the caller's files on stdio, put back after the run;
    // overlapping runs share the first one through the state directory.
    // The view's devices are opened anew only in a mount view: a plan that
    // may fall back to none (below) holds the caller's nodes of them too.
    const bool view_for_sure =
        (*plan)->mechanisms().namespaces && (*plan)->fallback() != Fallback::kWithoutNamespaces;
    Result<StdioModes> saved_modes = StdioModes::Save(
        command_stdio, view_for_sure ? StdioModes::ViewDevices::kReopened : StdioModes::ViewDevices::kGiven,
        [&state]() -> Result<UniqueFd> {
          return state.valid() ? state.Subdir("stdio", StateDir::Create::kYes) : Result<UniqueFd>(UniqueFd());
        });
    if (!saved_modes.ok()) return refused(std::move(saved_modes).error());
    stdio_modes = std::move(saved_modes).value();
    if (!stdio_modes.note().empty()) {
      audit.Record(AuditEvent("protected").Set("action", "stdio_modes").Set("error", stdio_modes.note()));
    }
    // The sweep works in the roots as they are now, wherever they move.
    sweep_roots = OpenSweepRoots(policy.protected_paths());
    // Each repository's config is shown as the run's own copy, whose safe
    // keys land after the run (repair/git_config_stage.h); without a view
    // it stays read-only, and an unchanged copy lands nothing. Under
    // --overlay it stays read-only too: a change landed after the run would
    // bypass the review the overlay is for.
    if (state.valid() && (*plan)->mechanisms().namespaces && !overlay && warm == nullptr) {
      std::vector<std::string> notes;
      staged_configs = StageGitConfigs(policy.protected_paths(), state, audit.run_id(), &notes);
      for (const StagedGitConfig& config : staged_configs) {
        (void)(*plan)->StageFile(config.path, config.config_id, config.stage, config.view_dir);
      }
      for (const std::string& note : notes) {
        audit.Record(AuditEvent("git_config").Set("action", "read-only").Set("detail", note));
      }
    }
    // The cgroup the whole sandbox starts in (kernel/cgroup.h): one the
    // host offered but corral cannot make fails the run, closed.
    if ((*plan)->cgroup().wanted()) {
      const PlanCgroup& wanted = (*plan)->cgroup();
      Result<RunCgroup> made = RunCgroup::Create(wanted.parent, wanted.limits, wanted.enable);
      if (!made.ok()) {
        if (overlay && overlay_owned == OverlayOwned::kNew) (void)overlay->Remove();
        return Failed(audit, policy,
                      Error(ErrorKind::kUnsupported, "limits: " + made.error().ToString() + ". The command was not run."));
      }
      cgroup.emplace(std::move(made).value());
      command.cgroup_fd = cgroup->fd();
    }
    terminal = TerminalState::Save();
    previous = BlockForwardedSignals();
    // The spawned record goes before the command runs: once it runs, it may
    // stop the terminal (tcflow(TCOOFF)) that the record is written to.
    if (!audit.discards()) {
      AuditEvent spawned_event = SpawnedEvent(policy, **plan, argv);
      if (warm != nullptr) spawned_event.Set("warm", true);
      audit.Record(spawned_event);
    }
    if (warm != nullptr) {
      command.cwd = (*plan)->cwd();
      process = warm->Run(command);
      // Refused before anything ran (busy with another call, lost, closed,
      // too large): cold, with a spawned record of its own.
      if (!process.ok() && IsWarmRefusal(process.error().code()) && refuse_warm(process.error().code())) {
        Result<void> spawnable = plan_to_spawn();
        if (spawnable.ok()) audit.Record(SpawnedEvent(policy, **plan, argv).Set("cold_because", *cold_because));
        process = spawnable.ok() ? Spawn(**plan, command) : Result<SandboxProcess>(std::move(spawnable).error());
      }
    } else {
      process = Spawn(**plan, command);
    }
    // A spawn refused by the kernel, retried on a weaker rung the policy
    // accepts. Nothing ran: the weaker attempt gets its own spawned record.
    auto retry_with = [&](const CompileOptions& weaker) {
      Result<Plan> fallback = Compile(policy, host, weaker);
      if (!fallback.ok()) {
        process = std::move(fallback).error();
        return;
      }
      audit.Record(AuditEvent("degraded").Set("dropped", fallback->dropped()).Set("detail", process.error().ToString()));
      plan = std::move(fallback);
      audit.Record(SpawnedEvent(policy, **plan, argv));
      process = Spawn(**plan, command);
    };
    if (warm == nullptr && !process.ok() && process.error().kind() == ErrorKind::kNamespace &&
        (*plan)->fallback() == Fallback::kWithoutNamespaces) {
      retry_with(CompileOptions{
          .without_namespaces = true, .overlay_dir = {}, .masked_proc = false, .overlay_root_dirs = {}, .snapshots = {}, .snapshot_pins = {}, .snapshot_reason = {}, .warm_etc_view = {}});
    }
    // The kernel (or the state directory's filesystem) refused overlayfs:
    // under --best-effort, a copied snapshot of each tree instead
    // (overlay/snapshot.h). Not for a stacked run: RUN's upper would have
    // to be folded into the copy.
    if (options.warm == nullptr && !process.ok() && OverlayRefused(process.error()) && overlay &&
        overlay_owned == OverlayOwned::kNew && policy.enforcement() == Enforcement::kBestEffort) {
      Result<CompileOptions> copied = PrepareSnapshots(policy, *overlay, compile_options, process.error(), snapshots);
      if (copied.ok()) {
        compile_options = std::move(copied).value();
        retry_with(compile_options);
      } else {
        snapshots.clear();
        process = std::move(copied).error();
      }
    }
    // A fresh /proc refused (the host masks parts of its own): under
    // --best-effort or --accept-rung masked-proc, the masked-proc rung's
    // empty one.
    // (Accepting another rung by name does not accept this one.)
    const bool masked_proc_allowed = policy.enforcement() == Enforcement::kBestEffort
                                         ? (*plan)->fallback() != Fallback::kNone
                                         : AcceptsRung(policy, Rung::kMaskedProc) ||
                                               MutantActive(Mutant::kPlanFailClosed);
    if (warm == nullptr && !process.ok() && ProcMountRefused(process.error()) && masked_proc_allowed) {
      CompileOptions retry = compile_options;  // the overlay, if any, stays
      retry.masked_proc = true;
      retry_with(retry);
    }
  }

  relay_write.Reset();  // the sandbox holds the only write end now
  Result<SupervisedExit> outcome = Error(ErrorKind::kInternal, "not supervised");
  std::optional<PtyRelay> pty;
  if (process.ok() && process->pty_master() >= 0 && options.pty) {
    if (options.watcher != nullptr) options.watcher->PtyOpened(process->pty_master());
  } else if (process.ok() && process->pty_master() >= 0) {
    pty.emplace(process->pty_master());
    pty->EnterRawMode();
  }
  if (process.ok()) {
    SuperviseOptions supervise;
    if (pty) supervise.pty = &*pty;
    supervise.forward_signals = options.forward_signals;
    if (policy.timeout()) supervise.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(*policy.timeout());
    if (relay_read) {
      supervise.relay =
          StreamRelay{relay_read.get(), options.stderr_fd >= 0 ? options.stderr_fd : STDERR_FILENO, &scanner};
    }
    supervise.terminal = &terminal;
    WatcherControl control(&*process);
    if (options.watcher != nullptr) {
      options.watcher->Controls(&control);
      options.watcher->Started(process->pidfd());
    }
    outcome = Supervise(*process, supervise);
    if (options.watcher != nullptr) options.watcher->Ended();
    // Init is reaped last, when RunConfined returns: the kernel frees its
    // namespaces meanwhile, while corral does the post-run work below.
    if (MutantActive(Mutant::kReapLast)) process->Release();
  }
  // What the command set on the caller's terminal does not outlive it, and
  // is put back before corral writes there: a terminal the command stopped
  // (tcflow(TCOOFF)) would block the audit record on stderr for good.
  terminal.Restore();
  stdio_modes.Restore();
  // From here on a write to a closed stderr (the `exited` record under
  // --audit -, a blocked connection's line, the sweep's findings) fails
  // with EPIPE instead of ending corral before its sweep and the reap of
  // init; the caller's mask, and with it a pending SIGPIPE, comes back when
  // the run returns (or, under RunOptions::reap_later, once init is reaped).
  sigset_t pipe;
  ::sigemptyset(&pipe);
  ::sigaddset(&pipe, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  mask_back.Arm(previous);

  const bool spawned = process.ok();
  RunResult result;
  if (spawned && plan && plan->ok()) {
    result.degraded = (*plan)->dropped();
    result.rung = RungsText((*plan)->rungs());
  }
  if (!spawned) {
    result = Failed(audit, policy, std::move(process).error());
  } else if (!outcome.ok()) {
    result = Failed(audit, policy, std::move(outcome).error());
  } else if (outcome->kind == SupervisedExit::Kind::kTimedOut) {
    bool whole_tree = plan && plan->ok() && (*plan)->mechanisms().namespaces;
    result = Failed(audit, policy,
                    Error(ErrorKind::kTimeout, "timeout: the command ran past --timeout " +
                                                   std::to_string(policy.timeout()->count()) + "s; " +
                                                   (whole_tree ? "the whole process tree was killed"
                                                               : "it was killed (without a PID namespace, processes "
                                                                 "it started may survive)")));
  } else if (outcome->kind == SupervisedExit::Kind::kLost) {
    result = Failed(audit, policy, Error(ErrorKind::kInternal, "the sandbox ended without a status"));
  } else {
    result.source = RunResult::Source::kCommand;
    result.outcome = *outcome;
    result.exit_status = outcome->ExitStatus();
    result.limit_hit = LimitHitBy(policy.limits(), *outcome, cgroup ? cgroup->Events() : CgroupEvents{});
    if (result.exit_status != 0 && scanner.matched()) result.denial = *scanner.matched();
    if (!audit.discards()) {
      AuditEvent exited("exited");
      exited.Set("source", "command").Set("code", result.exit_status);
      if (outcome->kind == SupervisedExit::Kind::kSignaled) exited.Set("signal", outcome->signal);
      if (result.limit_hit) exited.Set("limit", result.limit_hit->name).Set("limit_detail", result.limit_hit->detail);
      if (result.denial) exited.Set("denied", ModeName(policy.mode()));
      audit.Record(exited);
    }
  }
  result.cold_because = cold_because;
  if (spawned && process->dns() != nullptr) {
    result.lookups = process->dns()->Summary(policy.egress().active()
                                                 ? "--network none: only the names --allow-host allows resolve "
                                                   "inside"
                                                 : "--network none");
  }
  if (proxy) {
    proxy->Stop();
    egress.Finish();
  }
  // A forwarded signal that arrived after the command ended was meant for the
  // command, not for corral: drop it before restoring the mask.
  sigset_t forwarded = ForwardedSignals();
  ::sigaddset(&forwarded, SIGCHLD);
  ::sigaddset(&forwarded, SIGWINCH);
  struct timespec zero = {0, 0};
  while (::sigtimedwait(&forwarded, nullptr, &zero) > 0) {
  }
  // Init handed to the caller (RunOptions::reap_later) keeps the mask as it
  // is until it is reaped: a signal now, or a report written to a closed
  // pipe, takes effect after the reap, so it cannot leave init to the
  // caller's reaper. Otherwise the mask comes back when the run returns,
  // after the sweep. A run's cgroup is removed only once init is reaped,
  // here.
  const bool reap_later =
      options.reap_later != nullptr && spawned && !cgroup && !process->unconfined() && process->emptied();

  // danger-full-access has no safety net, and no sweep either.
  if (policy.unconfined()) return result;
  if (overlay && !spawned) {
    // Nothing ran: nothing to review (a stacked-on run keeps what it had).
    if (overlay_owned == OverlayOwned::kNew) (void)overlay->Remove();
  } else if (overlay) {
    // A copied snapshot becomes the upper overlayfs would have written.
    Result<void> converted;
    for (size_t i = 0; i < snapshots.size() && converted.ok(); ++i) {
      Result<UniqueFd> layer = overlay->LayerDir(i);
      converted = layer.ok() ? snapshots[i].ToUpper(layer->get()) : Result<void>(layer.error());
    }
    result.overlay_summary =
        FinishOverlay(audit, *overlay, overlay_started_ns, overlay_owned,
                      snapshots.empty() ? OverlayMode::kOverlayfs : OverlayMode::kSnapshot, std::move(converted));
  }
  // Every process of the sandbox is gone now: undo what it put at protected
  // paths. A spawn that failed never ran the command (the exec is its last
  // step), so there is nothing to undo, and a refused grant that moved stays
  // a refusal of its own.
  if (spawned && !MutantActive(Mutant::kSweep)) {
    result.quarantined =
        SweepProtected(policy.protected_paths(), sweep_roots,
                       QuarantineHome{state.valid() ? state.fd() : -1, state.path()}, audit.run_id());
  }
  journal.Finish();
  // Then what the run changed in a repository's config: its safe keys only.
  if (spawned) result.git_configs = LandGitConfigs(staged_configs, state, audit.run_id());
  for (const GitConfigLanding& landing : result.git_configs) {
    AuditEvent event("git_config");
    event.Set("path", landing.path).Set("action", "land").Set("landed", landing.landed);
    if (!landing.refused.empty()) event.Set("refused", landing.refused);
    if (!landing.conflicts.empty()) event.Set("conflicts", landing.conflicts);
    if (!landing.error.empty()) event.Set("error", landing.error);
    if (!landing.quarantined.empty()) event.Set("moved_to", landing.quarantined);
    audit.Record(event);
  }
  for (const std::string& note : policy.protected_paths().notes) {
    audit.Record(AuditEvent("protected").Set("action", "ignored").Set("detail", note));
  }
  for (const SweepFinding& finding : result.quarantined) audit.Record(ProtectedEvent(finding));
  // What the run left at a protected path runs outside the sandbox later.
  if (AnyLeftInPlace(result.quarantined) && !MutantActive(Mutant::kSweepLeftExit)) {
    result.source = RunResult::Source::kCorral;
    result.exit_status = kExitProtectedPathLeft;
  }
  // Every process of the sandbox is gone (init reported after killing
  // them); init itself may still be exiting. A caller that ends right after
  // the run reaps it last, while the kernel frees the namespaces.
  if (reap_later) {
    mask_back.Release();
    options.reap_later->Keep(std::move(*process), previous);
  }
  return result;
}

void ExitingInit::Keep(SandboxProcess init, const sigset_t& mask) {
  init_.emplace(std::move(init));
  mask_ = mask;
}

ExitingInit::~ExitingInit() {
  if (!init_) return;
  init_.reset();  // reaps it
  ::pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
}

Result<std::unique_ptr<WarmSandbox>> StartWarm(const Policy& policy, const HostSupport& host) {
  if (policy.unconfined()) {
    return Error(ErrorKind::kUnsupported, "danger-full-access has no sandbox to keep warm").WithCode("warm_unsupported");
  }
  if (policy.write_view() == WriteView::kOverlay) {
    return Error(ErrorKind::kUnsupported, "--overlay runs cold: a warm sandbox has one view for every call")
        .WithCode("warm_unsupported");
  }
  CORRAL_ASSIGN_OR_RETURN(Plan plan, Compile(policy, host));
  return WarmSandbox::Start(plan);
}

}  // namespace corral
