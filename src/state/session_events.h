// Session events: the JSONL lines of a session log, and their strict reader.
//
// One event per line:
//   {"v":1,"type":"session/start","ts":"2026-01-02T03:04:05.000000Z","data":{"cwd":"/src/app"}}
//   {"v":1,"type":"sandbox/mode","ts":"...","data":{"mode":"read-only","source":"user"}}
//   {"v":1,"type":"approval/allow","ts":"...",
//    "data":{"class":"command:git-push","mode":"workspace-write","workspace":"/src/app"}}
// The first line is the one session/start, which fixes the session's working
// directory for good. Each sandbox/mode event changes the session's mode;
// the last one wins (EffectiveSandboxMode). Its source says who changed it:
// the user, a delegated agent, or an approved escalation. Each approval/allow
// event records an "allow for the session" answer, with the mode and the
// workspace (null: none) of the run it was given in: a command of that class
// (gate/approval.h's class key) that the approval policy asks about is
// allowed without asking for the rest of the session, in that workspace and
// in that mode or a narrower one (SessionAllowedClasses).
//
//   CORRAL_ASSIGN_OR_RETURN(ParsedSessionLog log, ParseSessionLog(text, path));
//   std::optional<SandboxModeData> mode = EffectiveSandboxMode(log.events);
//
// Reading is strict. corral writes each event with one write(2) ending in
// '\n', so a crash mid-append can leave only a last line WITHOUT a trailing
// newline: that torn line is dropped and reported, whatever it holds. Every
// newline-terminated line must be a valid event, the last one included;
// anything wrong in one (not JSON, an unknown type, an unknown version, an
// unknown key, a bad value, a missing or repeated session/start) refuses the
// whole text with an Error "<file>:<line>: ...": a session is never resumed
// half-read.
//
// Security: the events decide how much a later command may touch; the files
// holding them are guarded by session_log.h. Error messages quote file
// content as escaped ASCII only, so a crafted log cannot put escape
// sequences on the user's terminal.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/result.h"
#include "policy/mode.h"

namespace corral {

// Who changed the sandbox mode.
enum class ModeSource { kUser, kDelegation, kEscalation };
std::string_view ModeSourceName(ModeSource source);  // "user", "delegation", "escalation"
std::optional<ModeSource> ParseModeSource(std::string_view text);

// data of a session/start event.
struct SessionStartData {
  std::string cwd;  // absolute; the session's immutable working directory
  bool operator==(const SessionStartData&) const = default;
};

// data of a sandbox/mode event.
struct SandboxModeData {
  Mode mode = Mode::kReadOnly;
  ModeSource source = ModeSource::kUser;
  bool operator==(const SandboxModeData&) const = default;
};

// data of an approval/allow event: the class key an approver allowed for
// the session (1 to 128 bytes of printable ASCII, IsSessionApprovalClass),
// and the mode and workspace root ("" for none) of the run it was asked in.
struct ApprovalAllowData {
  std::string class_key;
  Mode mode = Mode::kReadOnly;
  std::string workspace;
  bool operator==(const ApprovalAllowData&) const = default;
};
bool IsSessionApprovalClass(std::string_view class_key);

using SessionEventData = std::variant<SessionStartData, SandboxModeData, ApprovalAllowData>;

struct SessionEvent {
  std::string ts;  // UTC, RFC 3339 with microseconds
  SessionEventData data;

  // An event stamped with the current time.
  static SessionEvent Stamped(SessionEventData data);

  std::string_view type() const;  // "session/start", "sandbox/mode" or "approval/allow"
  // The JSON line, without the trailing newline.
  std::string ToJsonLine() const;
  bool operator==(const SessionEvent&) const = default;
};

// The last sandbox/mode event's data, if any (folded from the end).
std::optional<SandboxModeData> EffectiveSandboxMode(std::span<const SessionEvent> events);

// The class keys that the approval/allow events allow for a run in `mode`
// with workspace root `workspace` ("" for none): those answered in the same
// workspace and in `mode` or a wider one. In log order, each once.
std::vector<std::string> SessionAllowedClasses(std::span<const SessionEvent> events, Mode mode,
                                               std::string_view workspace);

// What a log's text holds.
struct ParsedSessionLog {
  std::vector<SessionEvent> events;
  // Bytes of complete, accepted lines; a torn last line starts here.
  size_t complete_bytes = 0;
  // True when the text ends in bytes after its last '\n' (a torn append).
  bool dropped_torn_line = false;
};

// Parses a log's text. `file` names it in errors ("<file>:<line>: ...").
// Errors are ErrorKind::kConfig with code "session_log_corrupt",
// "session_log_unknown_type" or "session_log_unknown_version".
Result<ParsedSessionLog> ParseSessionLog(std::string_view text, std::string_view file);

// `text` as a JSON string of escaped ASCII, cut to 80 characters: safe to
// put in an error message whatever bytes it held.
std::string QuoteForError(std::string_view text);

}  // namespace corral
