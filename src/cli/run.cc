// `corral run [policy flags] -- CMD [ARGS...]`: the main job.
//
// Resolve the policy (config, preset, profile, session, flags), pass the
// gate (gate::Admit: approval, escalation, the Gated dimensions' grants, on
// the terminal or the --approval-fd channel), then run the admitted command
// confined and relay its exit code. Every decision lands in the audit trail
// (audit/audit.h says where); stderr gets corral's own lines only for what
// must be acted on: a refusal, the sweep's findings, a degraded run, a
// readable credential store.
#include <sys/stat.h>
#include <unistd.h>

#include <signal.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <fstream>
#include <iterator>
#include <optional>

#include "audit/audit.h"
#include "base/background.h"
#include "base/blocked_signals.h"
#include "base/mutant.h"
#include "cli/commands.h"
#include "exec/nursery.h"
#include "confine/detect.h"
#include "base/exit_codes.h"
#include "run/run.h"
#include "state/listing_cache_file.h"
#include "state/state_dir.h"
#include "repair/sweep_journal.h"
#include "gate/admit.h"
#include "gate/escalation.h"
#include "policy/unix_sockets.h"
#include "policy/policy_file.h"
#include "policy/search_path.h"

namespace corral::cli {
namespace {

// A signal that ends corral before its spawn must not leave the nursery's
// helper (exec/nursery.h) to the caller's reaper: while a nursery is
// guarded, SIGINT, SIGTERM, SIGHUP and SIGQUIT (each one not ignored) first
// dismiss and reap it, then end corral as they would have; so does
// SIGPIPE, from a write to a closed stderr. During the run the forwarded
// signals are blocked and passed to the command, as before.
std::atomic<Nursery*> g_nursery_to_dismiss{nullptr};

extern "C" void DismissNurseryThenEnd(int signal) {
  if (Nursery* nursery = g_nursery_to_dismiss.exchange(nullptr)) nursery->Dismiss();
  ::raise(signal);  // SA_RESETHAND: the default action, once this returns
}

class NurseryGuard {
 public:
  explicit NurseryGuard(Nursery* nursery) {
    if (nursery == nullptr) return;
    g_nursery_to_dismiss = nursery;
    struct sigaction dismiss = {};
    dismiss.sa_handler = DismissNurseryThenEnd;
    dismiss.sa_flags = SA_RESETHAND;
    ::sigfillset(&dismiss.sa_mask);
    for (size_t i = 0; i < std::size(kEnding); ++i) {
      struct sigaction old = {};
      installed_[i] = ::sigaction(kEnding[i], nullptr, &old) == 0 && old.sa_handler == SIG_DFL &&
                      ::sigaction(kEnding[i], &dismiss, nullptr) == 0;
    }
  }
  NurseryGuard(const NurseryGuard&) = delete;
  NurseryGuard& operator=(const NurseryGuard&) = delete;
  // Dismisses the nursery (signals held meanwhile), then puts the default
  // actions back: no signal finds the helper unguarded.
  ~NurseryGuard() {
    BlockedSignals held(BlockedSignals::kAll);
    if (Nursery* nursery = g_nursery_to_dismiss.exchange(nullptr)) nursery->Dismiss();
    for (size_t i = 0; i < std::size(kEnding); ++i) {
      if (installed_[i]) ::signal(kEnding[i], SIG_DFL);
    }
  }

