#include "executor/executor.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <nlohmann/json.hpp>

#include "base/mutant.h"
#include "confine/describe.h"
#include "confine/host.h"
#include "executor/call.h"
#include "executor/capture.h"
#include "executor/process.h"
#include "executor/scratch.h"
#include "executor/set_state.h"
#include "policy/path.h"
#include "run/run.h"

namespace corral::executor {
namespace {

// Answers every question "no": the default when the set was given no approver.
class NoApprover : public Approver {
 public:
  Result<ApprovalAnswer> Request(const ApprovalRequest&) override { return ApprovalAnswer::kDeny; }
};

Error SetClosedError() { return ExecutorError(ExecutorErrc::kSetClosed, "the executor set was closed; nothing runs"); }

Error ExecutorClosedError(const std::string& key) {
  return ExecutorError(ExecutorErrc::kExecutorClosed, "the executor \"" + key + "\" was closed; nothing runs");
}

bool IsBareKey(const std::string& key) {
  if (key.empty()) return false;
  for (char c : key) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  }
  return true;
}

// A resolved request is move-only (a session holds its log open); an
// executor's has no session, so each call gets a copy of every other field.
ResolvedRequest Copy(const ResolvedRequest& from) {
  ResolvedRequest to;
  to.spec = from.spec;
  to.resolution = from.resolution;
  to.approval = from.approval;
  to.approval_source = from.approval_source;
  to.preset = from.preset;
  to.gated = from.gated;
  to.mode_ceiling = from.mode_ceiling;
  to.danger_acknowledged_by = from.danger_acknowledged_by;
  to.config_files = from.config_files;
  to.profile_fingerprint = from.profile_fingerprint;
  to.backend = from.backend;
  to.audit_trail = from.audit_trail;
  return to;
}

}  // namespace

Result<std::string> ConfigJsonToToml(std::string_view json) {
  nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded() || !parsed.is_object()) {
    return ExecutorError(ExecutorErrc::kPolicy, "the policy JSON is not an object of tables ({\"sandbox\": {...}})");
  }
  std::string toml;
  for (const auto& [table, body] : parsed.items()) {
    if (!IsBareKey(table) || !body.is_object()) {
      return ExecutorError(ExecutorErrc::kPolicy, "policy JSON: \"" + table + "\" is not a table of the config schema");
    }
    toml += "[" + table + "]\n";
    for (const auto& [key, value] : body.items()) {
      if (!IsBareKey(key) || value.is_object() || value.is_null()) {
        return ExecutorError(ExecutorErrc::kPolicy, "policy JSON: " + table + "." + key + " is not a key of the schema");
      }
      if (value.is_array()) {
        for (const auto& element : value) {
          if (element.is_object() || element.is_array() || element.is_null()) {
            return ExecutorError(ExecutorErrc::kPolicy, "policy JSON: " + table + "." + key + " holds a non-scalar");
          }
        }
      }
      try {
        // A JSON scalar or array of scalars, as JSON writes it, is the same
        // value in TOML; the TOML reader then checks it as a config file's.
        toml += key + " = " + value.dump(-1, ' ', false, nlohmann::json::error_handler_t::strict) + "\n";
      } catch (const nlohmann::json::exception&) {
        return ExecutorError(ExecutorErrc::kPolicy, "policy JSON: " + table + "." + key + " is not UTF-8");
      }
    }
  }
  return toml;
}

// ---- the set

