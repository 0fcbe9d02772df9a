// The property the session-log reader must hold on any input, shared by the
// libFuzzer harness (session_log_fuzz.cc) and its deterministic smoke test:
//   - it never crashes (sanitizers judge that);
//   - a rejection is ErrorKind::kConfig with a message "<file>:<line>: ..."
//     (a positive line number) and a non-empty code;
//   - an accepted log re-serialises to lines that parse back to the same
//     events; its complete_bytes ends just past the input's last newline
//     (0 if it has none), and only what follows, if anything, is the
//     dropped torn line: a newline-terminated line is never dropped.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "state/session_events.h"

namespace corral::testing {

inline constexpr std::string_view kFuzzLogName = "fuzz.jsonl";

// nullopt when the property holds; otherwise what broke.
inline std::optional<std::string> CheckSessionLogReader(std::string_view text) {
  Result<ParsedSessionLog> parsed = ParseSessionLog(text, kFuzzLogName);
  if (!parsed.ok()) {
    const Error& error = parsed.error();
    if (error.kind() != ErrorKind::kConfig) return "rejection of kind " + std::string(ErrorKindName(error.kind()));
    if (error.code().empty()) return "rejection without a code: " + error.message();
    std::string_view message = error.message();
    std::string prefix = std::string(kFuzzLogName) + ":";
    if (message.substr(0, prefix.size()) != prefix) return "rejection not naming the file: " + error.message();
    size_t digits = prefix.size();
    while (digits < message.size() && message[digits] >= '0' && message[digits] <= '9') ++digits;
    if (digits == prefix.size() || message[prefix.size()] == '0' || digits + 2 > message.size() ||
        message.substr(digits, 2) != ": " || message.size() == digits + 2) {
      return "rejection not naming a line: " + error.message();
    }
    return std::nullopt;
  }
  if (parsed->complete_bytes > text.size()) return "complete_bytes beyond the input";
  size_t last_newline = text.rfind('\n');
  size_t expected = last_newline == std::string_view::npos ? 0 : last_newline + 1;
  if (parsed->complete_bytes != expected) return "complete_bytes is not just past the last newline";
  if (parsed->dropped_torn_line != (expected < text.size())) return "torn line reported wrongly";
  std::string again;
  for (const SessionEvent& event : parsed->events) again += event.ToJsonLine() + "\n";
  Result<ParsedSessionLog> reparsed = ParseSessionLog(again, kFuzzLogName);
  if (!reparsed.ok()) return "re-serialised log rejected: " + reparsed.error().message();
  if (reparsed->events != parsed->events) return "re-serialised log differs";
  if (reparsed->dropped_torn_line) return "re-serialised log has a torn line";
  return std::nullopt;
}

}  // namespace corral::testing
