#include "state/session_log.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/hex.h"
#include "base/invariant.h"
#include "base/random.h"
#include "state/state_dir.h"

namespace corral {
namespace {

constexpr size_t kMaxLogBytes = 16 * 1024 * 1024;
constexpr size_t kMaxIdLength = 64;
constexpr size_t kMaxCwdBytes = 4096;
constexpr std::string_view kCorrupt = "session_log_corrupt";

using Json = nlohmann::json;

std::string Quote(std::string_view text) { return QuoteForError(text); }

// True when `text` is valid UTF-8 without NUL: it survives a JSON round trip
// unchanged (invalid bytes would be dropped by the ignore handler).
bool IsCleanUtf8(std::string_view text) {
  if (text.find('\0') != std::string_view::npos) return false;
  std::string dumped = Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::ignore);
  Json back = Json::parse(dumped, nullptr, /*allow_exceptions=*/false);
  return back.is_string() && back.get_ref<const std::string&>() == text;
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

// Readers share the lock; an append (which may cut a torn tail) holds it alone.
enum class LockKind { kShared, kExclusive };

// Holds flock on a descriptor for one scope.
class FileLock {
 public:
  FileLock(int fd, LockKind kind) : fd_(fd) {
    int operation = kind == LockKind::kShared ? LOCK_SH : LOCK_EX;
    while (::flock(fd_, operation) != 0 && errno == EINTR) {
    }
  }
  ~FileLock() { ::flock(fd_, LOCK_UN); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_;
};

// Truncates the log from `size` to `complete` bytes, if that is shorter.
Result<off_t> Cut(int fd, const std::string& path, off_t size, off_t complete) {
  if (complete < size && ::ftruncate(fd, complete) != 0) {
    return Error::FromErrno(ErrorKind::kIo, "cutting a torn last line off session log " + path, "ftruncate", errno);
  }
  return complete;
}

// Cuts a torn tail (the bytes after the log's last '\n', all of them if it
// has none; see ParseSessionLog) and returns where the complete lines end.
// Call it only under the exclusive lock, right before an append.
Result<off_t> CutTornTail(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return Error::FromErrno(ErrorKind::kIo, "checking session log " + path, "fstat", errno);
  char buffer[4096];
  for (off_t end = info.st_size; end > 0;) {
    size_t want = static_cast<size_t>(std::min<off_t>(end, sizeof buffer));
    ssize_t got = ::pread(fd, buffer, want, end - static_cast<off_t>(want));
    if (got < 0 && errno == EINTR) continue;
    if (got != static_cast<ssize_t>(want)) {
      return Error::FromErrno(ErrorKind::kIo, "reading the end of session log " + path, "pread",
                              got < 0 ? errno : EIO);
    }
    for (size_t i = want; i > 0; --i) {
      if (buffer[i - 1] == '\n') return Cut(fd, path, info.st_size, end - static_cast<off_t>(want - i));
    }
    end -= static_cast<off_t>(want);
  }
  return Cut(fd, path, info.st_size, 0);
}
}  // namespace

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

std::vector<std::string> Session::allowed_classes(Mode mode, std::string_view workspace) const {
  return SessionAllowedClasses(events_, mode, workspace);
}

Status Session::RecordApproval(ApprovalAllowData approval) {
  if (!IsSessionApprovalClass(approval.class_key)) {
    return Error(ErrorKind::kUsage, "approval class " + Quote(approval.class_key) + " cannot be recorded in a session");
  }
  if (!approval.workspace.empty() && approval.workspace[0] != '/') {
    return Error(ErrorKind::kUsage, "approval workspace " + Quote(approval.workspace) + " is not an absolute path");
  }
  return Append(SessionEvent::Stamped(std::move(approval)));
}

Status Session::RecordMode(Mode mode, ModeSource source) {
  return Append(SessionEvent::Stamped(SandboxModeData{mode, source}));
}

Status Session::Append(SessionEvent event) {
  std::string line = event.ToJsonLine() + "\n";
  FileLock lock(fd_.get(), LockKind::kExclusive);
  // A torn tail (bytes after the last '\n', left by a crash mid-append) is
  // cut now, under the lock, so this line does not get glued onto it. The
  // end is found afresh: other processes may have appended since Load.
  CORRAL_ASSIGN_OR_RETURN(off_t end, CutTornTail(fd_.get(), path_));
  ssize_t wrote;
  do {
    wrote = ::write(fd_.get(), line.data(), line.size());
  } while (wrote < 0 && errno == EINTR);
  if (wrote >= 0 && static_cast<size_t>(wrote) == line.size()) {
    events_.push_back(std::move(event));
    return Ok();
  }
  // A failed or short write: cut back to the last complete line (best
  // effort), so neither readers nor later appends see torn bytes.
  int write_errno = wrote < 0 ? errno : 0;
  std::string cut_back = ::ftruncate(fd_.get(), end) == 0
                             ? "; cut back to the last complete line"
                             : "; cutting the torn bytes back off failed (" + std::string(std::strerror(errno)) +
                                   "), readers drop them and the next append cuts them";
  if (wrote < 0) {
    return Error::FromErrno(ErrorKind::kIo, "appending to session log " + path_ + cut_back, "write", write_errno);
  }
  return Error(ErrorKind::kIo, "short write to session log " + path_ + " (" + std::to_string(wrote) + " of " +
                                   std::to_string(line.size()) + " bytes)" + cut_back);
}

// SessionStore

Result<SessionStore> SessionStore::Open(const std::string& dir) {
  if (dir.empty() || dir[0] != '/') {
    return Error(ErrorKind::kConfig, "session directory " + Quote(dir) + " is not an absolute path")
        .WithCode("session_dir_unknown");
  }
  // Reached without following a symlink on the way (state/state_dir.h).
  Result<UniqueFd> fd = OpenDirectoryWithoutSymlinks(dir, StateDir::Create::kYes);
  if (!fd.ok()) {
    if (fd.error().code() == kStateDirUnsafe) {
      return Unsafe("session directory " + dir + ": " + fd.error().message() + "; use a real directory you own");
    }
    return Error(ErrorKind::kConfig, "opening session directory " + dir + ": " + fd.error().ToString());
  }
  SessionStore store(dir, std::move(fd).value());
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
  SessionEvent start = SessionEvent::Stamped(SessionStartData{std::string(cwd)});
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
  // Read-write so the Session can append later; Load itself never writes.
  int fd = ::openat(dir_fd_.get(), name.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return Error::FromErrno(ErrorKind::kConfig, "opening session log " + path, "openat", errno);
  UniqueFd file(fd);
  struct stat info {};
  if (::fstat(file.get(), &info) != 0) {
    return Error::FromErrno(ErrorKind::kConfig, "checking session log " + path, "fstat", errno);
  }
  CORRAL_TRY(CheckFileStat(info, path));

  std::string text;
  {
    FileLock lock(file.get(), LockKind::kShared);
    CORRAL_ASSIGN_OR_RETURN(text, ReadAll(file.get(), path));
  }
  // A torn last line is dropped here and left in the file: reading never
  // changes the log. The next Append cuts it.
  CORRAL_ASSIGN_OR_RETURN(ParsedSessionLog parsed, ParseSessionLog(text, path));
  if (parsed.events.empty()) {
    return Error(ErrorKind::kConfig, path + ":1: empty session log: no session/start event")
        .WithCode(std::string(kCorrupt));
  }
  return Session(std::string(id), path, std::move(file), std::move(parsed.events));
}

}  // namespace corral