 private:
  static constexpr int kEnding[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};
  bool installed_[std::size(kEnding)] = {};
};

// What discovery left unprotected, and what the sweep did after the run.
void PrintFindings(const std::vector<SweepFinding>& findings) {
  for (const SweepFinding& finding : findings) {
    if (finding.what == "unreachable") {
      PrintError(finding.error + ", so corral checked none of the protected paths in it (" + finding.detail +
                 "); if that directory still exists elsewhere, inspect them there before you use git or an editor "
                 "in it");
      continue;
    }
    std::string line =
        finding.what == "recreated"
            ? finding.path + ": a new file or directory took the place of a protected path during the "
                             "run (another run in this workspace may have moved the original away); "
        : finding.what == "unchecked"
            ? finding.path + ": a directory on the way kept moving while corral checked this protected path "
                             "(another run in this workspace renaming it), so corral cannot tell what is there; "
            : finding.path + ": the command " + finding.what + " a protected " +
                  (finding.what == "created" ? "path" : "symlink") + "; ";
    if (finding.outcome == SweepFinding::Outcome::kAdmitted) {
      PrintError(finding.path + ": the command created this repository; corral checked it and kept it (" +
                 finding.detail + ": " + finding.moved_to + ")");
      continue;
    }
    switch (finding.outcome) {
      case SweepFinding::Outcome::kAdmitted: break;
      case SweepFinding::Outcome::kQuarantined: line += "moved to " + finding.moved_to; break;
      case SweepFinding::Outcome::kNone:
        line += finding.error.empty() ? "it was restored" : "it could not be restored";
        break;
      case SweepFinding::Outcome::kLeftInPlace:
        line += "corral could NOT remove it, and it may run outside the sandbox (a git hook, a shell, an editor): "
                "inspect and delete it yourself before you use git or an editor there";
        break;
    }
    if ((finding.what == "replaced" || finding.what == "removed") &&
        finding.outcome != SweepFinding::Outcome::kLeftInPlace) {
      line += finding.outcome == SweepFinding::Outcome::kNone ? "" : ", and the symlink restored";
    }
    if (!finding.detail.empty()) line += " (" + finding.detail + ")";
    if (!finding.error.empty()) line += " (" + finding.error + ")";
    PrintError(line);
  }
}

void ReportProtected(const Policy& policy, const RunResult& result) {
  if (policy.unconfined()) return;  // danger-full-access: nothing is protected, nothing swept
  for (const std::string& note : policy.protected_paths().notes) PrintError("protected paths: " + note);
  PrintFindings(result.quarantined);
  // What the command changed in a repository's config and did not land.
  for (const GitConfigLanding& landing : result.git_configs) {
    auto joined = [](const std::vector<std::string>& list) {
      std::string text;
      for (const std::string& item : list) text += (text.empty() ? "" : "; ") + item;
      return text;
    };
    std::string copy = landing.quarantined.empty() ? "" : " (the run's copy: " + landing.quarantined + ")";
    if (!landing.refused.empty()) {
      PrintError(landing.path + ": not written, since git could run code it names outside the sandbox: " +
                 joined(landing.refused) + copy);
    }
    if (!landing.conflicts.empty()) {
      PrintError(landing.path + ": not written, since it changed outside this run meanwhile: " +
                 joined(landing.conflicts) + copy);
    }
    if (!landing.error.empty()) PrintError(landing.path + ": " + landing.error + copy);
  }
}

void RecoverInterrupted(const AuditTrail& trail, const StateDir& state) {
  for (const RecoveredSweep& sweep : RecoverInterruptedSweeps(state)) {
    if (!sweep.error.empty()) {
      PrintError("sweep journal: " + sweep.error + " (kept; remove it once you have looked)");
      trail.Record(AuditEvent("protected").Set("action", "recover").Set("error", sweep.error));
      continue;
    }
    PrintError("run " + sweep.run +
               " ended before corral could sweep its protected paths (corral was killed); swept now, along with "
               "anything made there since:");
    PrintFindings(sweep.findings);
    for (const SweepFinding& finding : sweep.findings) {
      trail.Record(ProtectedEvent(finding).Set("recovered_from", sweep.run));
    }
  }
}

// --allow-credential is loud: one stderr line and one audit record per
// credential store the command can read. So is --allow-unix: one record
// per socket, and a stderr line for one that hands out host control.
void AnnounceCredentials(const Policy& policy, const AuditTrail& trail) {
  for (const std::string& path : policy.CredentialGrants()) {
    PrintError("--allow-credential " + path + ": the command can read this credential store");
    trail.Record(AuditEvent("credential").Set("path", path).Set("access", "read"));
  }
  for (const std::string& path : policy.UnixSockets()) {
    AuditEvent event("unix");
    event.Set("path", path);
    if (std::optional<std::string_view> what = HostControlSocket(path)) {
      PrintError("--allow-unix " + path + ": this socket hands the command control of the host: " + std::string(*what));
      event.Set("host_control", *what);
    }
    trail.Record(event);
  }
}

// The home the default trail's state directory is found from, when the host
// context could not be captured.
std::string HomeOrEnv(const Result<HostContext>& host) {
  if (host.ok()) return host->home;
  const char* home = ::getenv("HOME");
  return home != nullptr ? home : "";
}

// A refused --audit file is not written to: the refusal goes to stderr.
int RefuseTrail(const Error& error) {
  PrintError(error.ToString());
  return ExitCodeFor(error.kind());
}

int Refuse(const AuditTrail& trail, const Error& error) {
  trail.Record(FailedEvent(error));
  PrintError(error.ToString());
  return ExitCodeFor(error.kind());
}

Result<gate::PolicyFile> ReadPolicyFile(const std::string& file, const std::vector<std::string>& argv,
                                        const HostContext& here) {
  // The file is the policy: refuse one another user could have written.
  std::string dir = file.find('/') == std::string::npos ? "." : file.substr(0, file.rfind('/'));
  for (const std::string& path : {file, dir.empty() ? std::string("/") : dir}) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode) || st.st_uid != ::getuid() ||
        (st.st_mode & 022) != 0) {
      return Error(ErrorKind::kPolicy,
                   "--policy-file " + file + ": " + path + " must be yours, not a symlink, and writable by no one else");
    }
  }
  std::ifstream in(file);
  if (!in) return Error(ErrorKind::kUsage, "--policy-file " + file + ": cannot read it");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return gate::PolicyFile::Load(text, argv, here);
}

}  // namespace

