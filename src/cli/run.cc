// `corral run [policy flags] -- CMD [ARGS...]`: the main job.
//
// Resolve the policy (config, preset, profile, session, flags), pass the
// approval gate, decide an escalation if one was asked for, admit each Gated
// dimension with a single-use grant, then run the command confined and relay
// its exit code. Every decision lands in the audit trail.
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fstream>
#include <iterator>

#include "audit/audit.h"
#include "base/mutant.h"
#include "cli/commands.h"
#include "confine/detect.h"
#include "exec/exit_codes.h"
#include "exec/run.h"
#include "exec/state_dir.h"
#include "exec/sweep_journal.h"
#include "gate/approval.h"
#include "gate/escalation.h"
#include "gate/grants.h"
#include "gate/tty_approver.h"
#include "policy/compiled.h"

namespace corral::cli {
namespace {

// corral exits right after the run: it need not wait while the kernel frees
// the emptied sandbox's namespaces.
RunOptions CliRunOptions() {
  RunOptions options;
  options.wait_for_teardown = false;
  return options;
}

// What discovery left unprotected, and what the sweep did after the run.
void PrintFindings(const std::vector<SweepFinding>& findings) {
  for (const SweepFinding& finding : findings) {
    std::string line =
        finding.what == "recreated"
            ? finding.path + ": a new file or directory took the place of a protected path during the "
                             "run (another run in this workspace may have moved the original away); "
        : finding.what == "unchecked"
            ? finding.path + ": a directory on the way kept moving while corral checked this protected path "
                             "(another run in this workspace renaming it), so corral cannot tell what is there; "
            : finding.path + ": the command " + finding.what + " a protected " +
                  (finding.what == "created" ? "path" : "symlink") + "; ";
    switch (finding.outcome) {
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
    if (!finding.error.empty()) line += " (" + finding.error + ")";
    PrintError(line);
  }
}

void ReportProtected(const Policy& policy, const RunResult& result) {
  if (policy.unconfined()) return;  // danger-full-access: nothing is protected, nothing swept
  for (const std::string& note : policy.protected_paths().notes) PrintError("protected paths: " + note);
  PrintFindings(result.quarantined);
}

void RecoverInterrupted(const AuditTrail& trail, const std::string& home) {
  // An unsafe state directory is refused by the run itself, before it starts.
  Result<StateDir> state = StateDir::Open(home, StateDir::Create::kNo);
  if (!state.ok()) return;
  for (const RecoveredSweep& sweep : RecoverInterruptedSweeps(*state)) {
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
// credential store the command can read.
void AnnounceCredentials(const Policy& policy, const AuditTrail& trail) {
  for (const std::string& path : policy.CredentialGrants()) {
    PrintError("--allow-credential " + path + ": the command can read this credential store");
    trail.Record(AuditEvent("credential").Set("path", path).Set("access", "read"));
  }
}

// A refused --audit file is not written to: the refusal goes to stderr.
int RefuseTrail(const Error& error) {
  PrintError(error.ToString());
  return ExitCodeFor(error.kind());
}

int Refuse(const AuditTrail& trail, const Error& error) {
  AuditEvent event("failed");
  event.Set("source", "corral")
      .Set("reason", FailureReasonName(FailureReasonFor(error.kind())))
      .Set("detail", error.ToString());
  if (!error.code().empty()) event.Set("code", error.code());
  trail.Record(event);
  PrintError(error.ToString());
  return ExitCodeFor(error.kind());
}

// The trail must be out of the command's reach: refused when a writable
// grant of the run holds it (a nested read-only grant does not make it safe:
// the tree around it is the command's). danger-full-access confines nothing,
// so nothing there is out of reach; its trail is not judged here.
Status CheckTrailOutOfReach(const Policy& policy, const AuditTrail& trail) {
  if (!trail.file() || policy.unconfined() || MutantActive(Mutant::kAuditInGrant)) return {};
  for (const PathGrant& grant : policy.grants()) {
    if (Has(grant.access, Access::kWrite) && IsWithin(*trail.file(), grant.path.path)) {
      return Error(ErrorKind::kUsage, "--audit " + *trail.file() + " lies inside " + grant.path.path +
                                          ", which the command may write, so it could rewrite the trail; write the "
                                          "trail outside every writable grant; nothing was run")
          .WithCode("audit_file_refused");
    }
  }
  return {};
}

Result<Policy> LoadPolicyFile(const std::string& file) {
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
  return LoadCompiledPolicy(text);
}

// Admits each Gated dimension with a single-use grant bound to this command,
// its cwd and the policy fingerprint, asked for on the terminal.
Result<void> AdmitGated(const ResolvedRequest& resolved, const Policy& policy, const std::vector<std::string>& command,
                        Approver& approver, const AuditTrail& trail) {
  if (resolved.gated.empty()) return {};
  GrantAuthority authority;
  for (Dimension dimension : resolved.gated) {
    std::string name(DimensionName(dimension));
    GrantScope scope{command, policy.host().cwd, policy.fingerprint(), name};
    ApprovalRequest question;
    question.summary = "grant " + name + " to: " + Action::Command(command).Summary();
    question.rationale = "the profile gates " + name + "; a grant covers this one command, once";
    question.class_key = "grant:" + name;
    Result<ApprovalAnswer> answer = approver.Request(question);
    bool allowed = answer.ok() && *answer != ApprovalAnswer::kDeny;
    AuditEvent event("grant");
    event.Set("dimension", name).Set("outcome", allowed ? "issued" : "refused");
    trail.Record(event);
    if (!allowed) {
      return Error(ErrorKind::kDenied, "the gated dimension " + name + " was not granted; nothing was run")
          .WithCode("grant_refused");
    }
    CORRAL_ASSIGN_OR_RETURN(std::string token, authority.Issue(scope, std::chrono::minutes(1)));
    CORRAL_TRY(authority.Consume(token, scope));
  }
  authority.Close();
  return {};
}

}  // namespace

void RunCommand::Register(CLI::App& app) {
  flags.Register(app);
  app.add_option("--audit", audit, "append the audit trail to FILE instead of stderr")->type_name("FILE");
  app.add_option("--policy-file", policy_file,
                 "enforce the compiled policy in FILE (as `corral wrap` writes it) instead of policy flags")
      ->type_name("FILE");
  app.add_option("--sandbox-permissions", sandbox_permissions,
                 "escalate this one call to MODE (workspace-write or danger-full-access); needs --justification "
                 "and an approval on the terminal")
      ->type_name("MODE");
  app.add_option("--justification", justification, "why the escalation is needed")->type_name("TEXT");
}

int RunCommand::RefuseUsage(const std::vector<std::string>& args, const std::string& message) {
  std::optional<std::string> file;
  for (size_t i = 1; i < args.size(); ++i) {
    if (args[i] == "--audit" && i + 1 < args.size()) file = args[i + 1];
    if (args[i].starts_with("--audit=")) file = args[i].substr(std::string_view("--audit=").size());
  }
  AuditTrail trail = AuditTrail::ToStderr();
  if (file && !MutantActive(Mutant::kUsageRecord)) {
    Result<AuditTrail> to_file = AuditTrail::ToFile(*file);
    if (to_file.ok()) trail = std::move(to_file).value();
  }
  return Refuse(trail, Error(ErrorKind::kUsage, message));
}

int RunCommand::Execute(std::vector<std::string> command) const {
  AuditTrail trail = AuditTrail::ToStderr();
  if (audit) {
    Result<AuditTrail> file = AuditTrail::ToFile(*audit);
    if (!file.ok()) return RefuseTrail(file.error());
    trail = std::move(file).value();
  }

  Result<HostContext> host = CaptureHostContext();
  if (!host.ok()) return Refuse(trail, host.error());
  // Before any policy looks at the tree: what runs whose corral was killed
  // before their sweep left at protected paths.
  if (!MutantActive(Mutant::kSweepJournal)) RecoverInterrupted(trail, host->home);

  if (policy_file) {
    if (flags.Any() || sandbox_permissions || justification) {
      return Refuse(trail, Error(ErrorKind::kUsage, "--policy-file cannot be combined with policy flags"));
    }
    Result<Policy> policy = LoadPolicyFile(*policy_file);
    if (!policy.ok()) return Refuse(trail, policy.error());
    if (Status reach = CheckTrailOutOfReach(*policy, trail); !reach.ok()) return RefuseTrail(reach.error());
    AnnounceCredentials(*policy, trail);
    RunResult result = RunConfined(*policy, std::move(command), trail, CliRunOptions());
    if (result.error) PrintError(result.error->ToString());
    ReportProtected(*policy, result);
    return result.exit_status;
  }

  Result<ResolvedRequest> resolved = flags.Resolve(*host);
  if (!resolved.ok()) return Refuse(trail, resolved.error());
  // sandbox.backend: run is the native runner; it never quietly ignores another.
  if (Status runner = CheckRunnerBackend(resolved->backend); !runner.ok()) return Refuse(trail, runner.error());
  PolicySpec spec = resolved->spec;
  // The audit trail lives outside the command's reach, even in the workspace.
  if (trail.file()) spec.own_files.push_back(*trail.file());

  // The approval gate: allow, deny or ask on the terminal (never persisted).
  TtyApprover tty;
  ApprovalGate gate(resolved->approval, &tty);
  ApprovalRecord approval = gate.Check(Action::Command(command));
  if (resolved->approval != ApprovalPolicy::kAllowAll) trail.Record(approval.ToAuditEvent());
  if (!approval.allowed) {
    return Refuse(trail, Error(ErrorKind::kDenied, "approval: " + approval.rationale + "; nothing was run")
                             .WithCode("approval_denied"));
  }

  // Escalation: strictly wider, justified, approved, for this call only.
  if (sandbox_permissions || justification) {
    EscalationRequest request;
    request.current = spec.mode;
    request.sandbox_permissions = sandbox_permissions;
    request.justification = justification;
    request.action = Action::Command(command).Summary();
    request.ceiling = resolved->mode_ceiling;
    ApproverEscalationChannel channel(tty);
    Result<EscalationGrant> grant = ApproveEscalation(request, &channel);
    AuditEvent event("escalation");
    event.Set("from", ModeName(spec.mode)).Set("to", sandbox_permissions.value_or(""));
    if (!grant.ok()) {
      std::optional<EscalationOutcome> outcome = EscalationOutcomeOf(grant.error());
      event.Set("outcome", outcome ? EscalationOutcomeName(*outcome) : std::string_view("invalid"));
      trail.Record(event);
      return Refuse(trail, grant.error());
    }
    event.Set("outcome", EscalationOutcomeName(grant->outcome));
    trail.Record(event);
    spec.mode = grant->mode;
    // The person who approved at the prompt saw the mode: that is the
    // acknowledgement danger-full-access needs.
    if (grant->mode == Mode::kDangerFullAccess) {
      spec.acknowledge_danger = true;
      resolved->danger_acknowledged_by = "escalation approved on the terminal";
    }
  }

  Result<Policy> policy = BuildPolicy(*host, spec);
  if (!policy.ok()) return Refuse(trail, policy.error());
  if (Status reach = CheckTrailOutOfReach(*policy, trail); !reach.ok()) return RefuseTrail(reach.error());
  if (Result<void> admitted = AdmitGated(*resolved, *policy, command, tty, trail); !admitted.ok()) {
    return Refuse(trail, admitted.error());
  }

  if (policy->unconfined()) {
    // Who chose to run with no sandbox at all, and through which layer.
    AuditEvent acknowledged("acknowledged");
    acknowledged.Set("mode", ModeName(policy->mode()))
        .Set("by", resolved->danger_acknowledged_by)
        .Set("mode_layer", ModeLayerName(resolved->resolution.mode_layer));
    if (resolved->resolution.session_source) {
      acknowledged.Set("session_source", ModeSourceName(*resolved->resolution.session_source));
    }
    trail.Record(acknowledged);
  }
  std::string program = command[0];
  AnnounceCredentials(*policy, trail);
  RunResult result = RunConfined(*policy, std::move(command), trail, CliRunOptions());
  if (result.error) {
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
  if (result.denial) {
    std::fprintf(stderr, "%s %s\n", DenialMarker(policy->mode()).c_str(), EscalationHint(policy->mode()).c_str());
  }
  ReportProtected(*policy, result);
  return result.exit_status;
}

}  // namespace corral::cli
