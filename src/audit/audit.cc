#include "audit/audit.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "base/mutant.h"
#include "base/stream_write.h"

namespace corral {
namespace {

std::string Timestamp() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  struct tm utc;
  ::gmtime_r(&now.tv_sec, &utc);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%06ldZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, now.tv_nsec / 1000);
  return buffer;
}

std::string NewRunId() {
  unsigned char bytes[6] = {};
  if (::getrandom(bytes, sizeof bytes, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bytes)) {
    struct timespec now;
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    for (size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<unsigned char>(now.tv_nsec >> (i * 5));
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%x.%02x%02x%02x%02x%02x%02x", static_cast<unsigned>(::getpid()), bytes[0],
                bytes[1], bytes[2], bytes[3], bytes[4], bytes[5]);
  return buffer;
}

// All of `text` with as few write(2)s as the kernel allows: one, for a
// record on a regular file.
void WriteAll(int fd, std::string_view text) {
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    left -= static_cast<size_t>(n);
  }
}

}  // namespace

std::string_view FailureReasonName(FailureReason reason) {
  switch (reason) {
    case FailureReason::kUnsupported: return "unsupported";
    case FailureReason::kNamespace: return "namespace";
    case FailureReason::kMount: return "mount";
    case FailureReason::kHardening: return "hardening";
    case FailureReason::kLandlock: return "landlock";
    case FailureReason::kSeccomp: return "seccomp";
    case FailureReason::kUsage: return "usage";
    case FailureReason::kConfig: return "config";
    case FailureReason::kPolicy: return "policy";
    case FailureReason::kPinMismatch: return "pin_mismatch";
    case FailureReason::kExec: return "exec";
    case FailureReason::kNotFound: return "not_found";
    case FailureReason::kTimeout: return "timeout";
    case FailureReason::kLost: return "lost";
    case FailureReason::kDenied: return "denied";
    case FailureReason::kInternal: return "internal";
  }
  return "internal";
}

FailureReason FailureReasonFor(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kUsage: return FailureReason::kUsage;
    case ErrorKind::kConfig: return FailureReason::kConfig;
    case ErrorKind::kPolicy: return FailureReason::kPolicy;
    case ErrorKind::kPinMismatch: return FailureReason::kPinMismatch;
    case ErrorKind::kUnsupported: return FailureReason::kUnsupported;
    case ErrorKind::kNamespace: return FailureReason::kNamespace;
    case ErrorKind::kMount: return FailureReason::kMount;
    case ErrorKind::kHardening: return FailureReason::kHardening;
    case ErrorKind::kLandlock: return FailureReason::kLandlock;
    case ErrorKind::kSeccomp: return FailureReason::kSeccomp;
    case ErrorKind::kExec: return FailureReason::kExec;
    case ErrorKind::kNotFound: return FailureReason::kNotFound;
    case ErrorKind::kTimeout: return FailureReason::kTimeout;
    case ErrorKind::kDenied: return FailureReason::kDenied;
    case ErrorKind::kIo:
    case ErrorKind::kInternal: return FailureReason::kInternal;
  }
  return FailureReason::kInternal;
}

AuditEvent FailedEvent(const Error& error, std::string_view policy_fingerprint) {
  AuditEvent event("failed");
  event.Set("source", "corral")
      .Set("reason", FailureReasonName(FailureReasonFor(error.kind())))
      .Set("detail", error.ToString());
  if (!policy_fingerprint.empty()) event.Set("policy", policy_fingerprint);
  if (!error.code().empty()) event.Set("code", error.code());
  return event;
}

AuditEvent::AuditEvent(std::string_view event) : json_(std::make_unique<nlohmann::json>(nlohmann::json::object())) {
  (*json_)["event"] = event;
}
AuditEvent::AuditEvent(AuditEvent&&) noexcept = default;
AuditEvent& AuditEvent::operator=(AuditEvent&&) noexcept = default;
AuditEvent::~AuditEvent() = default;

