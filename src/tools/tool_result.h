// ToolResult: one tool call's answer, as the agent receives it.
//
// A result is one of three outcomes, so the agent never has to guess:
//   kOk      the tool did its job (`text`, and `data` for structured output)
//   kDenied  the sandbox or the approval gate refused: `text` starts with
//            the standard marker "[sandbox: file access denied under <mode>
//            mode]", then the reason, then how to escalate
//   kFailed  the operation itself failed (no such file, a string not found,
//            a command that exited non-zero): not the sandbox's doing
// Text that came from the user's files or a command's output passes through
// EscapeMarker first, so it can never forge the denial marker.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/result.h"
#include "policy/mode.h"

namespace corral::tools {

enum class ToolOutcome { kOk, kDenied, kFailed };
std::string_view ToolOutcomeName(ToolOutcome outcome);  // "ok", "denied", "failed"

struct ToolResult {
  ToolOutcome outcome = ToolOutcome::kOk;
  std::string text;
  nlohmann::json data = nlohmann::json::object();
  // For the audit record: the reason of a denial or failure, never contents.
  std::string reason;
};

ToolResult Ok(std::string text, nlohmann::json data = nlohmann::json::object());
// The marker, `reason`, and the escalation hint for `mode`.
ToolResult Denial(Mode mode, std::string reason);
ToolResult Failure(std::string reason);
// kDenied errors become a Denial, every other a Failure.
ToolResult FromError(Mode mode, const Error& error);

// "[sandbox:" in untrusted text becomes "[sandbox\:" (a backslash before the
// colon): output can mention the marker but never produce it.
std::string EscapeMarker(std::string_view text);

}  // namespace corral::tools