Result<std::unique_ptr<ExecutorSet>> ExecutorSet::Create(ExecutorPolicy policy, ExecutorSetOptions options) {
  if (options.max_executors <= 0) {
    return ExecutorError(ExecutorErrc::kInvalidArgument, "max_executors must be at least 1");
  }
  auto state = std::make_shared<SetState>();
  CORRAL_ASSIGN_OR_RETURN(ScratchDir scratch, ScratchDir::Create(options.scratch_root));
  state->scratch.emplace(std::move(scratch));
  // Whatever fails from here removes what was made.
  struct Undo {
    SetState* state;
    ~Undo() {
      if (state != nullptr) (void)state->scratch->Remove();
    }
  } undo{state.get()};
  if (policy.config_toml) {
    Result<std::string> file = state->scratch->WritePrivateFile("policy.toml", *policy.config_toml);
    if (!file.ok()) return Reclassify(ExecutorErrc::kScratchUnsafe, file.error());
    policy.request.user_config = *file;
    policy.request.no_config = false;
  }
  if (policy.request.session_id) {
    return ExecutorError(ExecutorErrc::kInvalidArgument,
                         "an executor set has no session: its calls are a harness's, each admitted on its own");
  }
  Result<ResolvedRequest> resolved = ResolveRequest(policy.request, policy.host);
  if (!resolved.ok()) return Reclassify(ExecutorErrc::kPolicy, resolved.error());
  // The workspace is fixed now: a call's directory moves the command, never
  // the workspace the policy grants.
  if (!resolved->spec.no_workspace) {
    std::string root = resolved->spec.workspace.value_or(
        resolved->resolution.policy.workspace_root.value_or(policy.host.cwd));
    UniqueFd fd(::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return Reclassify(ExecutorErrc::kPolicy, Error::FromErrno(ErrorKind::kPolicy, "cannot open the workspace " + root, "open", errno));
    CORRAL_ASSIGN_OR_RETURN(state->workspace, PathOfDescriptor(fd.get()));
    state->workspace_fd = std::move(fd);
    resolved->spec.workspace = state->workspace;
  }
  state->resolved.emplace(std::move(resolved).value());
  state->host = std::move(policy.host);
  state->options = std::move(options);
  if (Result<std::unique_ptr<ObservedThread>> observer = ObservedThread::Start(); observer.ok()) {
    state->observer = std::move(observer).value();
  } else {
    state->no_observer = observer.error().ToString();
  }
  state->default_approver = std::make_unique<NoApprover>();
  state->approver = state->options.approver != nullptr ? state->options.approver : state->default_approver.get();
  undo.state = nullptr;
  return std::unique_ptr<ExecutorSet>(new ExecutorSet(std::move(state)));
}

ExecutorSet::~ExecutorSet() { Close(); }

const std::string& ExecutorSet::scratch_path() const { return state_->scratch->path(); }
const std::string& ExecutorSet::workspace() const { return state_->workspace; }
bool ExecutorSet::closed() const { return state_->tracker.closed(); }

Result<Executor*> ExecutorSet::For(const std::string& key) {
  std::lock_guard lock(state_->mutex);
  if (state_->tracker.closed()) return SetClosedError();
  auto found = state_->by_key.find(key);
  if (found != state_->by_key.end() && !found->second->closed()) return found->second;
  int open = 0;
  for (const auto& [name, executor] : state_->by_key) open += executor->closed() ? 0 : 1;
  if (open >= state_->options.max_executors) {
    return ExecutorError(ExecutorErrc::kExecutorLimit, "the set already has " + std::to_string(open) +
                                                           " open executors, its max_executors; close one first");
  }
  auto executor_state = std::make_unique<Executor::State>();
  executor_state->index = state_->next_index++;
  CORRAL_ASSIGN_OR_RETURN(ExecutorDirs dirs, state_->scratch->MakeExecutorDirs(executor_state->index));
  executor_state->resolved.emplace(Copy(*state_->resolved));
  executor_state->resolved->spec.scratch_dirs = {dirs.home, dirs.tmp};
  executor_state->policy_cache = std::make_unique<PolicyCache>(state_->observer.get(), state_->no_observer);
  std::unique_ptr<Executor> executor(new Executor(key, state_.get(), std::move(executor_state)));
  executor->home_ = dirs.home;
  executor->tmpdir_ = dirs.tmp;
  // What this host enforces for the policy: known now, and a host that
  // cannot set it up fails here, before any call.
  Result<Policy> built = BuildPolicy(state_->host, executor->state_->resolved->spec);
  if (!built.ok()) {
    (void)state_->scratch->RemoveExecutor(executor->state_->index);
    return Reclassify(ExecutorErrc::kPolicy, built.error());
  }
  nlohmann::json report = {{"key", key}, {"home", dirs.home}, {"tmpdir", dirs.tmp}, {"policy", DescribePolicy(*built)}};
  if (built->unconfined()) {
    executor->level_ = Level::kNone;
    executor->state_->warm.Off("danger-full-access has no sandbox to keep warm");
    report["calls"] = "cold: danger-full-access has no sandbox to keep warm";
  } else {
    Result<Plan> plan = Compile(*built, ProbeHost());
    if (!plan.ok()) {
      (void)state_->scratch->RemoveExecutor(executor->state_->index);
      return Reclassify(ExecutorErrc::kSandboxUnavailable, plan.error());
    }
    executor->level_ = plan->level();
    executor->guarantees_ = plan->provided();
    report["plan"] = DescribePlan(*plan);
    // The calls run in one warm sandbox of the executor's, started at its
    // first call, under this same plan (its fingerprint is compared per call).
    Result<void> warm = WarmSandbox::Supports(*plan);
    if (!warm.ok()) executor->state_->warm.Off(warm.error().message());
    report["calls"] = warm.ok() ? std::string("warm: one sandbox of this executor's, started at its first call; "
                                              "a call with a pty, or while a prepared process holds it, runs cold")
                                : "cold: " + warm.error().message();
  }
  executor->state_->report = report.dump(2);
  Executor* made = executor.get();
  state_->all.push_back(std::move(executor));
  state_->by_key[key] = made;
  return made;
}

void ExecutorSet::Close() {
  state_->tracker.CloseAndKill();
  state_->tracker.WaitIdle();
  std::lock_guard lock(state_->mutex);
  for (const auto& executor : state_->all) {
    executor->state_->tracker.CloseAndKill();
    executor->state_->StopWarm();
    std::lock_guard serial(executor->state_->run_mutex);
    executor->state_->journal_slot.Release();
    executor->state_->capture.Stop();
  }
  if (state_->scratch) (void)state_->scratch->Remove();
}

// ---- one executor

Executor::Executor(std::string key, SetState* set, std::unique_ptr<State> state)
    : key_(std::move(key)), set_(set), state_(std::move(state)) {}

Executor::~Executor() = default;

bool Executor::closed() const { return state_->tracker.closed() || set_->tracker.closed(); }

std::string Executor::Report() const { return state_->report; }

Executor::PolicyDerivations Executor::policy_derivations() const { return state_->policy_cache->counts(); }

void Executor::Close() {
  state_->tracker.CloseAndKill();
  state_->tracker.WaitIdle();
  state_->StopWarm();
  {
    std::lock_guard serial(state_->run_mutex);
    state_->journal_slot.Release();
    state_->capture.Stop();
  }
  std::lock_guard lock(set_->mutex);
  (void)set_->scratch->RemoveExecutor(state_->index);
}

Result<std::string> SetState::ResolveCwd(const std::string& cwd) const {
  if (!workspace_fd) {
    return ExecutorError(ExecutorErrc::kCwdOutsideWorkspace, "the policy has no workspace for a call to run in");
  }
  std::string relative;
  if (cwd.empty() || cwd == workspace) {
    relative = ".";
  } else if (cwd[0] != '/') {
    relative = cwd;
  } else if (IsWithin(cwd, workspace)) {
    relative = cwd.substr(workspace.size() + 1);
  } else if (MutantActive(Mutant::kExecutorCwd)) {
    return cwd;
  } else {
    return ExecutorError(ExecutorErrc::kCwdOutsideWorkspace, "the directory " + cwd + " is not inside the workspace " + workspace);
  }
  struct open_how how = {};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  if (MutantActive(Mutant::kExecutorCwd)) how.resolve = 0;
  UniqueFd dir(static_cast<int>(::syscall(SYS_openat2, workspace_fd.get(), relative.c_str(), &how, sizeof how)));
  if (!dir) {
    int err = errno;
    if (err == EXDEV || err == ELOOP) {
      return ExecutorError(ExecutorErrc::kCwdOutsideWorkspace,
                           "the directory " + cwd + " leads out of the workspace " + workspace + " (a symlink or ..)");
    }
    return Reclassify(ExecutorErrc::kInvalidArgument,
                      Error::FromErrno(ErrorKind::kUsage, "the directory " + cwd + " cannot be used", "openat2", err));
  }
  CORRAL_ASSIGN_OR_RETURN(std::string canonical, PathOfDescriptor(dir.get()));
  if (canonical != workspace && !IsWithin(canonical, workspace) && !MutantActive(Mutant::kExecutorCwd)) {
    return ExecutorError(ExecutorErrc::kCwdOutsideWorkspace, "the directory " + cwd + " is not inside the workspace");
  }
  return canonical;
}

const StateDir* SetState::PinnedStateDir(const std::string& home) {
  std::lock_guard lock(state_dir_mutex);
  if (state_dir) return state_dir_home == home ? &*state_dir : nullptr;
  Result<StateDir> opened = options.state_home ? StateDir::OpenBelow(*options.state_home, StateDir::Create::kYes)
                                               : StateDir::Open(home, StateDir::Create::kYes);
  if (!opened.ok()) return nullptr;
  state_dir.emplace(std::move(opened).value());
  state_dir_home = home;
  return &*state_dir;
}

Result<gate::AdmittedRun> Executor::Admit(const std::string& cwd, const std::vector<std::string>& argv) const {
  if (argv.empty() || argv[0].empty()) return ExecutorError(ExecutorErrc::kInvalidArgument, "an empty command");
  CORRAL_ASSIGN_OR_RETURN(std::string dir, set_->ResolveCwd(cwd));
  gate::AdmitRequest request;
  request.argv = argv;
  ResolvedRequest resolved = Copy(*state_->resolved);
  if (MutantActive(Mutant::kExecutorGate)) resolved.approval = ApprovalPolicy::kAllowAll;
  request.policy = std::move(resolved);
  request.host = set_->host;
  request.host.cwd = dir;
  request.trail = set_->options.trail;
  request.deriver = state_->policy_cache.get();
  Result<gate::AdmittedRun> admitted = gate::Admit(std::move(request), *set_->approver);
  if (!admitted.ok()) {
    return Reclassify(admitted.error().kind() == ErrorKind::kDenied ? ExecutorErrc::kRefusedByGate
                                                                    : ExecutorErrc::kPolicy,
                      admitted.error());
  }
  return admitted;
}

RunOptions Executor::BaseRunOptions() const {
  RunOptions options;
  options.forward_signals = false;
  options.state_home = set_->options.state_home;
  options.state_dir = set_->PinnedStateDir(set_->host.home);
  options.env_set = {"HOME=" + home_, "TMPDIR=" + tmpdir_};
  // A call the warm sandbox refuses (a pty, busy with a prepared process,
  // lost, a changed plan) runs cold.
  options.warm_refusal = WarmRefusal::kRunCold;
  return options;
}

void Executor::State::StopWarm() {
  if (MutantActive(Mutant::kExecutorWarmReap)) return warm.Off("the executor was closed");
  warm.Close("the executor was closed");
}

// Why a run corral ended gives no output: its typed error.
Error RunError(const RunResult& result) {
  if (!result.error) return ExecutorError(ExecutorErrc::kInternal, "the sandbox ended without a status");
  if (result.error->kind() == ErrorKind::kTimeout) return Reclassify(ExecutorErrc::kDeadline, *result.error);
  return Reclassify(ExecutorErrcOf(*result.error), *result.error);
}

CommandEnd CommandEndOf(const RunResult& result) {
  CommandEnd end;
  end.exit_code = result.outcome.ExitStatus();
  if (result.outcome.kind == SupervisedExit::Kind::kSignaled) end.signal = result.outcome.signal;
  for (const SweepFinding& finding : result.quarantined) {
    if (finding.outcome == SweepFinding::Outcome::kLeftInPlace) end.protected_left.push_back(finding.path);
  }
  return end;
}

Result<RunOutput> Executor::Run(const std::string& cwd, const std::vector<std::string>& argv,
                                std::optional<size_t> max_output) {
  std::lock_guard serial(state_->run_mutex);
  LiveCall call;
  CORRAL_TRY(TrackedCall::EnterBoth(set_->tracker, state_->tracker, &call, SetClosedError(), ExecutorClosedError(key_)));
  struct Leave {
    SetState* set;
    State* state;
    LiveCall* call;
    ~Leave() {
      call->MarkFinished();
      state->tracker.Leave(call);
      set->tracker.Leave(call);
    }
  } leave{set_, state_.get(), &call};
  CORRAL_ASSIGN_OR_RETURN(gate::AdmittedRun admitted, Admit(cwd, argv));
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno);
  UniqueFd out_read(out[0]), out_write(out[1]);
  if (::pipe2(err, O_CLOEXEC) != 0) return Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno);
  UniqueFd err_read(err[0]), err_write(err[1]);
  if (!state_->null) state_->null.Reset(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!state_->null) return Error::FromErrno(ErrorKind::kInternal, "cannot open /dev/null", "open", errno);
  state_->capture.Begin(out_read.get(), err_read.get(), max_output, [&call] { call.Kill(EndedBy::kOutputLimit); });
  // Whatever way this call ends, its reading ends with it.
  struct EndCapture {
    CaptureThread* capture;
    ~EndCapture() { (void)capture->End(); }
  } end_capture{&state_->capture};
  RunOptions options = BaseRunOptions();
  options.stdin_fd = state_->null.get();
  options.stdout_fd = out_write.get();
  options.stderr_fd = err_write.get();
  options.watcher = &call;
  options.journal_slot = &state_->journal_slot;
  std::shared_ptr<WarmSandbox> warm = state_->warm.For(admitted.policy());
  options.warm = warm.get();
  RunResult result = RunConfined(std::move(admitted), options);
  state_->warm.After(warm, result.cold_because);
  out_write.Reset();
  err_write.Reset();
  CapturedOutput captured = state_->capture.End();
  RunOutput output;
  output.stdout_bytes = std::move(captured.out);
  output.stderr_bytes = std::move(captured.err);
  switch (call.ended_by()) {
    case EndedBy::kCancelled:
      return ExecutorError(ExecutorErrc::kCancelled, "the call was cancelled (Close); its whole tree was killed");
    case EndedBy::kOutputLimit:
      output.output_limit = true;
      output.signal = SIGKILL;
      output.exit_code = 128 + SIGKILL;
      return output;
    default: break;
  }
  if (result.source == RunResult::Source::kCorral && result.error) return RunError(result);
  CommandEnd end = CommandEndOf(result);
  output.exit_code = end.exit_code;
  output.signal = end.signal;
  output.protected_left = std::move(end.protected_left);
  return output;
}