AuditEvent& AuditEvent::Set(std::string_view key, std::string_view value) {
  (*json_)[std::string(key)] = value;
  return *this;
}
AuditEvent& AuditEvent::Set(std::string_view key, int64_t value) {
  (*json_)[std::string(key)] = value;
  return *this;
}
AuditEvent& AuditEvent::Set(std::string_view key, bool value) {
  (*json_)[std::string(key)] = value;
  return *this;
}
AuditEvent& AuditEvent::Set(std::string_view key, const std::vector<std::string>& values) {
  (*json_)[std::string(key)] = values;
  return *this;
}
AuditEvent& AuditEvent::SetJson(std::string_view key, const nlohmann::json& value) {
  (*json_)[std::string(key)] = value;
  return *this;
}

AuditTrail::AuditTrail(int fd, UniqueFd owned) : fd_(fd), owned_(std::move(owned)), run_id_(NewRunId()) {}

// The one trail that may not be a file (ToFile and InDirectory refuse any other).
AuditTrail AuditTrail::ToStderr() {
  AuditTrail trail(STDERR_FILENO, UniqueFd());
  struct stat st;
  if (::fstat(STDERR_FILENO, &st) == 0 && !S_ISREG(st.st_mode)) trail.destination_ = Destination::kStream;
  return trail;
}

AuditTrail AuditTrail::Discard() { return AuditTrail(-1, UniqueFd()); }

namespace {

Error RefuseTrail(const std::string& label, const std::string& why, const char* syscall = nullptr, int err = 0) {
  std::string message = label + ": " + why + "; nothing was run";
  Error error = syscall != nullptr ? Error::FromErrno(ErrorKind::kUsage, message, syscall, err)
                                   : Error(ErrorKind::kUsage, message);
  return std::move(error).WithCode("audit_file_refused");
}

// Opens `name` in `dir` (AT_FDCWD: `name` is a path) for appending, never
// through a symlink, never blocking on a FIFO, never taking a terminal, and
// judges what was opened by fstat before anything is written.
Result<UniqueFd> OpenTrailFile(int dir, const std::string& name, const std::string& label, struct stat* st) {
  const bool checked = !MutantActive(Mutant::kAuditChecks);
  const int nofollow = checked ? O_NOFOLLOW : 0;
  const int append = MutantActive(Mutant::kTrailAppend) ? 0 : O_APPEND;  // the mutant: writes start at offset 0
  UniqueFd fd(::openat(dir, name.c_str(), O_WRONLY | append | O_CREAT | O_CLOEXEC | nofollow | O_NONBLOCK | O_NOCTTY,
                       0600));
  if (!fd) {
    int err = errno;
    if (err == ELOOP) return RefuseTrail(label, "it is a symlink; name the file itself", "open", err);
    return RefuseTrail(label, "cannot open it", "open", err);
  }
  if (::fstat(fd.get(), st) != 0) return RefuseTrail(label, "cannot examine it", "fstat", errno);
  if (!S_ISREG(st->st_mode) && checked) return RefuseTrail(label, "it is not a regular file");
  // A second name is a way to rewrite the trail that no check of this name
  // sees (a hard link a sandboxed command made in its workspace).
  if (st->st_nlink != 1 && checked) {
    return RefuseTrail(label, "it has " + std::to_string(st->st_nlink) +
                                  " hard links; the trail must have exactly one name");
  }
  if (st->st_uid != ::geteuid() && checked) {
    return RefuseTrail(label, "it belongs to uid " + std::to_string(st->st_uid) + ", not to you");
  }
  // The trail is the caller's alone: one made readable by others (0644
  // under a usual umask) is narrowed, on the open file.
  const bool narrow = !MutantActive(Mutant::kTrailMode);  // the mutant: the mode is kept as found
  if (narrow && (st->st_mode & 07777) != 0600 && ::fchmod(fd.get(), 0600) != 0) {
    return RefuseTrail(label, "cannot make it private (mode 0600)", "fchmod", errno);
  }
  int flags = ::fcntl(fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return RefuseTrail(label, "cannot set it up", "fcntl", errno);
  }
  return fd;
}

}  // namespace

