#include "state/session_events.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "base/mutant.h"
#include "base/invariant.h"

namespace corral {
namespace {

constexpr int kVersion = 1;
constexpr std::string_view kTypeStart = "session/start";
constexpr std::string_view kTypeMode = "sandbox/mode";
constexpr std::string_view kTypeApproval = "approval/allow";
constexpr size_t kMaxClassBytes = 128;
// Longer lines are never written by corral: a cwd is at most PATH_MAX.
constexpr size_t kMaxLineBytes = 64 * 1024;

using Json = nlohmann::json;

// A JSON value for an error message: ASCII only, so no escape sequence or
// invalid byte from the file reaches a terminal; cut to a readable length.
std::string QuoteJson(const Json& value) {
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}
std::string Quote(std::string_view text) { return QuoteForError(text); }

std::string UtcNow() {
  struct timespec now {};
  ::clock_gettime(CLOCK_REALTIME, &now);
  struct tm utc {};
  ::gmtime_r(&now.tv_sec, &utc);
  char date[32];
  ::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &utc);
  char micros[32];
  std::snprintf(micros, sizeof micros, ".%06ldZ", now.tv_nsec / 1000);
  return std::string(date) + micros;
}

class LineError {
 public:
  LineError(std::string_view file, size_t line) : prefix_(std::string(file) + ":" + std::to_string(line) + ": ") {}
  Error operator()(std::string_view code, std::string what) const {
    return Error(ErrorKind::kConfig, prefix_ + what).WithCode(std::string(code));
  }

