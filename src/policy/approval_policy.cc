#include "policy/approval_policy.h"

namespace corral {

std::string_view ApprovalPolicyName(ApprovalPolicy policy) {
  switch (policy) {
    case ApprovalPolicy::kAllowAll: return "allow-all";
    case ApprovalPolicy::kDenyAll: return "deny-all";
    case ApprovalPolicy::kAskDangerous: return "ask-dangerous";
    case ApprovalPolicy::kAskDangerousToolEdit: return "ask-dangerous-tool-edit";
  }
  return "deny-all";
}

std::optional<ApprovalPolicy> ParseApprovalPolicy(std::string_view text) {
  for (ApprovalPolicy policy : {ApprovalPolicy::kAllowAll, ApprovalPolicy::kDenyAll, ApprovalPolicy::kAskDangerous,
                                ApprovalPolicy::kAskDangerousToolEdit}) {
    if (text == ApprovalPolicyName(policy)) return policy;
  }
  return std::nullopt;
}

}  // namespace corral
