#include "gate/session_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/hex.h"
#include "base/invariant.h"
#include "base/random.h"

namespace corral {
namespace {

constexpr int kVersion = 1;
constexpr std::string_view kTypeStart = "session/start";
constexpr std::string_view kTypeMode = "sandbox/mode";
// Longer lines are never written by corral: a cwd is at most PATH_MAX.
constexpr size_t kMaxLineBytes = 64 * 1024;
constexpr size_t kMaxLogBytes = 16 * 1024 * 1024;
constexpr size_t kMaxIdLength = 64;
constexpr size_t kMaxCwdBytes = 4096;

using Json = nlohmann::json;

// A JSON value for an error message: ASCII only, so no escape sequence or
// invalid byte from the file reaches a terminal; cut to a readable length.
std::string QuoteJson(const Json& value) {
  std::string text = value.dump(-1, ' ', /*ensure_ascii=*/true, Json::error_handler_t::replace);
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}
std::string Quote(std::string_view text) { return QuoteJson(Json(std::string(text))); }

// True when `text` is valid UTF-8 without NUL: it survives a JSON round trip
// unchanged (invalid bytes would be dropped by the ignore handler).
bool IsCleanUtf8(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return false;
  std::string dumped = Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::ignore);
  Json back = Json::parse(dumped, nullptr, /*allow_exceptions=*/false);
  return back.is_string() && back.get_ref<const std::string&>() == text;
}

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
  if (type_name != kTypeStart && type_name != kTypeMode) {
    return fail("session_log_unknown_type",
                "unknown event type " + Quote(type_name) + " (expected session/start or sandbox/mode)");
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
  } else {
    CORRAL_ASSIGN_OR_RETURN(event.data, DecodeMode(*data, fail));
  }
  return event;
}

Error Unsafe(std::string message) {
  return Error(ErrorKind::kConfig, std::move(message)).WithCode("session_log_unsafe");
}

std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// The ownership and write-permission rule for the directory and each file.
Status CheckOwnedAndPrivate(const struct stat& info, const std::string& path, std::string_view what,
                            std::string_view private_mode) {
  uid_t me = ::geteuid();
  if (info.st_uid != me) {
    return Unsafe(std::string(what) + " " + path + " is owned by uid " + std::to_string(info.st_uid) +
                  ", not by uid " + std::to_string(me) +
                  " (you); another user could rewrite your sessions. Fix it with: chown " + std::to_string(me) + " " +
                  path + " && chmod " + std::string(private_mode) + " " + path);
  }
  if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return Unsafe(std::string(what) + " " + path + " is writable by group or others (mode " +
                  OctalMode(info.st_mode) + "); another user could rewrite your sessions. Fix it with: chmod " +
                  std::string(private_mode) + " " + path);
  }
  return Ok();
}

Status CheckFileStat(const struct stat& info, const std::string& path) {
  if (!S_ISREG(info.st_mode)) return Unsafe("session log " + path + " is not a regular file");
  return CheckOwnedAndPrivate(info, path, "session log", "600");
}

Status MakeDirs(const std::string& dir) {
  for (size_t slash = dir.find('/', 1); ; slash = dir.find('/', slash + 1)) {
    std::string prefix = dir.substr(0, slash);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
      return Error::FromErrno(ErrorKind::kConfig, "creating session directory " + prefix, "mkdir", errno);
    }
    if (slash == std::string::npos) return Ok();
  }
}

// Reads the whole file from offset 0.
Result<std::string> ReadAll(int fd, const std::string& path) {
  std::string text;
  char buffer[65536];
  for (off_t offset = 0;;) {
    ssize_t got = ::pread(fd, buffer, sizeof buffer, offset);
    if (got < 0) {
      if (errno == EINTR) continue;
      return Error::FromErrno(ErrorKind::kIo, "reading session log " + path, "pread", errno);
    }
    if (got == 0) return text;
    text.append(buffer, static_cast<size_t>(got));
    offset += got;
    if (text.size() > kMaxLogBytes) {
      return Error(ErrorKind::kConfig, path + ": larger than " + std::to_string(kMaxLogBytes) +
                                           " bytes; refusing to load it")
          .WithCode(std::string(kCorrupt));
    }
  }
}

