// The approval policy: which actions the approval gate (gate/approval.h)
// lets run, refuses, or asks about. Plain data, so config files, presets and
// requests can name one without depending on the gate.
#pragma once

#include <optional>
#include <string_view>

namespace corral {

enum class ApprovalPolicy { kAllowAll, kDenyAll, kAskDangerous, kAskDangerousToolEdit };
// "allow-all", "deny-all", "ask-dangerous", "ask-dangerous-tool-edit".
std::string_view ApprovalPolicyName(ApprovalPolicy policy);
std::optional<ApprovalPolicy> ParseApprovalPolicy(std::string_view text);

}  // namespace corral