Status CheckAuditTrailName(const std::string& name) {
  if (name == "-" || (!name.empty() && name.front() == '/')) return Ok();
  if (MutantActive(Mutant::kAuditRelative)) return Ok();  // the mutant: a relative name is taken as it is
  return RefuseTrail("--audit " + name, "relative path; pass an absolute path (as for grants), or - for stderr");
}

Result<AuditTrail> AuditTrail::ToFile(const std::string& path) {
  const std::string label = "--audit " + path;
  if (path == "-") return RefuseTrail(label, "- is stderr, not a file");
  CORRAL_TRY(CheckAuditTrailName(path));
  struct stat st;
  CORRAL_ASSIGN_OR_RETURN(UniqueFd fd, OpenTrailFile(AT_FDCWD, path, label, &st));
  // The path of what was opened, not of what was typed: one through a
  // symlinked directory names the same file canonically.
  char resolved[PATH_MAX];
  std::string link = "/proc/self/fd/" + std::to_string(fd.get());
  ssize_t n = ::readlink(link.c_str(), resolved, sizeof resolved - 1);
  std::string canonical;
  if (n > 0 && resolved[0] == '/') {
    canonical.assign(resolved, static_cast<size_t>(n));
  } else if (::realpath(path.c_str(), resolved) != nullptr) {
    canonical = resolved;
  } else {
    return Error::FromErrno(ErrorKind::kUsage, label + ": cannot resolve its canonical path", "realpath", errno);
  }
  int raw = fd.get();
  AuditTrail trail(raw, std::move(fd));
  trail.file_ = std::move(canonical);
  return trail;
}

Result<AuditTrail> AuditTrail::InDirectory(int dir, const std::string& dir_path) {
  const std::string path = dir_path + "/" + kAuditFileName;
  const std::string label = "the audit trail " + path;
  // One rotation at a time: without the lock two runs could both rename,
  // the second moving the first one's fresh file over the rotated one.
  UniqueFd lock(::openat(dir, kAuditLockName, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY, 0600));
  if (!lock) return RefuseTrail(label, "cannot open its lock " + dir_path + "/" + kAuditLockName, "open", errno);
  struct stat st;
  if (::fstat(lock.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return RefuseTrail(label, "its lock " + dir_path + "/" + kAuditLockName + " is not a regular file of yours");
  }
  const bool locked = !MutantActive(Mutant::kTrailRotateLock);  // the mutant: rotation without the lock
  while (locked && ::flock(lock.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return RefuseTrail(label, "cannot lock it", "flock", errno);
  }
  CORRAL_ASSIGN_OR_RETURN(UniqueFd fd, OpenTrailFile(dir, kAuditFileName, label, &st));
  if (st.st_size >= kAuditFileCap) {
    if (::renameat(dir, kAuditFileName, dir, kAuditRotatedName) != 0) {
      return RefuseTrail(label, "cannot rotate it to " + std::string(kAuditRotatedName), "renameat", errno);
    }
    CORRAL_ASSIGN_OR_RETURN(fd, OpenTrailFile(dir, kAuditFileName, label, &st));
  }
  int raw = fd.get();
  AuditTrail trail(raw, std::move(fd));
  trail.file_ = path;
  return trail;
}

void AuditTrail::Record(const AuditEvent& event) const {
  if (fd_ < 0) return;
  nlohmann::json line = nlohmann::json::object();
  line["ts"] = Timestamp();
  line["run"] = run_id_;
  line.update(event.json());
  // ASCII only: a path or a program name with a C1 control (U+0080-U+009F)
  // in it reaches the file or the terminal as \u escapes, never raw; bytes
  // that are not UTF-8 become U+FFFD.
  std::string text = line.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace) + "\n";
  if (MutantActive(Mutant::kTrailOneWrite)) {  // the mutant: the line, then its newline
    text.pop_back();
    WriteAll(fd_, text);
    text = "\n";
  }
  if (destination_ == Destination::kFile) return WriteAll(fd_, text);
  (void)WriteToStream(fd_, text);
}

}  // namespace corral