// Holds flock(LOCK_EX) on a descriptor for one scope.
class FileLock {
 public:
  explicit FileLock(int fd) : fd_(fd) {
    while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

}  // namespace

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

std::string_view SessionEvent::type() const {
  return std::holds_alternative<SessionStartData>(data) ? kTypeStart : kTypeMode;
}

std::string SessionEvent::ToJsonLine() const {
  nlohmann::ordered_json line;
  line["v"] = kVersion;
  line["type"] = std::string(type());
  line["ts"] = ts;
  nlohmann::ordered_json body = nlohmann::ordered_json::object();
  if (const auto* start = std::get_if<SessionStartData>(&data)) {
    body["cwd"] = start->cwd;
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

Result<ParsedSessionLog> ParseSessionLog(std::string_view text, std::string_view file) {
  ParsedSessionLog parsed;
  size_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    ++line_number;
    size_t newline = text.find('\n', start);
    bool complete = newline != std::string_view::npos;
    size_t end = complete ? newline : text.size();
    size_t next = complete ? newline + 1 : text.size();
    bool last = next >= text.size();
    std::string_view line = text.substr(start, end - start);
    LineError fail(file, line_number);

    if (!complete) {  // a torn append: the line never got its newline
      parsed.dropped_torn_line = true;
      break;
    }
    if (line.size() > kMaxLineBytes) {
      if (last) {
        parsed.dropped_torn_line = true;
        break;
      }
      return fail(kCorrupt, "line longer than " + std::to_string(kMaxLineBytes) + " bytes; the log is corrupt");
    }
    Json json = Json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded()) {
      if (last) {
        parsed.dropped_torn_line = true;
        break;
      }
      return fail(kCorrupt, "not JSON, and not the last line: the log is corrupt in the middle");
    }
    CORRAL_ASSIGN_OR_RETURN(SessionEvent event, DecodeEvent(json, fail));
    bool is_start = std::holds_alternative<SessionStartData>(event.data);
    if (parsed.events.empty() && !is_start) return fail(kCorrupt, "the first event must be session/start");
    if (!parsed.events.empty() && is_start) {
      return fail(kCorrupt, "a second session/start: a session's working directory never changes");
    }
    parsed.events.push_back(std::move(event));
    parsed.complete_bytes = next;
    start = next;
  }
  return parsed;
}

Status ValidateSessionId(std::string_view id) {
  bool valid = !id.empty() && id.size() <= kMaxIdLength && id[0] != '.';
  for (char c : id) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '_' || c == '-');
  }
  if (valid) return Ok();
  return Error(ErrorKind::kUsage, "invalid session id " + Quote(id) +
                                      ": use 1 to 64 of A-Z a-z 0-9 . _ -, not starting with a dot")
      .WithCode("session_id_invalid");
}

Result<std::string> NewSessionId() {
  CORRAL_ASSIGN_OR_RETURN(std::string bytes, RandomBytes(12));
  return HexEncode(bytes);
}

Result<std::string> SessionDirFor(std::optional<std::string_view> xdg_state_home,
                                  std::optional<std::string_view> home) {
  auto trimmed = [](std::string_view path) {
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    return std::string(path == "/" ? "" : path);
  };
  // XDG: a relative XDG_STATE_HOME is invalid and ignored.
  if (xdg_state_home && !xdg_state_home->empty() && (*xdg_state_home)[0] == '/') {
    return trimmed(*xdg_state_home) + "/corral/sessions";
  }
  if (home && !home->empty() && (*home)[0] == '/') return trimmed(*home) + "/.local/state/corral/sessions";
  return Error(ErrorKind::kConfig,
               "no place for session logs: set XDG_STATE_HOME or HOME to an absolute path")
      .WithCode("session_dir_unknown");
}

Result<std::string> DefaultSessionDir() {
  auto variable = [](const char* name) -> std::optional<std::string_view> {
    const char* value = std::getenv(name);
    if (value == nullptr) return std::nullopt;
    return std::string_view(value);
  };
  return SessionDirFor(variable("XDG_STATE_HOME"), variable("HOME"));
}

// Session

Session::Session(std::string id, std::string path, UniqueFd fd, std::vector<SessionEvent> events)
    : id_(std::move(id)), path_(std::move(path)), fd_(std::move(fd)), events_(std::move(events)) {}

const std::string& Session::cwd() const {
  static const std::string kNone;
  CORRAL_INVARIANT(!events_.empty() && std::holds_alternative<SessionStartData>(events_.front().data),
                   "a loaded session does not begin with session/start");
  if (events_.empty()) return kNone;
  const auto* start = std::get_if<SessionStartData>(&events_.front().data);
  return start != nullptr ? start->cwd : kNone;
}

std::optional<Mode> Session::mode() const {
  std::optional<SandboxModeData> last = EffectiveSandboxMode(events_);
  if (!last) return std::nullopt;
  return last->mode;
}

Status Session::RecordMode(Mode mode, ModeSource source) {
  SessionEvent event;
  event.ts = UtcNow();
  event.data = SandboxModeData{mode, source};
  return Append(std::move(event));
}

Status Session::Append(SessionEvent event) {
  std::string line = event.ToJsonLine() + "\n";
  FileLock lock(fd_.get());
  ssize_t wrote;
  do {
    wrote = ::write(fd_.get(), line.data(), line.size());
  } while (wrote < 0 && errno == EINTR);
  if (wrote < 0) return Error::FromErrno(ErrorKind::kIo, "appending to session log " + path_, "write", errno);
  if (static_cast<size_t>(wrote) != line.size()) {
    return Error(ErrorKind::kIo, "short write to session log " + path_ + "; the torn line is dropped on next load");
  }
  events_.push_back(std::move(event));
  return Ok();
}

