#include "tools/fence.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "base/mutant.h"
#include "base/replace_file.h"
#include "policy/path.h"

namespace corral::tools {
namespace {

Error Denied(const std::string& path, const std::string& why) {
  return Error(ErrorKind::kDenied, path + ": " + why);
}

// The host path the kernel names an open descriptor by.
Result<std::string> KernelPath(int fd) {
  char buffer[PATH_MAX + 1];
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(link.c_str(), buffer, PATH_MAX);
  if (n < 0) return Error::FromErrno(ErrorKind::kIo, "cannot name an open file", "readlink", errno);
  std::string path(buffer, static_cast<size_t>(n));
  if (path.empty() || path[0] != '/' || path.ends_with(" (deleted)")) {
    return Error(ErrorKind::kIo, "the file was removed while it was opened");
  }
  return path;
}

std::string_view OpenErrorReason(int err) {
  switch (err) {
    case EXDEV: return "the path leads out of its grant (through `..` or a symlink)";
    case ELOOP: return "the path goes through a magic link or too many symlinks";
    case EAGAIN: return "the tree changed while the path was resolved; try again";
    default: return {};
  }
}

}  // namespace

bool InsideRepositoryMetadata(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part == ".git" || part == ".hg") return true;
    start = end + 1;
  }
  return false;
}

Result<Fence> Fence::Open(const Policy& policy) {
  Fence fence(policy);
  for (const PathGrant& grant : policy.grants()) {
    if (!grant.path.is_dir()) continue;
    struct open_how how = {};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, grant.path.path.c_str(), &how, sizeof how)));
    struct stat st;
    if (!fd || ::fstat(fd.get(), &st) != 0 || FileIdentity{st.st_dev, st.st_ino} != grant.path.id) {
      return Error(ErrorKind::kPolicy, grant.path.path + ": the grant moved or was replaced after the policy was built");
    }
    fence.roots_.push_back(Root{grant.path.path, std::move(fd)});
  }
  return fence;
}

Result<std::string> Fence::Absolute(std::string_view path) const {
  if (path.empty()) return Error(ErrorKind::kUsage, "the path is empty");
  if (path.find('\0') != std::string_view::npos) return Error(ErrorKind::kUsage, "the path holds a NUL byte");
  if (path.size() > PATH_MAX) return Error(ErrorKind::kUsage, "the path is longer than PATH_MAX");
  std::string joined;
  if (path[0] == '/') {
    joined = path;
  } else {
    const Policy& policy = *policy_;
    std::string base = policy.GrantFor(policy.host().cwd) != nullptr ? policy.host().cwd
                       : policy.workspace()                          ? policy.workspace()->path
                                                                     : "/";
    joined = base + "/" + std::string(path);
  }
  // Tidy `//` and `.`; `..` stays for the kernel to resolve beneath a root.
  std::string out;
  size_t start = 0;
  while (start < joined.size()) {
    size_t end = joined.find('/', start);
    if (end == std::string::npos) end = joined.size();
    std::string_view part(joined.data() + start, end - start);
    if (!part.empty() && part != ".") {
      out += '/';
      out += part;
    }
    start = end + 1;
  }
  return out.empty() ? std::string("/") : out;
}

Result<std::pair<const Fence::Root*, std::string>> Fence::RootOf(const std::string& absolute) const {
  const Root* best = nullptr;
  for (const Root& root : roots_) {
    if (IsWithin(absolute, root.path) && (best == nullptr || root.path.size() > best->path.size())) best = &root;
  }
  if (best == nullptr) return Denied(absolute, "not inside any grant of this sandbox");
  std::string rest = absolute.size() == best->path.size() ? "." : absolute.substr(best->path == "/" ? 1 : best->path.size() + 1);
  return std::make_pair(best, rest);
}

