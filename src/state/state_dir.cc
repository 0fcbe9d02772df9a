#include "state/state_dir.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "policy/path.h"

namespace corral {
namespace {

std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

Error Unsafe(const std::string& path, const std::string& why) {
  return Error(ErrorKind::kPolicy, "corral's state directory is not safe to use: " + path + " " + why +
                                       "; a sandboxed command could forge what corral reads back there, so "
                                       "nothing was run")
      .WithCode(kStateDirUnsafe);
}

uid_t OverflowUid() {
  static const uid_t uid = [] {
    unsigned value = 65534;
    if (std::FILE* file = std::fopen("/proc/sys/kernel/overflowuid", "re")) {
      if (std::fscanf(file, "%u", &value) != 1) value = 65534;
      std::fclose(file);
    }
    return static_cast<uid_t>(value);
  }();
  return uid;
}

enum class Rule {
  kNone,     // checked by the caller
  kAbove,    // above `corral`: root's or the caller's; writable by others only when root's and sticky
  kPrivate,  // `corral` and below: the caller's, writable by no one else
};

// `seen`, when given, gets what fstat said.
Result<void> Check(int fd, const std::string& path, Rule rule, struct stat* seen = nullptr) {
  if (rule == Rule::kNone) return {};
  struct stat own;
  struct stat& st = seen != nullptr ? *seen : own;
  if (::fstat(fd, &st) != 0) return Error::FromErrno(ErrorKind::kIo, "cannot examine " + path, "fstat", errno);
  if (!S_ISDIR(st.st_mode)) return Unsafe(path, "is not a directory");
  uid_t me = ::geteuid();
  bool writable_by_others = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (rule == Rule::kPrivate) {
    if (st.st_uid != me) {
      return Unsafe(path, "is owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " +
                              std::to_string(me) + ")");
    }
    if (writable_by_others) return Unsafe(path, "is writable by group or others (mode " + OctalMode(st.st_mode) + ")");
    return {};
  }
  // In a user namespace (a corral run inside another), root's directories
  // show as the overflow uid.
  if (st.st_uid != me && st.st_uid != 0 && st.st_uid != OverflowUid()) {
    return Unsafe(path, "is owned by uid " + std::to_string(st.st_uid) + ", neither by you nor by root");
  }
  // Sticky (/tmp): others may add entries but not rename or remove ours.
  if (writable_by_others && (st.st_mode & S_ISVTX) == 0) {
    return Unsafe(path, "is writable by group or others and not sticky (mode " + OctalMode(st.st_mode) + ")");
  }
  return {};
}

// `name` in `dir`, never through a symlink; created 0700 when missing and
// `create` says so.
Result<UniqueFd> Step(int dir, const std::string& name, const std::string& path, StateDir::Create create, Rule rule) {
  if (name == "." || name == "..") return Unsafe(path, "has a '.' or '..' component");
  UniqueFd fd(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd && errno == ENOENT && create == StateDir::Create::kYes) {
    if (::mkdirat(dir, name.c_str(), 0700) != 0 && errno != EEXIST) {
      return Error::FromErrno(ErrorKind::kIo, "cannot create corral's state directory " + path, "mkdir", errno)
          .WithCode(kStateDirUnavailable);
    }
    fd.Reset(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  }
  if (!fd) {
    int error = errno;
    struct stat st;
    if (error == ELOOP || (error == ENOTDIR && ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                           S_ISLNK(st.st_mode))) {
      return Unsafe(path, "is a symlink");
    }
    if (error == ENOTDIR) return Unsafe(path, "is not a directory");
    errno = error;
    return Error::FromErrno(ErrorKind::kIo, "cannot open corral's state directory " + path, "open", errno)
        .WithCode(kStateDirUnavailable);
  }
  CORRAL_TRY(Check(fd.get(), path, rule));
  return fd;
}

}  // namespace

Result<UniqueFd> OpenDirectoryWithoutSymlinks(const std::string& path, StateDir::Create create) {
  if (path.empty() || path[0] != '/') {
    return Error(ErrorKind::kIo, path + " is not an absolute path").WithCode(kStateDirUnavailable);
  }
  UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return Error::FromErrno(ErrorKind::kIo, "cannot open /", "open", errno);
  std::vector<std::string> names = PathSegments(path);
  std::string walked;
  for (size_t i = 0; i < names.size(); ++i) {
    CORRAL_TRY(Check(dir.get(), walked.empty() ? "/" : walked, Rule::kAbove));
    walked += "/" + names[i];
    CORRAL_ASSIGN_OR_RETURN(dir, Step(dir.get(), names[i], walked, create, Rule::kNone));
  }
  return dir;
}

std::string StateDir::BaseFor(const std::string& home) {
  const char* state = ::getenv("XDG_STATE_HOME");
  return state != nullptr && state[0] == '/' ? std::string(state) : home + "/.local/state";
}

Result<StateDir> StateDir::Open(const std::string& home, Create create) { return OpenBelow(BaseFor(home), create); }

Result<StateDir> StateDir::OpenBelow(const std::string& base, Create create) {
  if (base.empty() || base[0] != '/') {
    return Error(ErrorKind::kIo, "no place for corral's state: " + base + " is not absolute")
        .WithCode(kStateDirUnavailable);
  }
  UniqueFd dir(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return Error::FromErrno(ErrorKind::kIo, "cannot open /", "open", errno);
  CORRAL_TRY(Check(dir.get(), "/", Rule::kAbove));
  std::string path;
  for (const std::string& name : PathSegments(base)) {
    path += "/" + name;
    CORRAL_ASSIGN_OR_RETURN(dir, Step(dir.get(), name, path, create, Rule::kAbove));
  }
  path += "/corral";
  StateDir state;
  CORRAL_ASSIGN_OR_RETURN(state.fd_, Step(dir.get(), "corral", path, create, Rule::kPrivate));
  state.path_ = path;
  return state;
}

Result<StateDir> StateDir::Duplicate() const {
  if (!fd_) return Error(ErrorKind::kIo, "no state directory").WithCode(kStateDirUnavailable);
  StateDir copy;
  copy.fd_.Reset(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!copy.fd_) return Error::FromErrno(ErrorKind::kIo, "cannot duplicate a descriptor", "fcntl", errno);
  struct stat st;
  CORRAL_TRY(Check(copy.fd_.get(), path_, Rule::kPrivate, &st));
  // Removed since it was opened: what is written there is lost with it.
  if (st.st_nlink == 0) {
    return Error(ErrorKind::kIo, "corral's state directory " + path_ + " was removed since it was opened")
        .WithCode(kStateDirUnavailable);
  }
  copy.path_ = path_;
  return copy;
}

Result<UniqueFd> StateDir::Subdir(const std::string& relative, Create create) const {
  if (!fd_) return Error(ErrorKind::kIo, "no state directory").WithCode(kStateDirUnavailable);
  UniqueFd dir(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
  if (!dir) return Error::FromErrno(ErrorKind::kIo, "cannot duplicate a descriptor", "fcntl", errno);
  std::string path = path_;
  for (const std::string& name : PathSegments("/" + relative)) {
    path += "/" + name;
    CORRAL_ASSIGN_OR_RETURN(dir, Step(dir.get(), name, path, create, Rule::kPrivate));
  }
  return dir;
}

}  // namespace corral
