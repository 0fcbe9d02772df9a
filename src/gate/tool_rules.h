// Tool rules: whether an agent's tool call runs, is refused, or is asked
// about, under the resolved approval policy (policy/approval_policy.h).
//
//   allow-all                  every tool runs
//   deny-all                   no tool runs, read-only tools included
//   ask-dangerous(-tool-edit)  read-only tools (read, ls, find, grep,
//                              sandbox_info) run; write, edit and bash are
//                              asked about; an unknown tool is refused
// The built-in default (no preset, config or flag chose a policy) is
// allow-all for `corral run`, where the person typed the command; for the
// agent's tools it is ask-dangerous-tool-edit: the model chose the call.
//
// Security: "ask" is never an allow by itself. The caller must get an answer
// (an MCP elicitation), and a caller that cannot ask denies.
#pragma once

#include <string_view>

#include "gate/approval.h"
#include "resolve/request.h"

namespace corral::gate {

// The approval policy the agent's tools run under (see above).
ApprovalPolicy ToolApprovalPolicy(const ResolvedRequest& resolved);

Decision ToolRule(ApprovalPolicy policy, std::string_view tool);

}  // namespace corral::gate
