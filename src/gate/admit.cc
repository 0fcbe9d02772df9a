#include "gate/admit.h"

#include "base/mutant.h"
#include "gate/escalation.h"
#include "policy/policy_file.h"
#include "policy/access.h"
#include "policy/mode.h"
#include "policy/path.h"

namespace corral::gate {
namespace {

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

// The run a question is about, as an approver that is a program sees it.
ApprovalContext ContextOf(const ResolvedRequest& resolved, const HostContext& host) {
  ApprovalContext context;
  context.policy = std::string(ApprovalPolicyName(resolved.approval));
  context.mode = std::string(ModeName(resolved.spec.mode));
  context.cwd = host.cwd;
  if (!resolved.spec.no_workspace) context.workspace = resolved.spec.workspace.value_or(host.cwd);
  if (resolved.session) context.session = resolved.session->id();
  return context;
}

// The approval gate: allow, deny or ask. Only an allow-for-session answer is
// kept, as an approval/allow event in the session's log, which later runs
// of the session start from.
Status CheckApproval(ResolvedRequest& resolved, const std::vector<std::string>& argv, const HostContext& host,
                     Destination destination, Approver& approver, const AuditTrail& trail) {
  ApprovalContext context = ContextOf(resolved, host);
  std::vector<std::string> remembered;
  if (resolved.session) remembered = resolved.session->allowed_classes(resolved.spec.mode, context.workspace);
  ApprovalGate gate(resolved.approval, &approver, context, std::move(remembered));
  ApprovalRecord approval = gate.Check(Action::Command(argv));
  if (resolved.approval != ApprovalPolicy::kAllowAll) trail.Record(approval.ToAuditEvent());
  std::string nothing_ran = destination == Destination::kSpawn ? "; nothing was run" : "";
  if (approval.allowed && approval.basis == ApprovalBasis::kAnsweredForSession && resolved.session) {
    // Bound to what was asked: the class, in this mode (or a narrower one)
    // and this workspace.
    ApprovalAllowData answered{approval.class_key, resolved.spec.mode, context.workspace};
    if (Status recorded = resolved.session->RecordApproval(std::move(answered)); !recorded.ok()) {
      return Error(ErrorKind::kDenied, "approval: " + approval.class_key +
                                           " was allowed for the session, but recording it in the session log "
                                           "failed (" + recorded.error().ToString() + ")" + nothing_ran)
          .WithCode("approval_denied");
    }
  }
  if (approval.allowed) return {};
  return Error(ErrorKind::kDenied, "approval: " + approval.rationale + nothing_ran).WithCode("approval_denied");
}

// Escalation: strictly wider, justified, approved, for this call only.
// Widens `resolved` (its spec's mode, and the acknowledgement of
// danger-full-access) when approved.
Status DecideEscalation(const AdmitRequest& request, ResolvedRequest& resolved, Approver& approver,
                        const AuditTrail& trail) {
  if (!request.sandbox_permissions && !request.justification) return {};
  PolicySpec& spec = resolved.spec;
  EscalationRequest escalation;
  escalation.current = spec.mode;
  escalation.sandbox_permissions = request.sandbox_permissions;
  escalation.justification = request.justification;
  escalation.action = Action::Command(request.argv).Summary();
  escalation.ceiling = resolved.mode_ceiling;
  ApproverEscalationChannel channel(approver, ContextOf(resolved, request.host), request.argv);
  Result<EscalationGrant> grant = ApproveEscalation(escalation, &channel);
  AuditEvent event("escalation");
  event.Set("from", ModeName(spec.mode)).Set("to", request.sandbox_permissions.value_or(""));
  if (!grant.ok()) {
    std::optional<EscalationOutcome> outcome = EscalationOutcomeOf(grant.error());
    event.Set("outcome", outcome ? EscalationOutcomeName(*outcome) : std::string_view("invalid"));
    trail.Record(event);
    return grant.error();
  }
  event.Set("outcome", EscalationOutcomeName(grant->outcome));
  trail.Record(event);
  spec.mode = grant->mode;
  // The person who approved at the prompt saw the mode: that is the
  // acknowledgement danger-full-access needs.
  if (grant->mode == Mode::kDangerFullAccess) {
    spec.acknowledge_danger = true;
    resolved.danger_acknowledged_by = "escalation approved on the terminal";
  }
  return {};
}

// Each Gated dimension, asked about for this command under this policy. The
// answer is the grant: the AdmittedRun that carries the command and the
// policy is made right after, and only from them.
Status GrantGated(const ResolvedRequest& resolved, const std::vector<std::string>& argv, const HostContext& host,
                  Approver& approver, const AuditTrail& trail) {
  if (MutantActive(Mutant::kGatedGrant)) return {};
  for (Dimension dimension : resolved.gated) {
    std::string name(DimensionName(dimension));
    ApprovalRequest question;
    question.summary = "grant " + name + " to: " + Action::Command(argv).Summary();
    question.rationale = "the profile gates " + name + "; a grant covers this one command, once";
    question.class_key = "grant:" + name;
    question.kind = QuestionKind::kGrant;
    question.argv = argv;
    question.context = ContextOf(resolved, host);
    Result<ApprovalAnswer> answer = approver.Request(question);
    bool allowed = answer.ok() && *answer != ApprovalAnswer::kDeny;
    AuditEvent event("grant");
    event.Set("dimension", name).Set("outcome", allowed ? "issued" : "refused");
    trail.Record(event);
    if (!allowed) {
      return Error(ErrorKind::kDenied, "the gated dimension " + name + " was not granted; nothing was run")
          .WithCode("grant_refused");
    }
  }
  return {};
}

// Who chose to run with no sandbox at all, and through which layer.
void RecordAcknowledged(const ResolvedRequest& resolved, const Policy& policy, const AuditTrail& trail) {
  AuditEvent acknowledged("acknowledged");
  acknowledged.Set("mode", ModeName(policy.mode()))
      .Set("by", resolved.danger_acknowledged_by)
      .Set("mode_layer", ModeLayerName(resolved.resolution.mode_layer));
  if (resolved.resolution.session_source) {
    acknowledged.Set("session_source", ModeSourceName(*resolved.resolution.session_source));
  }
  trail.Record(acknowledged);
}

}  // namespace

Result<PolicyFile> PolicyFile::Load(const std::string& text, const std::vector<std::string>& argv,
                                    const HostContext& here) {
  CORRAL_ASSIGN_OR_RETURN(Policy policy, LoadPolicyFile(text, argv, here));
  return PolicyFile(std::move(policy), argv);
}

namespace {

// The trail of a request or a run that named none: it records nowhere.
const AuditTrail& TrailOrDiscard(const AuditTrail* trail) {
  static const AuditTrail discard = AuditTrail::Discard();
  return trail != nullptr ? *trail : discard;
}

}  // namespace

const AuditTrail& AdmittedRun::trail() const { return TrailOrDiscard(trail_); }

Result<AdmittedRun> Admit(AdmitRequest request, Approver& approver) {
  const AuditTrail& trail = TrailOrDiscard(request.trail);
  // Every refusal but a refused trail (which is not written to) is recorded.
  auto refused = [&trail](Error error) {
    trail.Record(FailedEvent(error));
    return error;
  };
  if (const PolicyFile* compiled = std::get_if<PolicyFile>(&request.policy)) {
    if (request.argv != compiled->argv()) {
      return refused(Error(ErrorKind::kPolicy, "compiled policy: it was compiled for another command; nothing was run")
                         .WithCode("policy_file_other_command"));
    }
    if (Status reach = CheckTrailOutOfReach(compiled->policy(), trail); !reach.ok()) return reach.error();
    return AdmittedRun(compiled->policy(), std::move(request.argv), request.trail);
  }
  ResolvedRequest resolved = std::move(std::get<ResolvedRequest>(request.policy));
  if (request.destination == Destination::kWrapped && !resolved.gated.empty()) {
    return refused(Error(ErrorKind::kDenied, "the profile gates " + std::string(DimensionName(resolved.gated.front())) +
                                                 ", which needs a single-use grant at spawn time; a wrapped argv "
                                                 "cannot carry one (use `corral run` or the library)")
                       .WithCode("gated_not_wrappable"));
  }
  // The audit trail lives outside the command's reach, even in the workspace.
  if (trail.file()) resolved.spec.own_files.push_back(*trail.file());
  if (Status approval = CheckApproval(resolved, request.argv, request.host, request.destination, approver, trail); !approval.ok()) {
    return refused(approval.error());
  }
  if (Status escalation = DecideEscalation(request, resolved, approver, trail); !escalation.ok()) {
    return refused(escalation.error());
  }
  Result<Policy> policy = request.deriver != nullptr ? request.deriver->Derive(request.host, resolved.spec)
                                                     : BuildPolicy(request.host, resolved.spec);
  if (!policy.ok()) return refused(policy.error());
  if (Status reach = CheckTrailOutOfReach(*policy, trail); !reach.ok()) return reach.error();
  if (Status granted = GrantGated(resolved, request.argv, request.host, approver, trail); !granted.ok()) {
    return refused(granted.error());
  }
  if (policy->unconfined()) RecordAcknowledged(resolved, *policy, trail);
  std::shared_ptr<NetworkApprover> network;
  bool asks = resolved.approval == ApprovalPolicy::kAskDangerous ||
              resolved.approval == ApprovalPolicy::kAskDangerousToolEdit;
  if (request.network_questions == NetworkQuestions::kAskedDuringRun && asks && policy->egress().active() &&
      request.destination == Destination::kSpawn && !policy->unconfined()) {
    network = std::make_shared<NetworkApprover>(approver, ContextOf(resolved, request.host), std::move(resolved.session),
                                                resolved.spec.mode, request.argv, request.network_approval_timeout);
  }
  return AdmittedRun(std::move(policy).value(), std::move(request.argv), request.trail, std::move(network));
}

}  // namespace corral::gate
