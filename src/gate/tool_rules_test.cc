#include "gate/tool_rules.h"

#include <gtest/gtest.h>

namespace corral::gate {
namespace {

TEST(ToolRules, ReadOnlyToolsRunAndEditsAskUnderTheDefault) {
  ResolvedRequest resolved;
  resolved.approval_source = "default";
  ApprovalPolicy policy = ToolApprovalPolicy(resolved);
  for (const char* tool : {"read", "ls", "find", "grep", "sandbox_info"}) EXPECT_EQ(ToolRule(policy, tool), Decision::kAllow) << tool;
  for (const char* tool : {"write", "edit", "bash"}) EXPECT_EQ(ToolRule(policy, tool), Decision::kAsk) << tool;
  EXPECT_EQ(ToolRule(policy, "launch_missiles"), Decision::kDeny);
}

TEST(ToolRules, DenyAllRefusesEveryToolAndAllowAllRunsEvery) {
  for (const char* tool : {"read", "write", "bash"}) {
    EXPECT_EQ(ToolRule(ApprovalPolicy::kDenyAll, tool), Decision::kDeny) << tool;
    EXPECT_EQ(ToolRule(ApprovalPolicy::kAllowAll, tool), Decision::kAllow) << tool;
  }
  ResolvedRequest chosen;
  chosen.approval_source = "flag";
  chosen.approval = ApprovalPolicy::kAllowAll;
  EXPECT_EQ(ToolApprovalPolicy(chosen), ApprovalPolicy::kAllowAll);
}

}  // namespace
}  // namespace corral::gate