 private:
  std::string prefix_;
};

constexpr std::string_view kCorrupt = "session_log_corrupt";

// Checks that `object` has exactly the keys `allowed`.
Status OnlyKeys(const Json& object, std::initializer_list<std::string_view> allowed, std::string_view where,
                const LineError& fail) {
  for (const auto& item : object.items()) {
    bool known = false;
    for (std::string_view key : allowed) known = known || item.key() == key;
    if (!known) return fail(kCorrupt, "unknown key " + Quote(item.key()) + " in " + std::string(where));
  }
  return Ok();
}

Result<std::string> StringField(const Json& object, std::string_view key, std::string_view where,
                                const LineError& fail) {
  auto found = object.find(key);
  if (found == object.end()) return fail(kCorrupt, "missing \"" + std::string(key) + "\" in " + std::string(where));
  if (!found->is_string()) {
    return fail(kCorrupt, "\"" + std::string(key) + "\" in " + std::string(where) + " must be a string, not " +
                              found->type_name());
  }
  return found->get<std::string>();
}

Result<SessionStartData> DecodeStart(const Json& data, const LineError& fail) {
  CORRAL_TRY(OnlyKeys(data, {"cwd"}, "session/start data", fail));
  CORRAL_ASSIGN_OR_RETURN(std::string cwd, StringField(data, "cwd", "session/start data", fail));
  if (cwd.empty() || cwd[0] != '/' || cwd.find('\0') != std::string::npos) {
    return fail(kCorrupt, "session/start cwd " + Quote(cwd) + " is not an absolute path");
  }
  return SessionStartData{std::move(cwd)};
}

Result<SandboxModeData> DecodeMode(const Json& data, const LineError& fail) {
  CORRAL_TRY(OnlyKeys(data, {"mode", "source"}, "sandbox/mode data", fail));
  CORRAL_ASSIGN_OR_RETURN(std::string mode_text, StringField(data, "mode", "sandbox/mode data", fail));
  CORRAL_ASSIGN_OR_RETURN(std::string source_text, StringField(data, "source", "sandbox/mode data", fail));
  std::optional<Mode> mode = ParseMode(mode_text);
  if (!mode) {
    return fail(kCorrupt, "unknown sandbox mode " + Quote(mode_text) +
                              " (expected read-only, workspace-write or danger-full-access)");
  }
  std::optional<ModeSource> source = ParseModeSource(source_text);
  if (!source) {
    return fail(kCorrupt, "unknown mode source " + Quote(source_text) + " (expected user, delegation or escalation)");
  }
  return SandboxModeData{*mode, *source};
}

Result<ApprovalAllowData> DecodeApproval(const Json& data, const LineError& fail) {
  CORRAL_TRY(OnlyKeys(data, {"class", "mode", "workspace"}, "approval/allow data", fail));
  CORRAL_ASSIGN_OR_RETURN(std::string class_key, StringField(data, "class", "approval/allow data", fail));
  if (!IsSessionApprovalClass(class_key)) {
    return fail(kCorrupt, "approval/allow class " + Quote(class_key) + " is not 1 to " +
                              std::to_string(kMaxClassBytes) + " printable ASCII bytes");
  }
  CORRAL_ASSIGN_OR_RETURN(std::string mode_text, StringField(data, "mode", "approval/allow data", fail));
  std::optional<Mode> mode = ParseMode(mode_text);
  if (!mode) {
    return fail(kCorrupt, "unknown sandbox mode " + Quote(mode_text) +
                              " (expected read-only, workspace-write or danger-full-access)");
  }
  // The workspace the answer was given for: an absolute path, or null for a
  // run with no workspace.
  auto workspace = data.find("workspace");
  if (workspace == data.end()) return fail(kCorrupt, "missing \"workspace\" in approval/allow data");
  std::string root;
  if (!workspace->is_null()) {
    if (!workspace->is_string()) {
      return fail(kCorrupt, std::string("\"workspace\" in approval/allow data must be a string or null, not ") +
                                workspace->type_name());
    }
    root = workspace->get<std::string>();
    if (root.empty() || root[0] != '/' || root.find('\0') != std::string::npos) {
      return fail(kCorrupt, "approval/allow workspace " + Quote(root) + " is not an absolute path");
    }
  }
  return ApprovalAllowData{std::move(class_key), *mode, std::move(root)};
}

Result<SessionEvent> DecodeEvent(const Json& line, const LineError& fail) {
  if (!line.is_object()) return fail(kCorrupt, std::string("an event must be a JSON object, not ") + line.type_name());
  // The version first: a later version may have other keys.
  auto version = line.find("v");
  if (version == line.end()) return fail(kCorrupt, "missing \"v\" (the event format version)");
  if (!version->is_number_integer() || version->get<int64_t>() != kVersion) {
    return fail("session_log_unknown_version",
                "unknown event version " + QuoteJson(*version) + "; this corral reads version 1 only");
  }
  auto type = line.find("type");
  if (type == line.end() || !type->is_string()) return fail(kCorrupt, "missing or non-string \"type\"");
  const std::string& type_name = type->get_ref<const std::string&>();
  if (type_name != kTypeStart && type_name != kTypeMode && type_name != kTypeApproval) {
    return fail("session_log_unknown_type", "unknown event type " + Quote(type_name) +
                                                " (expected session/start, sandbox/mode or approval/allow)");
  }
  CORRAL_TRY(OnlyKeys(line, {"v", "type", "ts", "data"}, "the event", fail));
  CORRAL_ASSIGN_OR_RETURN(std::string ts, StringField(line, "ts", "the event", fail));
  bool printable = !ts.empty() && ts.size() <= 64;
  for (char c : ts) printable = printable && c >= 0x20 && c <= 0x7e;
  if (!printable) return fail(kCorrupt, "\"ts\" " + Quote(ts) + " is not a timestamp");
  auto data = line.find("data");
  if (data == line.end() || !data->is_object()) return fail(kCorrupt, "missing or non-object \"data\"");

  SessionEvent event;
  event.ts = std::move(ts);
  if (type_name == kTypeStart) {
    CORRAL_ASSIGN_OR_RETURN(event.data, DecodeStart(*data, fail));
  } else if (type_name == kTypeApproval) {
    CORRAL_ASSIGN_OR_RETURN(event.data, DecodeApproval(*data, fail));
  } else {
    CORRAL_ASSIGN_OR_RETURN(event.data, DecodeMode(*data, fail));
  }
  return event;
}

}  // namespace

std::string QuoteForError(std::string_view text) { return QuoteJson(Json(std::string(text))); }

std::string_view ModeSourceName(ModeSource source) {
  switch (source) {
    case ModeSource::kUser: return "user";
    case ModeSource::kDelegation: return "delegation";
    case ModeSource::kEscalation: return "escalation";
  }
  return "user";
}

std::optional<ModeSource> ParseModeSource(std::string_view text) {
  if (text == "user") return ModeSource::kUser;
  if (text == "delegation") return ModeSource::kDelegation;
  if (text == "escalation") return ModeSource::kEscalation;
  return std::nullopt;
}

