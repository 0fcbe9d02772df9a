#include "tools/tool_result.h"

#include "gate/escalation.h"

namespace corral::tools {

std::string_view ToolOutcomeName(ToolOutcome outcome) {
  switch (outcome) {
    case ToolOutcome::kOk: return "ok";
    case ToolOutcome::kDenied: return "denied";
    case ToolOutcome::kFailed: return "failed";
  }
  return "failed";
}

ToolResult Ok(std::string text, nlohmann::json data) {
  return ToolResult{ToolOutcome::kOk, std::move(text), std::move(data), ""};
}

ToolResult Denial(Mode mode, std::string reason) {
  ToolResult result;
  result.outcome = ToolOutcome::kDenied;
  result.text = DenialMarker(mode) + " " + reason + "\n" + EscalationHint(mode);
  result.reason = std::move(reason);
  return result;
}

ToolResult Failure(std::string reason) {
  ToolResult result;
  result.outcome = ToolOutcome::kFailed;
  result.text = reason;
  result.reason = std::move(reason);
  return result;
}

ToolResult FromError(Mode mode, const Error& error) {
  return error.kind() == ErrorKind::kDenied ? Denial(mode, error.ToString()) : Failure(error.ToString());
}

std::string EscapeMarker(std::string_view text) {
  static constexpr std::string_view kMarker = "[sandbox:";
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  for (;;) {
    size_t found = text.find(kMarker, at);
    if (found == std::string_view::npos) break;
    out.append(text.substr(at, found - at));
    out += "[sandbox\\:";
    at = found + kMarker.size();
  }
  out.append(text.substr(at));
  return out;
}

}  // namespace corral::tools