// Where the trail goes: `chosen` (--audit, else the user config's
// audit.trail) when set, "-" meaning stderr; else corral's state directory.
// A state directory that cannot be made (a read-only home) leaves the
// trail on stderr, said in one line; an unsafe one is refused.
// `state` is the state directory as the caller opened it (made when
// missing), consulted only when nothing is chosen.
Result<AuditTrail> OpenTrail(const std::optional<std::string>& chosen, const Result<StateDir>& state) {
  if (chosen && *chosen == "-") return AuditTrail::ToStderr();
  if (chosen) return AuditTrail::ToFile(*chosen);
  if (!state.ok() && state.error().code() == kStateDirUnsafe) return state.error();
  if (!state.ok()) {
    PrintError("the audit trail goes to stderr: " + state.error().ToString() + " (pass --audit FILE to keep it)");
    return AuditTrail::ToStderr();
  }
  return AuditTrail::InDirectory(state->fd(), state->path());
}

Result<AuditTrail> OpenTrail(const std::optional<std::string>& chosen, const std::string& home) {
  if (chosen) return OpenTrail(chosen, Result<StateDir>(Error(ErrorKind::kIo, "not consulted")));
  return OpenTrail(chosen, StateDir::Open(home, StateDir::Create::kYes));
}

void RunCommand::Register(CLI::App& app) {
  flags.Register(app);
  app.add_option("--audit", audit,
                 "append the audit trail to FILE (absolute), or - for stderr (default: audit.trail from the user "
                 "config, else audit.jsonl in corral's state directory)")
      ->type_name("FILE");
  app.add_option("--policy-file", policy_file,
                 "enforce the compiled policy in FILE (as `corral wrap` writes it) instead of policy flags")
      ->type_name("FILE");
  app.add_option("--sandbox-permissions", sandbox_permissions,
                 "escalate this one call to MODE (workspace-write or danger-full-access); needs --justification "
                 "and an approval on the terminal")
      ->type_name("MODE");
  app.add_option("--justification", justification, "why the escalation is needed")->type_name("TEXT");
  app.add_option("--overlay-on", overlay_on,
                 "stack this run on the pending overlay run RUN (implies --overlay): it writes on in RUN's layer, "
                 "and `corral diff|apply RUN` then show and land both runs' changes")
      ->type_name("RUN")
      ->each([this](const std::string&) { flags.overlay = true; });
  approval.Register(app);
  approval.RegisterNetwork(app);
}

int RunCommand::RefuseUsage(const std::vector<std::string>& args, const Error& error) {
  std::optional<std::string> file;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--audit" && i + 1 < args.size()) file = args[i + 1];
    if (args[i].starts_with("--audit=")) file = args[i].substr(std::string_view("--audit=").size());
  }
  // The flags are not understood, so neither is the config: --audit when
  // it can be read from `args`, else the state directory's trail.
  AuditTrail trail = AuditTrail::Discard();
  if (!MutantActive(Mutant::kUsageRecord)) {
    Result<AuditTrail> opened = OpenTrail(file, HomeOrEnv(CaptureHostContext()));
    if (opened.ok()) trail = std::move(opened).value();
  }
  return Refuse(trail, error);
}

