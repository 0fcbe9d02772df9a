#include "policy/resolve_in_roots.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <deque>
#include <utility>

#include "base/mutant.h"
#include "base/unique_fd.h"
#include "policy/path.h"

namespace corral {
namespace {

constexpr int kMaxSymlinks = 40;  // the kernel's own limit

std::deque<std::string> Components(const std::string& path) {
  std::deque<std::string> parts;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    if (end > start) parts.emplace_back(path.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string Child(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// An O_PATH descriptor of a canonical directory: no symlink may be on the way.
UniqueFd OpenCanonicalDirectory(const std::string& path) {
  struct open_how how = {};
  how.flags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  return UniqueFd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
}

std::string ReadLinkAt(int dir, const std::string& name) {
  char text[PATH_MAX];
  ssize_t n = ::readlinkat(dir, name.c_str(), text, sizeof text);
  return n > 0 && static_cast<size_t>(n) < sizeof text ? std::string(text, static_cast<size_t>(n)) : std::string();
}

// One resolution: a stack of the directories walked so far, each with its
// descriptor (none for a root's ancestor passed by name only).
class Walk {
 public:
  Walk(const std::vector<std::string>& roots, Trust trust) : roots_(roots), trust_(trust) {}

  Resolved Run(const std::string& path) {
    std::deque<std::string> pending = Components(path);
    Reset();
    int links = 0;
    while (!pending.empty()) {
      std::string name = std::move(pending.front());
      pending.pop_front();
      if (name == ".") continue;
      if (name == "..") {
        if (!Up()) return {};
        continue;
      }
      std::string next = Child(Current(), name);
      bool inside = InRoots(next);
      if (!inside && trust_ == Trust::kSandbox) {
        // Only the way down to a root, by name, without looking.
        if (!HoldsARoot(next)) return {};
        stack_.push_back({next, UniqueFd()});
        continue;
      }
      int dir = DirectoryFd();
      if (dir < 0) return {};
      struct stat st;
      if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) return {};  // cannot tell: stop
        return Lexical(next, pending, false);
      }
      if (S_ISLNK(st.st_mode)) {
        if (++links > kMaxSymlinks) return {};
        std::string text = ReadLinkAt(dir, name);
        if (text.empty()) return {};
        // A symlink in a writable root may be the command's.
        if (inside && !MutantActive(Mutant::kResolveInRoots)) trust_ = Trust::kSandbox;
        std::deque<std::string> spliced = Components(text);
        pending.insert(pending.begin(), spliced.begin(), spliced.end());
        if (text.front() == '/') Reset();
        continue;
      }
      if (!S_ISDIR(st.st_mode)) {
        // Nothing exists below a file: the rest is lexical.
        return pending.empty() ? Finish(next, true) : Lexical(next, pending, false);
      }
      UniqueFd fd(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!fd) return {};
      stack_.push_back({next, std::move(fd)});
    }
    return Finish(Current(), true);
  }

 private:
  struct Level {
    std::string path;
    UniqueFd fd;  // invalid: not opened yet (or passed by name)
  };

  void Reset() {
    stack_.clear();
    stack_.push_back({"/", UniqueFd()});
  }
  const std::string& Current() const { return stack_.back().path; }

  int DirectoryFd() {
    Level& top = stack_.back();
    // "/" and a root's ancestors are outside the sandbox's reach.
    if (!top.fd) top.fd = OpenCanonicalDirectory(top.path);
    return top.fd.get();
  }

  bool Up() {
    if (stack_.size() == 1) return true;  // "/.." is "/"
    if (trust_ == Trust::kSandbox && !InRoots(Parent(Current()))) return false;
    stack_.pop_back();
    return true;
  }

  Resolved Lexical(std::string path, const std::deque<std::string>& rest, bool exists) {
    for (const std::string& name : rest) {
      if (name == "." ) continue;
      path = name == ".." ? Parent(path) : Child(path, name);
    }
    return Finish(std::move(path), exists);
  }

  Resolved Finish(std::string path, bool exists) {
    Resolved resolved;
    resolved.inside = InRoots(path);
    if (!resolved.inside && trust_ == Trust::kSandbox) return {};
    resolved.exists = exists;
    resolved.path = std::move(path);
    return resolved;
  }

  bool InRoots(const std::string& path) const {
    for (const std::string& root : roots_) {
      if (IsWithin(path, root)) return true;
    }
    return false;
  }
  bool HoldsARoot(const std::string& path) const {
    for (const std::string& root : roots_) {
      if (IsWithin(root, path)) return true;
    }
    return false;
  }

  const std::vector<std::string>& roots_;
  Trust trust_;
  std::vector<Level> stack_;
};

}  // namespace

Resolved ResolveInRoots(const std::string& path, const std::vector<std::string>& roots, Trust trust) {
  if (path.empty() || path.front() != '/') return {};
  return Walk(roots, trust).Run(path);
}

Resolved ResolveLink(const std::string& link, const std::vector<std::string>& roots, Trust trust) {
  std::string dir = Parent(link);
  UniqueFd parent = OpenCanonicalDirectory(dir);
  if (!parent) return {};
  std::string text = ReadLinkAt(parent.get(), link.substr(link.rfind('/') + 1));
  if (text.empty()) return {};
  return ResolveInRoots(text.front() == '/' ? text : Child(dir, text), roots, trust);
}

}  // namespace corral
