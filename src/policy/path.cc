#include "policy/path.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/mutant.h"
#include "base/unique_fd.h"

namespace corral {
namespace {

int OpenNoSymlinks(const std::string& path) {
  struct open_how how = {};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
}

bool HasDotComponent(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == "." || part == "..") return true;
    start = end + 1;
  }
  return false;
}

// Finds the first component of `path` that is a symlink, for the error text.
std::string FirstSymlink(const std::string& path) {
  std::string prefix;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    prefix = path.substr(0, end);
    struct stat st;
    if (::lstat(prefix.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) return prefix;
    start = end + 1;
  }
  return {};
}

FileType TypeOf(mode_t mode) {
  if (S_ISDIR(mode)) return FileType::kDirectory;
  if (S_ISREG(mode)) return FileType::kRegular;
  return FileType::kOther;
}

Result<PinnedPath> PinAbsolute(const std::string& path, std::string_view what) {
  UniqueFd fd(OpenNoSymlinks(path));
  if (!fd) {
    int err = errno;
    std::string label = std::string(what) + " " + path;
    if (err == ELOOP || err == EXDEV) {
      std::string link = FirstSymlink(path);
      char resolved[PATH_MAX];
      std::string hint;
      if (::realpath(path.c_str(), resolved) != nullptr) hint = std::string("; pass the resolved path ") + resolved;
      return Error(ErrorKind::kUsage, label + ": the path goes through a symlink" +
                                          (link.empty() ? std::string() : " (" + link + ")") + hint);
    }
    if (err == ENOENT || err == ENOTDIR) {
      return Error(ErrorKind::kUsage, label + ": no such file or directory");
    }
    return Error::FromErrno(ErrorKind::kUsage, label + ": cannot open", "openat2", err);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return Error::FromErrno(ErrorKind::kIo, std::string(what) + " " + path + ": cannot stat", "fstat", errno);
  }
  return PinnedPath{path, FileIdentity{st.st_dev, st.st_ino}, TypeOf(st.st_mode)};
}

}  // namespace

std::string ResolvedOrEmpty(const std::string& path) {
  char resolved[PATH_MAX];
  if (::realpath(path.c_str(), resolved) == nullptr) return "";
  return resolved;
}

std::string CollapseSlashes(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (char c : path) {
    if (c == '/' && !out.empty() && out.back() == '/') continue;
    out.push_back(c);
  }
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

bool IsWithin(std::string_view path, std::string_view root) {
  if (root == "/") return !path.empty() && path.front() == '/';
  if (path.size() < root.size() || path.compare(0, root.size(), root) != 0) return false;
  return path.size() == root.size() || path[root.size()] == '/';
}

Result<PinnedPath> PinPath(std::string_view given, std::string_view what) {
  std::string label(what);
  if (given.empty()) return Error(ErrorKind::kUsage, label + ": empty path");
  if (given.find('\0') != std::string_view::npos) {
    return Error(ErrorKind::kUsage, label + ": the path contains a NUL byte");
  }
  if (given.front() != '/') {
    char cwd[PATH_MAX];
    std::string example = ::getcwd(cwd, sizeof cwd) != nullptr ? std::string(cwd) : std::string("/srv/project");
    return Error(ErrorKind::kUsage, label + " " + std::string(given) +
                                        ": relative path; pass an absolute path such as " + example);
  }
  if (HasDotComponent(given) && !MutantActive(Mutant::kGrantDotDot)) {
    return Error(ErrorKind::kUsage, label + " " + std::string(given) +
                                        ": the path has a '.' or '..' component; pass the canonical path");
  }
  if (given.size() >= PATH_MAX) return Error(ErrorKind::kUsage, label + ": path too long");
  return PinAbsolute(CollapseSlashes(given), what);
}

Result<PinnedPath> PinDerivedPath(std::string_view path, std::string_view what) {
  return PinAbsolute(CollapseSlashes(path), what);
}

std::vector<std::string> PathSegments(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

}  // namespace corral
