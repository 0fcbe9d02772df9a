#include "gate/tool_rules.h"

namespace corral::gate {

ApprovalPolicy ToolApprovalPolicy(const ResolvedRequest& resolved) {
  return resolved.approval_source == "default" ? ApprovalPolicy::kAskDangerousToolEdit : resolved.approval;
}

Decision ToolRule(ApprovalPolicy policy, std::string_view tool) {
  if (policy == ApprovalPolicy::kAllowAll) return Decision::kAllow;
  if (policy == ApprovalPolicy::kDenyAll) return Decision::kDeny;
  if (tool == "read" || tool == "ls" || tool == "find" || tool == "grep" || tool == "sandbox_info") {
    return Decision::kAllow;
  }
  if (tool == "write" || tool == "edit" || tool == "bash") return Decision::kAsk;
  return Decision::kDeny;
}

}  // namespace corral::gate