bool IsSessionApprovalClass(std::string_view class_key) {
  bool printable = !class_key.empty() && class_key.size() <= kMaxClassBytes;
  for (char c : class_key) printable = printable && c > 0x20 && c <= 0x7e;
  return printable;
}

std::string_view SessionEvent::type() const {
  if (std::holds_alternative<SessionStartData>(data)) return kTypeStart;
  return std::holds_alternative<ApprovalAllowData>(data) ? kTypeApproval : kTypeMode;
}

SessionEvent SessionEvent::Stamped(SessionEventData data) {
  return SessionEvent{UtcNow(), std::move(data)};
}

std::string SessionEvent::ToJsonLine() const {
  nlohmann::ordered_json line;
  line["v"] = kVersion;
  line["type"] = std::string(type());
  line["ts"] = ts;
  nlohmann::ordered_json body = nlohmann::ordered_json::object();
  if (const auto* start = std::get_if<SessionStartData>(&data)) {
    body["cwd"] = start->cwd;
  } else if (const auto* approval = std::get_if<ApprovalAllowData>(&data)) {
    body["class"] = approval->class_key;
    body["mode"] = std::string(ModeName(approval->mode));
    body["workspace"] = approval->workspace.empty() ? nlohmann::ordered_json(nullptr)
                                                    : nlohmann::ordered_json(approval->workspace);
  } else {
    const auto& mode = std::get<SandboxModeData>(data);
    body["mode"] = std::string(ModeName(mode.mode));
    body["source"] = std::string(ModeSourceName(mode.source));
  }
  line["data"] = std::move(body);
  return line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

std::optional<SandboxModeData> EffectiveSandboxMode(std::span<const SessionEvent> events) {
  for (auto it = events.rbegin(); it != events.rend(); ++it) {
    if (const auto* mode = std::get_if<SandboxModeData>(&it->data)) {
      CORRAL_INVARIANT(ParseMode(ModeName(mode->mode)) == mode->mode, "session event holds an invalid sandbox mode");
      return *mode;
    }
  }
  return std::nullopt;
}

std::vector<std::string> SessionAllowedClasses(std::span<const SessionEvent> events, Mode mode,
                                               std::string_view workspace) {
  std::vector<std::string> classes;
  for (const SessionEvent& event : events) {
    const auto* approval = std::get_if<ApprovalAllowData>(&event.data);
    if (approval == nullptr) continue;
    // Never wider than what was answered: not in a wider mode, not in another workspace.
    bool other_scope = IsStrictlyWider(mode, approval->mode) || approval->workspace != workspace;
    if (other_scope && !MutantActive(Mutant::kSessionApprovalScope)) continue;
    if (std::find(classes.begin(), classes.end(), approval->class_key) == classes.end()) {
      classes.push_back(approval->class_key);
    }
  }
  return classes;
}

Result<ParsedSessionLog> ParseSessionLog(std::string_view text, std::string_view file) {
  ParsedSessionLog parsed;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    ++line_number;
    size_t newline = text.find('\n', start);
    // Each append is one write(2) ending in '\n', so only a last line that
    // never got its newline can be torn. Every complete line must parse.
    if (newline == std::string_view::npos) {
      parsed.dropped_torn_line = true;
      break;
    }
    std::string_view line = text.substr(start, newline - start);
    LineError fail(file, line_number);
    if (line.size() > kMaxLineBytes) {
      return fail(kCorrupt, "line longer than " + std::to_string(kMaxLineBytes) + " bytes; the log is corrupt");
    }
    Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) return fail(kCorrupt, "a complete line that is not JSON; the log is corrupt");
    CORRAL_ASSIGN_OR_RETURN(SessionEvent event, DecodeEvent(json, fail));
    bool is_start = std::holds_alternative<SessionStartData>(event.data);
    if (parsed.events.empty() && !is_start) return fail(kCorrupt, "the first event must be session/start");
    if (!parsed.events.empty() && is_start) {
      return fail(kCorrupt, "a second session/start: a session's working directory never changes");
    }
    parsed.events.push_back(std::move(event));
    start = newline + 1;
    parsed.complete_bytes = start;
  }
  return parsed;
}

}  // namespace corral