Result<RunOutput> Executor::RunArgv(const std::string& cwd, const std::vector<std::string>& argv) {
  return Run(cwd, argv, std::nullopt);
}

Result<RunOutput> Executor::RunCommand(const std::string& cwd, const std::string& shell) {
  return Run(cwd, {"/bin/sh", "-c", shell}, std::nullopt);
}

Result<RunOutput> Executor::RunArgvLimited(const std::string& cwd, const std::vector<std::string>& argv,
                                           size_t max_output) {
  return Run(cwd, argv, max_output);
}

Result<std::unique_ptr<Process>> Executor::PrepareProcess(ProcessOptions options) {
  if (set_->tracker.closed()) return SetClosedError();
  if (state_->tracker.closed()) return ExecutorClosedError(key_);
  if (options.argv.empty() || options.argv[0].empty()) {
    return ExecutorError(ExecutorErrc::kInvalidArgument, "an empty command");
  }
  for (const auto& [name, value] : options.env) {
    bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                 std::all_of(name.begin(), name.end(),
                             [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
    if (!valid || value.find('\0') != std::string::npos) {
      return ExecutorError(ExecutorErrc::kInvalidArgument, "not an environment variable: \"" + name + "\"");
    }
    if (name == "HOME" || name == "TMPDIR") {
      return ExecutorError(ExecutorErrc::kInvalidArgument, name + " is the executor's own and cannot be replaced");
    }
  }
  return std::unique_ptr<Process>(new Process(this, set_->shared_from_this(), std::move(options)));
}

}  // namespace corral::executor