// SessionStore

Result<SessionStore> SessionStore::Open(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') {
    return Error(ErrorKind::kConfig, "session directory " + Quote(dir) + " is not an absolute path")
        .WithCode("session_dir_unknown");
  }
  CORRAL_TRY(MakeDirs(dir));
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP || errno == ENOTDIR) {
      return Unsafe("session directory " + dir + " is a symlink or not a directory; use a real directory you own");
    }
    return Error::FromErrno(ErrorKind::kConfig, "opening session directory " + dir, "open", errno);
  }
  SessionStore store(dir, UniqueFd(fd));
  CORRAL_TRY(store.CheckDir());
  return store;
}

Result<SessionStore> SessionStore::OpenDefault() {
  CORRAL_ASSIGN_OR_RETURN(std::string dir, DefaultSessionDir());
  return Open(dir);
}

Status SessionStore::CheckDir() const {
  struct stat info {};
  if (::fstat(dir_fd_.get(), &info) != 0) {
    return Error::FromErrno(ErrorKind::kConfig, "checking session directory " + dir_, "fstat", errno);
  }
  return CheckOwnedAndPrivate(info, dir_, "session directory", "700");
}

Result<Session> SessionStore::Create(std::string_view id, std::string_view cwd) const {
  CORRAL_TRY(ValidateSessionId(id));
  if (cwd.empty() || cwd[0] != '/' || cwd.size() > kMaxCwdBytes || !IsCleanUtf8(cwd)) {
    return Error(ErrorKind::kUsage, "session working directory " + Quote(cwd) +
                                        " must be an absolute path of valid UTF-8")
        .WithCode("session_cwd_invalid");
  }
  CORRAL_TRY(CheckDir());
  std::string name = std::string(id) + ".jsonl";
  std::string path = dir_ + "/" + name;
  int fd = ::openat(dir_fd_.get(), name.c_str(), O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    if (errno == EEXIST) {
      return Error(ErrorKind::kUsage, "session " + std::string(id) + " already exists (" + path + ")")
          .WithCode("session_exists");
    }
    return Error::FromErrno(ErrorKind::kConfig, "creating session log " + path, "openat", errno);
  }
  UniqueFd file(fd);
  SessionEvent start;
  start.ts = UtcNow();
  start.data = SessionStartData{std::string(cwd)};
  Session session(std::string(id), path, std::move(file), {});
  if (Status appended = session.Append(std::move(start)); !appended.ok()) {
    ::unlinkat(dir_fd_.get(), name.c_str(), 0);
    return std::move(appended).error();
  }
  return session;
}

Result<Session> SessionStore::Load(std::string_view id) const {
  CORRAL_TRY(ValidateSessionId(id));
  CORRAL_TRY(CheckDir());
  std::string name = std::string(id) + ".jsonl";
  std::string path = dir_ + "/" + name;
  // Judge the file before opening it, so a file we may not open still gets
  // the ownership message; the descriptor is judged again below.
  struct stat before {};
  if (::fstatat(dir_fd_.get(), name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) {
      return Error(ErrorKind::kUsage, "no session " + std::string(id) + " (" + path + " does not exist)")
          .WithCode("session_not_found");
    }
    return Error::FromErrno(ErrorKind::kConfig, "checking session log " + path, "fstatat", errno);
  }
  CORRAL_TRY(CheckFileStat(before, path));
  int fd = ::openat(dir_fd_.get(), name.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Error::FromErrno(ErrorKind::kConfig, "opening session log " + path, "openat", errno);
  UniqueFd file(fd);
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) {
    return Error::FromErrno(ErrorKind::kConfig, "checking session log " + path, "fstat", errno);
  }
  CORRAL_TRY(CheckFileStat(info, path));

  FileLock lock(file.get());
  CORRAL_ASSIGN_OR_RETURN(std::string text, ReadAll(file.get(), path));
  CORRAL_ASSIGN_OR_RETURN(ParsedSessionLog parsed, ParseSessionLog(text, path));
  if (parsed.events.empty()) {
    return Error(ErrorKind::kConfig, path + ":1: empty session log: no session/start event")
        .WithCode(std::string(kCorrupt));
  }
  if (parsed.dropped_torn_line &&
      ::ftruncate(file.get(), static_cast<off_t>(parsed.complete_bytes)) != 0) {
    return Error::FromErrno(ErrorKind::kIo, "cutting the torn last line off " + path, "ftruncate", errno);
  }
  return Session(std::string(id), path, std::move(file), std::move(parsed.events));
}

}  // namespace corral
