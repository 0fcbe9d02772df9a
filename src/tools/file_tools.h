// The file tools: read, write, edit, ls, find, grep and sandbox_info, run in
// this process behind a Fence (tools/fence.h). Each takes arguments already
// checked by ValidateArguments (tools/catalog.h) and returns one ToolResult.
//
// Bounds, so no call can hold the server: read shows at most `limit` lines
// (default 2000) of at most 2000 bytes each and reads at most 64 MiB; write
// and edit handle files up to 16 MiB; ls, find and grep visit at most
// 20000 entries, 64 levels deep, and return at most 1000 results; grep reads
// at most 32 MiB in all, matches lines of at most 4096 bytes (longer lines are
// cut for matching) with glibc's POSIX ERE automaton, and refuses
// back-references (the one feature that makes a regex matcher backtrack). A
// capped result says "stopped early" and why. The walks never follow a
// symlink, and leave out what the policy hides.
#pragma once

#include <nlohmann/json.hpp>

#include "tools/fence.h"
#include "tools/tool_result.h"

namespace corral::tools {

ToolResult ReadTool(const Fence& fence, const nlohmann::json& args);
ToolResult WriteTool(const Fence& fence, const nlohmann::json& args);
ToolResult EditTool(const Fence& fence, const nlohmann::json& args);
ToolResult LsTool(const Fence& fence, const nlohmann::json& args);
ToolResult FindTool(const Fence& fence, const nlohmann::json& args);
ToolResult GrepTool(const Fence& fence, const nlohmann::json& args);
// The policy as the agent should plan with it; `approvals` names the rule
// for each tool ("allow", "ask", "deny").
ToolResult SandboxInfoTool(const Policy& policy, const nlohmann::json& approvals);

}  // namespace corral::tools