Result<FencedFile> Fence::Resolve(std::string_view path, int flags) const {
  CORRAL_ASSIGN_OR_RETURN(std::string absolute, Absolute(path));
  CORRAL_ASSIGN_OR_RETURN(auto found, RootOf(absolute));
  struct open_how how = {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_NO_MAGICLINKS;
  // The fence_beneath mutant (base/mutant.h): `..` and symlinks may climb out of the root.
  if (!MutantActive(Mutant::kFenceBeneath)) how.resolve |= RESOLVE_BENEATH;
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, found.first->fd.get(), found.second.c_str(), &how, sizeof how)));
  if (!fd) {
    int err = errno;
    std::string_view reason = OpenErrorReason(err);
    if (!reason.empty()) return Denied(absolute, std::string(reason));
    return Error::FromErrno(err == ENOENT ? ErrorKind::kNotFound : ErrorKind::kIo, absolute, "openat2", err);
  }
  CORRAL_ASSIGN_OR_RETURN(std::string real, KernelPath(fd.get()));
  PathView view = ViewOf(*policy_, real);
  if (view == PathView::kHidden && !MutantActive(Mutant::kFenceHidden)) {
    return Denied(absolute, real == absolute ? "hidden by the policy (a mask, forbid_read, or no grant)"
                                             : "leads to " + real + ", which the policy hides");
  }
  return FencedFile{std::move(fd), std::move(real), view};
}

Result<FencedFile> Fence::OpenRead(std::string_view path) const {
  CORRAL_ASSIGN_OR_RETURN(FencedFile file, Resolve(path, O_RDONLY | O_NONBLOCK | O_NOCTTY));
  struct stat st;
  if (::fstat(file.fd.get(), &st) != 0) return Error::FromErrno(ErrorKind::kIo, file.path, "fstat", errno);
  if (S_ISDIR(st.st_mode)) return Error(ErrorKind::kUsage, file.path + ": is a directory (use ls)");
  if (!S_ISREG(st.st_mode)) return Error(ErrorKind::kUsage, file.path + ": not a regular file");
  int flags = ::fcntl(file.fd.get(), F_GETFL);
  if (flags >= 0) ::fcntl(file.fd.get(), F_SETFL, flags & ~O_NONBLOCK);
  return file;
}

Result<FencedFile> Fence::OpenDirectory(std::string_view path) const {
  return Resolve(path, O_RDONLY | O_DIRECTORY);
}

Result<FencedName> Fence::OpenForWrite(std::string_view path) const {
  CORRAL_ASSIGN_OR_RETURN(std::string absolute, Absolute(path));
  size_t slash = absolute.rfind('/');
  std::string name = absolute.substr(slash + 1);
  if (name.empty() || name == "..") return Error(ErrorKind::kUsage, absolute + ": names no file");
  std::string parent_path = slash == 0 ? "/" : absolute.substr(0, slash);
  CORRAL_ASSIGN_OR_RETURN(FencedFile parent, Resolve(parent_path, O_PATH | O_DIRECTORY));
  std::string target = parent.path == "/" ? "/" + name : parent.path + "/" + name;
  if (!MutantActive(Mutant::kFenceProtected)) {
    PathView view = ViewOf(*policy_, target);
    if (view == PathView::kProtected) {
      return Denied(target, "a protected path (it runs outside the sandbox later: git hooks and config, shell and "
                            "editor startup files, agent settings)");
    }
    if (InsideRepositoryMetadata(target)) {
      return Denied(target, "inside a .git or .hg directory, whose hooks and config run outside the sandbox");
    }
  }
  PathView view = ViewOf(*policy_, target);
  if (view == PathView::kHidden) return Denied(target, "hidden by the policy");
  if (view == PathView::kReadOnly) return Denied(target, "read-only in this sandbox");
  struct stat st;
  if (::fstatat(parent.fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISDIR(st.st_mode)) return Error(ErrorKind::kUsage, target + ": is a directory");
    if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) return Error(ErrorKind::kUsage, target + ": not a regular file");
  }
  return FencedName{std::move(parent.fd), std::move(name), std::move(target)};
}

bool Fence::Shows(const std::string& dir, const std::string& name) const {
  if (MutantActive(Mutant::kFenceHidden)) return true;
  return ViewOf(*policy_, dir == "/" ? "/" + name : dir + "/" + name) != PathView::kHidden;
}

Result<void> ReplaceContents(const FencedName& target, std::string_view contents) {
  mode_t mode = 0644;
  struct stat st;
  if (::fstatat(target.parent.get(), target.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
    mode = st.st_mode & 07777 & ~(S_ISUID | S_ISGID);
  }
  return ReplaceFileAt(target.parent.get(), target.name, contents, mode, Durability::kUnsynced, target.path);
}

}  // namespace corral::tools
