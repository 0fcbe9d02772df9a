#include "gate/escalation.h"

#include <algorithm>

#include "base/invariant.h"
#include "base/mutant.h"

namespace corral {
namespace {

constexpr size_t kMaxJustification = 1000;

bool IsBlank(const std::optional<std::string>& text) {
  if (!text) return true;
  for (char c : *text) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') return false;
  }
  return true;
}

Error Refusal(std::string_view code, std::string message) {
  return Error(ErrorKind::kDenied, std::move(message)).WithCode(std::string(code));
}

std::string Printable(std::string_view text) {
  std::string out(text.substr(0, 64));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

}  // namespace

Result<EscalationAnswer> ApproverEscalationChannel::Request(const EscalationQuestion& question) {
  std::string justification = question.justification.substr(0, kMaxJustification);
  ApprovalRequest request;
  request.summary = "escalate " + (question.action.empty() ? std::string("a call") : question.action) + " from " +
                    std::string(ModeName(question.current)) + " to " + std::string(ModeName(question.target)) +
                    " for this one call";
  request.rationale = "the model says: " + justification;
  request.class_key = "escalation:" + std::string(ModeName(question.target));
  request.kind = QuestionKind::kEscalation;
  request.argv = argv_;
  request.context = context_;
  CORRAL_ASSIGN_OR_RETURN(ApprovalAnswer answer, approver_.Request(request));
  return answer == ApprovalAnswer::kDeny ? EscalationAnswer::kReject : EscalationAnswer::kApprove;
}

std::string_view EscalationOutcomeName(EscalationOutcome outcome) {
  switch (outcome) {
    case EscalationOutcome::kNotRequested: return "not-requested";
    case EscalationOutcome::kAllowedOnce: return "allowed-once";
    case EscalationOutcome::kRejected: return "rejected";
    case EscalationOutcome::kCancelled: return "cancelled";
    case EscalationOutcome::kUnavailable: return "unavailable";
  }
  return "unavailable";
}

std::vector<Mode> WiderModes(Mode mode) {
  std::vector<Mode> wider;
  for (Mode target : {Mode::kWorkspaceWrite, Mode::kDangerFullAccess}) {
    if (IsStrictlyWider(target, mode)) wider.push_back(target);
  }
  return wider;
}

Result<EscalationGrant> ApproveEscalation(const EscalationRequest& request, EscalationApprover* approver) {
  bool has_target = !IsBlank(request.sandbox_permissions);
  bool has_justification = !IsBlank(request.justification);
  if (!has_target && !has_justification) return EscalationGrant{EscalationOutcome::kNotRequested, request.current};
  if (has_target != has_justification) {
    return Error(ErrorKind::kUsage, has_target ? "sandbox_permissions needs a justification saying why"
                                               : "a justification needs sandbox_permissions naming the wider mode")
        .WithCode("escalation_invalid_args");
  }

  std::optional<Mode> target = ParseMode(*request.sandbox_permissions);
  std::vector<Mode> wider = WiderModes(request.current);
  bool allowed_target = target && std::find(wider.begin(), wider.end(), *target) != wider.end();
  if (target && MutantActive(Mutant::kEscalationWider)) allowed_target = true;
  if (!allowed_target) {
    std::string why = target ? std::string(ModeName(*target)) + " is not wider than " +
                                   std::string(ModeName(request.current))
                             : "\"" + Printable(*request.sandbox_permissions) +
                                   "\" is not an escalation target (workspace-write or danger-full-access)";
    // A malformed request, not a denied file access: no denial marker.
    return Refusal("escalation_not_wider", "escalation refused: " + why);
  }

  std::string target_name(ModeName(*target));
  if (request.ceiling && IsStrictlyWider(*target, *request.ceiling)) {
    return Refusal("escalation_beyond_ceiling", DenialMarker(request.current) + " escalation to " + target_name +
                                                    " refused: the profile allows at most " +
                                                    std::string(ModeName(*request.ceiling)));
  }
  if (approver == nullptr) {
    return Refusal("escalation_unavailable", DenialMarker(request.current) + " escalation to " + target_name +
                                                 " refused: nobody is available to approve it");
  }
  Result<EscalationAnswer> answer =
      approver->Request({request.current, *target, *request.justification, request.action});
  if (!answer.ok()) {
    return Refusal("escalation_unavailable", DenialMarker(request.current) + " escalation to " + target_name +
                                                 " refused: could not ask (" + answer.error().ToString() + ")");
  }
  switch (*answer) {
    case EscalationAnswer::kApprove:
      CORRAL_INVARIANT(IsStrictlyWider(*target, request.current), "an approved escalation is not wider");
      return EscalationGrant{EscalationOutcome::kAllowedOnce, *target};
    case EscalationAnswer::kReject:
      return Refusal("escalation_rejected",
                     DenialMarker(request.current) + " escalation to " + target_name + " was rejected");
    case EscalationAnswer::kCancel:
      break;
  }
  return Refusal("escalation_cancelled",
                 DenialMarker(request.current) + " escalation to " + target_name + " was cancelled");
}

std::optional<EscalationOutcome> EscalationOutcomeOf(const Error& error) {
  if (error.code() == "escalation_rejected") return EscalationOutcome::kRejected;
  if (error.code() == "escalation_cancelled") return EscalationOutcome::kCancelled;
  if (error.code() == "escalation_unavailable") return EscalationOutcome::kUnavailable;
  return std::nullopt;
}

std::string DenialMarker(Mode mode) {
  return "[sandbox: file access denied under " + std::string(ModeName(mode)) + " mode]";
}

std::string EscalationHint(Mode mode) {
  std::vector<Mode> wider = WiderModes(mode);
  if (wider.empty()) {
    return "No sandbox mode is wider than " + std::string(ModeName(mode)) + "; this call cannot be escalated.";
  }
  std::string names;
  for (size_t i = 0; i < wider.size(); ++i) {
    if (i > 0) names += i + 1 == wider.size() ? " or " : ", ";
    names += ModeName(wider[i]);
  }
  return "You may retry this call with sandbox_permissions set to " + names +
         " together with a justification saying why it needs that access; a person will be asked to approve it "
         "for that one call.";
}

}  // namespace corral
