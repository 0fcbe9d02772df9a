#include "repair/quarantine.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "base/directory_names.h"
#include "base/mutant.h"
#include "policy/path.h"
#include "repair/sweep.h"

namespace corral {
namespace {

Error Usage(const std::string& message) { return Error(ErrorKind::kUsage, "quarantine: " + message); }

UniqueFd OpenDirectoryIn(int dir, const std::string& name) {
  return UniqueFd(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

bool IsOneName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

Status CheckQuarantineArguments(const std::string& run, const std::string& path) {
  if (!IsOneName(run)) return Usage("RUN " + run + " is not a run's name (see `corral quarantine list`)");
  if (path.empty() || path.front() != '/') return Usage(path + ": relative path; pass the absolute path it had");
  std::vector<std::string> names = PathSegments(path);
  if (names.empty()) return Usage("/ is never quarantined");
  for (const std::string& name : names) {
    if (name == "." || name == "..") return Usage(path + ": the path has a '.' or '..' component");
  }
  return Ok();
}

namespace {

std::string KindOf(mode_t mode) {
  if (S_ISREG(mode)) return "file";
  if (S_ISDIR(mode)) return "directory";
  if (S_ISLNK(mode)) return "symlink";
  return "other";
}

// The NUL-separated paths of <run>.moved, each once, in order.
std::vector<std::string> MovedPaths(int quarantine, const std::string& run) {
  std::vector<std::string> paths;
  std::string name = run + kQuarantineListSuffix;
  UniqueFd fd(::openat(quarantine, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return paths;
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd.get(), buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
  size_t start = 0;
  for (size_t end; (end = text.find('\0', start)) != std::string::npos; start = end + 1) {
    std::string path = text.substr(start, end - start);
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace

Result<QuarantinedItem> OpenQuarantined(const StateDir& state, const std::string& run, const std::string& path) {
  CORRAL_TRY(CheckQuarantineArguments(run, path));
  std::vector<std::string> names = PathSegments(path);
  std::vector<std::string> dirs = {"quarantine", run};
  dirs.insert(dirs.end(), names.begin(), names.end() - 1);
  UniqueFd dir(::fcntl(state.fd(), F_DUPFD_CLOEXEC, 0));
  for (const std::string& name : dirs) {
    if (!dir) break;
    dir = OpenDirectoryIn(dir.get(), name);
  }
  QuarantinedItem item;
  item.name = names.back();
  if (!dir || ::fstatat(dir.get(), item.name.c_str(), &item.st, AT_SYMLINK_NOFOLLOW) != 0) {
    return Usage("nothing from " + path + " is in run " + run + "'s quarantine (see `corral quarantine list`)");
  }
  item.parent = std::move(dir);
  return item;
}

Result<std::vector<QuarantinedEntry>> ListQuarantine(const StateDir& state) {
  std::vector<QuarantinedEntry> entries;
  UniqueFd quarantine = OpenDirectoryIn(state.fd(), "quarantine");
  if (!quarantine) {
    if (errno == ENOENT) return entries;
    return Error::FromErrno(ErrorKind::kIo, "quarantine: cannot open " + state.path() + "/quarantine", "open", errno);
  }
  for (const std::string& run : DirectoryNames(quarantine.get())) {
    struct stat st;
    if (::fstatat(quarantine.get(), run.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) continue;
    for (const std::string& path : MovedPaths(quarantine.get(), run)) {
      Result<QuarantinedItem> item = OpenQuarantined(state, run, path);
      if (!item.ok()) continue;  // restored, or removed by hand
      entries.push_back({run, path, KindOf(item->st.st_mode)});
    }
  }
  return entries;
}

Status RestoreQuarantined(const StateDir& state, const std::string& run, const std::string& path, Overwrite overwrite) {
  CORRAL_ASSIGN_OR_RETURN(QuarantinedItem item, OpenQuarantined(state, run, path));
  const size_t slash = path.rfind('/');
  const std::string parent = slash == 0 ? std::string(1, '/') : path.substr(0, slash);
  // No symlink anywhere on the way: one a confined command planted in the
  // workspace would send the entry somewhere else.
  struct open_how how = {};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  if (MutantActive(Mutant::kRestoreNofollow)) how.resolve = 0;  // the mutant: symlinks on the way are followed
  UniqueFd to(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, parent.c_str(), &how, sizeof how)));
  if (!to) {
    int err = errno;
    if (err == ELOOP) {
      return Usage("cannot restore " + path + ": a symlink is on the way to " + parent +
                   " (put the real directory back first); nothing was moved");
    }
    return Error::FromErrno(ErrorKind::kIo, "quarantine: cannot open " + parent + "; nothing was moved", "openat2",
                            err);
  }
  const bool refuse = overwrite == Overwrite::kRefuse && !MutantActive(Mutant::kRestoreNoreplace);  // the mutant
  unsigned flags = refuse ? RENAME_NOREPLACE : 0;
  if (::renameat2(item.parent.get(), item.name.c_str(), to.get(), item.name.c_str(), flags) != 0) {
    int err = errno;
    if (err == EEXIST || err == ENOTEMPTY) {
      return Usage("cannot restore " + path + ": something is there now; look at it, then pass --overwrite to "
                   "replace it; nothing was moved");
    }
    if (err == EXDEV) {
      return Error::FromErrno(ErrorKind::kIo, "quarantine: cannot restore " + path + ": the quarantine is on another "
                                              "filesystem; copy it back from " + state.path() + "/quarantine/" + run +
                                              path + " yourself", "renameat2", err);
    }
    return Error::FromErrno(ErrorKind::kIo, "quarantine: cannot restore " + path + "; nothing was moved",
                            "renameat2", err);
  }
  return Ok();
}

}  // namespace corral