int RunCommand::Execute(std::vector<std::string> command) const {
  // The sandbox's init, reaped last of all (destroyed last): the kernel
  // frees its namespaces while corral writes its report below.
  ExitingInit exiting_init;
  // The sandbox's slowest namespaces, made on another core while the policy
  // is derived below; dismissed and reaped on every way out.
  // Signals wait while the helper is started and guarded, so none can end
  // corral between the two.
  std::optional<BlockedSignals> held(std::in_place, BlockedSignals::kAll);
  std::unique_ptr<Nursery> nursery = Nursery::Start();
  NurseryGuard dismiss_on_signal(nursery.get());
  held.reset();
  // Who answers the gate: made first, so a channel is close-on-exec at once.
  Result<std::unique_ptr<Approver>> approver = approval.MakeApprover();

  Result<HostContext> host = CaptureHostContext();
  // --audit, else the user config's audit.trail (only the user's: a
  // project file cannot move the trail), else the state directory. A user
  // config that cannot be read leaves the default; the run reports it.
  // The user config is read once, here, for the trail and the policy below
  // (ReadUserConfigOnce); one that cannot be read is refused there with the
  // error this read gave, not read again.
  std::optional<std::string> chosen = audit;
  std::optional<Result<RunRequest>> run_request;
  if (!policy_file) run_request.emplace(flags.ToRequest());
  if (host.ok() && run_request && run_request->ok()) {
    Status read = ReadUserConfigOnce(**run_request, *host);
    if (read.ok() && !chosen) {
      Result<std::optional<std::string>> configured = ConfiguredAuditTrail(**run_request, *host);
      if (configured.ok()) chosen = *configured;
    }
  }
  // The state directory is walked from "/" once a run: the trail, the
  // recovery and listings below and the run itself (RunOptions::state_dir)
  // share this descriptor. It is made here only when the trail goes there.
  Result<StateDir> state = StateDir::Open(HomeOrEnv(host), chosen ? StateDir::Create::kNo : StateDir::Create::kYes);
  Result<AuditTrail> opened = OpenTrail(chosen, state);
  if (!opened.ok()) return RefuseTrail(opened.error());
  AuditTrail trail = std::move(opened).value();
  if (!approver.ok()) return Refuse(trail, approver.error());
  if (!host.ok()) return Refuse(trail, host.error());
  // Before any policy looks at the tree: what runs whose corral was killed
  // before their sweep left at protected paths.
  // An unsafe state directory is refused by the run itself, before it starts.
  if (state.ok() && !MutantActive(Mutant::kSweepJournal)) RecoverInterrupted(trail, *state);
  // The root walk of /etc and the PATH comparison list through the
  // listings kept there (policy/listing_cache.h).
  std::optional<StateListingCache> listings;
  if (state.ok()) listings.emplace(*state);
  ScopedListingCache use_listings(listings ? &*listings : nullptr);

  gate::AdmitRequest request;
  request.argv = std::move(command);
  request.host = *host;
  request.trail = &trail;
  if (policy_file) {
    if (flags.Any() || sandbox_permissions || justification) {
      return Refuse(trail, Error(ErrorKind::kUsage, "--policy-file cannot be combined with policy flags"));
    }
    Result<gate::PolicyFile> compiled = ReadPolicyFile(*policy_file, request.argv, request.host);
    if (!compiled.ok()) return Refuse(trail, compiled.error());
    request.policy = std::move(compiled).value();
  } else {
    Result<ResolvedRequest> resolved =
        run_request->ok() ? ResolveRequest(**run_request, *host) : Result<ResolvedRequest>(run_request->error());
    if (!resolved.ok()) return Refuse(trail, resolved.error());
    // sandbox.backend: run is the native runner; it never quietly ignores another.
    if (Status runner = CheckRunnerBackend(resolved->backend); !runner.ok()) return Refuse(trail, runner.error());
    request.policy = std::move(resolved).value();
    request.sandbox_permissions = sandbox_permissions;
    request.justification = justification;
  }

  // Network approval on demand (gate/network_approval.h): the approver is
  // kept for the run's held connections, on the channel, or on the terminal
  // when the command does not have it. A command whose stdin, stdout or
  // stderr is the terminal could take the answer's keys or draw over the
  // question (and an interactive run's terminal is relayed to it in raw
  // mode): there nobody is asked, and a place no rule names is refused as
  // before; --approval-fd asks alongside any terminal.
  Result<std::chrono::milliseconds> network_timeout = approval.NetworkTimeout();
  if (!network_timeout.ok()) return Refuse(trail, network_timeout.error());
  request.network_approval_timeout = *network_timeout;
  const bool command_has_terminal =
      ::isatty(STDIN_FILENO) == 1 || ::isatty(STDOUT_FILENO) == 1 || ::isatty(STDERR_FILENO) == 1;
  if (approval.fd || !command_has_terminal) request.network_questions = gate::NetworkQuestions::kAskedDuringRun;

  // The gate asks on the terminal or the channel; it records its own
  // refusals. The channel is closed as soon as the gate has decided, unless
  // the run asks about its connections on it; the command never holds it
  // (it is close-on-exec, and the sandbox gets no descriptor but 0-2).
  Result<gate::AdmittedRun> admitted = gate::Admit(std::move(request), **approver);
  const bool keep_for_network = admitted.ok() && admitted->network_approver() != nullptr;
  if (!MutantActive(Mutant::kApprovalClose) && !keep_for_network) approver->reset();
  if (!admitted.ok()) {
    if (listings) listings->Save();
    PrintError(admitted.error().ToString());
    return ExitCodeFor(admitted.error().kind());
  }
  Policy policy = admitted->policy();  // for the report after the run
  std::string program = admitted->argv().empty() ? std::string() : admitted->argv()[0];
  AnnounceCredentials(policy, trail);
  // A program or PATH entry the sandbox resolves elsewhere: one line, with
  // the fix. Worked out on another core while this one compiles the plan,
  // and said before the run spawns anything (or after a run that never got
  // that far), while a signal or a closed stderr still ends corral with
  // nothing spawned.
  PathComparison path;
  Background compare_path([&path, &policy, &program] { path = ComparePath(policy, program); });
  bool warned = false;
  auto warn = [&] {
    if (warned) return;
    warned = true;
    compare_path.Wait();
    if (path.warning) PrintError("warning: " + *path.warning);
  };
  RunOptions options;
  options.overlay_on = overlay_on;
  if (state.ok()) options.state_dir = &*state;
  options.nursery = nursery.get();
  options.reap_later = &exiting_init;
  options.before_spawn = warn;
  RunResult result = RunConfined(std::move(admitted).value(), options);
  warn();
  if (listings) listings->Save();
  if (result.error && policy_file) {
    PrintError(result.error->ToString());
  } else if (result.error) {
    const Error& error = *result.error;
    if (error.kind() == ErrorKind::kNotFound) {
      PrintError(program + ": not found inside the sandbox (is it under a system tree, the workspace or an "
                           "--allow-exec grant?)");
    } else if (error.kind() == ErrorKind::kExec) {
      bool denied = error.error_number() == EACCES;
      PrintError(program + ": " + error.ToString() +
                 (denied ? " (is it an executable file, under the workspace, a system tree or an --allow-exec grant?)"
                         : ""));
    } else {
      PrintError(error.ToString());
    }
  }
  // --best-effort (or an accepted rung) went without something: the one
  // line a person must see.
  if (!result.degraded.empty()) {
    std::string dropped;
    for (const std::string& what : result.degraded) dropped += (dropped.empty() ? "" : "; ") + what;
    std::string why = policy.enforcement() == Enforcement::kBestEffort ? "--best-effort" : "--accept-rung";
    PrintError("degraded run (" + why + "): it ran without " + dropped + "; rung " + result.rung +
               " (docs/hosts.md)");
  }
  if (result.lookups) PrintError(*result.lookups);
  if (result.limit_hit) PrintError("limit: " + result.limit_hit->detail);
  if (result.overlay_summary) std::fputs(result.overlay_summary->c_str(), stderr);
  if (result.denial) {
    std::fprintf(stderr, "%s %s\n", DenialMarker(policy.mode()).c_str(), EscalationHint(policy.mode()).c_str());
  }
  ReportProtected(policy, result);
  return result.exit_status;
}

}  // namespace corral::cli
