#include "gate/approval.h"

#include "base/mutant.h"
#include "gate/dangerous_command.h"

namespace corral {
namespace {

constexpr size_t kMaxSummary = 512;

// Shell-style quoting for display, so argument boundaries stay visible.
std::string DisplayArgument(std::string_view arg) {
  bool plain = !arg.empty();
  for (char c : arg) {
    bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                std::string_view("._/:=@%+,-").find(c) != std::string_view::npos;
    plain = plain && safe;
  }
  if (plain) return std::string(arg);
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string DisplayArgv(const std::vector<std::string>& argv) {
  std::string text;
  for (const std::string& arg : argv) {
    if (!text.empty()) text += ' ';
    text += DisplayArgument(arg);
  }
  return text;
}

}  // namespace

std::string_view ToolClassName(ToolClass tool_class) {
  switch (tool_class) {
    case ToolClass::kReadOnly: return "read-only";
    case ToolClass::kEdit: return "edit";
    case ToolClass::kCommand: return "command";
    case ToolClass::kUnknown: return "unknown";
  }
  return "unknown";
}

ToolClass ClassifyTool(std::string_view tool) {
  if (tool == "read" || tool == "ls" || tool == "grep" || tool == "find") return ToolClass::kReadOnly;
  if (tool == "write" || tool == "edit") return ToolClass::kEdit;
  if (tool == "bash") return ToolClass::kCommand;
  return ToolClass::kUnknown;
}

Action Action::Tool(std::string name, std::vector<std::string> argv) {
  return Action{Kind::kTool, std::move(name), std::move(argv)};
}

Action Action::Command(std::vector<std::string> argv) { return Action{Kind::kCommand, "", std::move(argv)}; }

std::string Action::Summary() const {
  std::string text = kind == Kind::kTool ? tool : "command";
  if (!argv.empty() || kind == Kind::kCommand) text += ": " + DisplayArgv(argv);
  if (text.size() > kMaxSummary) text = text.substr(0, kMaxSummary - 3) + "...";
  return text;
}

std::string_view DecisionName(Decision decision) {
  switch (decision) {
    case Decision::kAllow: return "allow";
    case Decision::kDeny: return "deny";
    case Decision::kAsk: return "ask";
  }
  return "deny";
}

Verdict Decide(ApprovalPolicy policy, const Action& action) {
  ToolClass tool_class = action.kind == Action::Kind::kTool ? ClassifyTool(action.tool) : ToolClass::kCommand;
  std::optional<CommandDanger> danger;
  if (tool_class == ToolClass::kCommand) danger = ClassifyDangerousCommand(action.argv);

  Verdict verdict;
  if (tool_class == ToolClass::kCommand) {
    verdict.class_key = "command:" + (danger ? danger->category : std::string("safe"));
  } else {
    verdict.class_key = "tool:" + action.tool;
  }

  switch (policy) {
    case ApprovalPolicy::kAllowAll:
      verdict.decision = Decision::kAllow;
      verdict.rationale = "allow-all: every action runs without asking";
      return verdict;
    case ApprovalPolicy::kDenyAll:
      verdict.decision = Decision::kDeny;
      verdict.rationale = "deny-all: no action runs";
      return verdict;
    case ApprovalPolicy::kAskDangerous:
    case ApprovalPolicy::kAskDangerousToolEdit:
      break;
  }
  std::string policy_name(ApprovalPolicyName(policy));
  switch (tool_class) {
    case ToolClass::kReadOnly:
      verdict.decision = Decision::kAllow;
      verdict.rationale = "the " + action.tool + " tool only reads";
      break;
    case ToolClass::kEdit:
      if (policy == ApprovalPolicy::kAskDangerousToolEdit) {
        verdict.decision = Decision::kAsk;
        verdict.rationale = policy_name + " asks before every edit (" + action.tool + ")";
      } else {
        verdict.decision = Decision::kAllow;
        verdict.rationale = policy_name + " lets edits run; the sandbox bounds where they land";
      }
      break;
    case ToolClass::kCommand:
      if (danger) {
        verdict.decision = Decision::kAsk;
        verdict.rationale = danger->reason;
      } else {
        verdict.decision = Decision::kAllow;
        verdict.rationale = "not a dangerous command";
      }
      break;
    case ToolClass::kUnknown:
      verdict.decision = Decision::kAsk;
      verdict.rationale = "unknown tool " + DisplayArgument(action.tool) + ": asking to be safe";
      break;
  }
  return verdict;
}

std::string_view ApprovalAnswerName(ApprovalAnswer answer) {
  switch (answer) {
    case ApprovalAnswer::kAllowOnce: return "allow-once";
    case ApprovalAnswer::kDeny: return "deny";
    case ApprovalAnswer::kAllowForRun: return "allow-for-run";
    case ApprovalAnswer::kAllowForSession: return "allow-for-session";
  }
  return "deny";
}

std::string_view QuestionKindName(QuestionKind kind) {
  switch (kind) {
    case QuestionKind::kApproval: return "approval";
    case QuestionKind::kEscalation: return "escalation";
    case QuestionKind::kGrant: return "grant";
    case QuestionKind::kNetwork: return "network";
  }
  return "approval";
}

std::string_view ApprovalBasisName(ApprovalBasis basis) {
  switch (basis) {
    case ApprovalBasis::kPolicy: return "policy";
    case ApprovalBasis::kAnsweredOnce: return "answered-once";
    case ApprovalBasis::kAnsweredForRun: return "answered-for-run";
    case ApprovalBasis::kRemembered: return "remembered-for-run";
    case ApprovalBasis::kAnsweredForSession: return "answered-for-session";
    case ApprovalBasis::kRememberedForSession: return "remembered-for-session";
    case ApprovalBasis::kAnsweredDeny: return "answered-deny";
    case ApprovalBasis::kNoApprover: return "no-approver";
    case ApprovalBasis::kApproverFailed: return "approver-failed";
  }
  return "policy";
}

AuditEvent ApprovalRecord::ToAuditEvent() const {
  AuditEvent event("approval");
  event.Set("action", action)
      .Set("class", class_key)
      .Set("policy", ApprovalPolicyName(policy))
      .Set("decision", DecisionName(policy_decision))
      .Set("outcome", allowed ? "allowed" : "denied")
      .Set("basis", ApprovalBasisName(basis))
      .Set("rationale", rationale);
  return event;
}

ApprovalGate::ApprovalGate(ApprovalPolicy policy, Approver* approver, ApprovalContext context,
                           std::vector<std::string> allowed_for_session)
    : policy_(policy),
      approver_(approver),
      context_(std::move(context)),
      allowed_for_session_(allowed_for_session.begin(), allowed_for_session.end()) {}

ApprovalRecord ApprovalGate::Check(const Action& action) {
  std::lock_guard<std::mutex> lock(mutex_);
  Verdict verdict = Decide(policy_, action);
  ApprovalRecord record;
  record.action = action.Summary();
  record.class_key = verdict.class_key;
  record.policy = policy_;
  record.policy_decision = verdict.decision;
  record.rationale = verdict.rationale;
  record.basis = ApprovalBasis::kPolicy;
  record.allowed = verdict.decision == Decision::kAllow || MutantActive(Mutant::kApprovalGate);
  if (verdict.decision != Decision::kAsk || MutantActive(Mutant::kApprovalGate)) return record;

  if (allowed_for_run_.count(verdict.class_key) != 0) {
    record.allowed = true;
    record.basis = ApprovalBasis::kRemembered;
    return record;
  }
  if (allowed_for_session_.count(verdict.class_key) != 0) {
    record.allowed = true;
    record.basis = ApprovalBasis::kRememberedForSession;
    return record;
  }
  if (approver_ == nullptr) {
    record.basis = ApprovalBasis::kNoApprover;
    record.rationale += "; nobody to ask, so denied";
    return record;
  }
  ApprovalRequest request;
  request.summary = record.action;
  request.rationale = verdict.rationale;
  request.class_key = verdict.class_key;
  request.kind = QuestionKind::kApproval;
  request.argv = action.argv;
  request.context = context_;
  request.session_answer = context_.session.empty() ? SessionAnswer::kNotOffered : SessionAnswer::kOffered;
  Result<ApprovalAnswer> answer = approver_->Request(request);
  if (answer.ok() && *answer == ApprovalAnswer::kAllowForSession &&
      request.session_answer == SessionAnswer::kNotOffered) {
    answer = Error(ErrorKind::kDenied, "the approver answered allow-for-session, which was not offered (no session)")
                 .WithCode("approval_answer_not_offered");
  }
  if (!answer.ok()) {
    record.basis = ApprovalBasis::kApproverFailed;
    record.rationale += "; could not ask (" + answer.error().ToString() + "), so denied";
    record.approver_error = answer.error();
    return record;
  }
  switch (*answer) {
    case ApprovalAnswer::kAllowOnce:
      record.allowed = true;
      record.basis = ApprovalBasis::kAnsweredOnce;
      break;
    case ApprovalAnswer::kAllowForRun:
      allowed_for_run_.insert(verdict.class_key);
      record.allowed = true;
      record.basis = ApprovalBasis::kAnsweredForRun;
      break;
    case ApprovalAnswer::kAllowForSession:
      allowed_for_run_.insert(verdict.class_key);
      record.allowed = true;
      record.basis = ApprovalBasis::kAnsweredForSession;
      break;
    case ApprovalAnswer::kDeny:
      record.allowed = false;
      record.basis = ApprovalBasis::kAnsweredDeny;
      break;
  }
  return record;
}

}  // namespace corral
