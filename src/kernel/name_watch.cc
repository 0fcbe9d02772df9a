#include "kernel/name_watch.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>

#include "base/mutant.h"

namespace corral {
namespace {

constexpr uint32_t kWatchMask = IN_ATTRIB | IN_MODIFY | IN_CLOSE_WRITE | IN_CREATE | IN_DELETE | IN_MOVED_FROM |
                                IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF;
constexpr uint32_t kEntryEvents = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO;
constexpr int kMaxLinks = 40;  // the kernel's own limit on a lookup (ELOOP)

// Filesystems whose every change is made by this kernel, so raises an
// inotify event here.
bool RaisesEvents(long type) {
  switch (static_cast<unsigned long>(type)) {
    case EXT4_SUPER_MAGIC:   // ext2, ext3, ext4
    case XFS_SUPER_MAGIC:
    case BTRFS_SUPER_MAGIC:
    case TMPFS_MAGIC:
    case RAMFS_MAGIC:
    case F2FS_SUPER_MAGIC:
      return true;
    // Not overlayfs: a write made in one of its layers (by the host, or
    // through another mount of that directory) raises an event only on the
    // layer's inode, never on the overlay's.
    default:
      return false;
  }
}

std::string ProcFd(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

std::deque<std::string> Components(const std::string& path) {
  std::deque<std::string> out;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    if (slash > at) out.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return out;
}

// "/proc/self/fd/N[/rest]" (or thread-self): the descriptor and the rest.
bool MagicDescriptor(const std::string& path, int* fd, std::string* rest) {
  for (std::string_view prefix : {std::string_view("/proc/self/fd/"), std::string_view("/proc/thread-self/fd/")}) {
    if (path.compare(0, prefix.size(), prefix) != 0) continue;
    size_t at = prefix.size();
    size_t end = at;
    while (end < path.size() && path[end] >= '0' && path[end] <= '9') ++end;
    if (end == at || end - at > 9) return false;
    *fd = std::stoi(path.substr(at, end - at));
    *rest = end < path.size() ? path.substr(end + 1) : "";
    return end == path.size() || path[end] == '/';
  }
  return false;
}

}  // namespace

Result<NameWatch> NameWatch::Open() {
  UniqueFd inotify(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!inotify) return Error::FromErrno(ErrorKind::kUnsupported, "cannot watch names", "inotify_init1", errno);
  UniqueFd mounts(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
  if (!mounts) return Error::FromErrno(ErrorKind::kUnsupported, "cannot watch the mount table", "open", errno);
  return NameWatch(std::move(inotify), std::move(mounts));
}

void NameWatch::Unwatchable(std::string why) {
  if (unwatchable_.empty()) unwatchable_ = std::move(why);
}

int NameWatch::WatchFd(int fd, Scope scope, const std::string& what) {
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Unwatchable(std::string("cannot stat a descriptor it used: ") + std::strerror(errno));
    return -1;
  }
  int wd;
  if (auto known = by_inode_.find({st.st_dev, st.st_ino}); known != by_inode_.end()) {
    wd = known->second;
  } else {
    auto local = local_.find(st.st_dev);
    if (local == local_.end()) {
      struct statfs fs;
      bool raises = ::fstatfs(fd, &fs) == 0 && RaisesEvents(fs.f_type);
      local = local_.emplace(st.st_dev, raises).first;
    }
    if (!local->second) {
      Unwatchable("it looked at " + what + ", on a filesystem whose changes may raise no event here (procfs, "
                  "sysfs, a network or FUSE filesystem, overlayfs, ...)");
      return -1;
    }
    if (by_inode_.size() >= kMaxWatches) {
      Unwatchable("it looked at more than " + std::to_string(kMaxWatches) +
                  " directories and files (each kept watch is an inotify watch of the user's)");
      return -1;
    }
    wd = ::inotify_add_watch(inotify_.get(), ProcFd(fd).c_str(), kWatchMask);
    if (wd < 0) {
      Unwatchable("cannot watch " + what + ": " + std::strerror(errno) +
                  (errno == ENOSPC ? " (fs.inotify.max_user_watches)" : ""));
      return -1;
    }
    by_inode_.emplace(std::make_pair(st.st_dev, st.st_ino), wd);
    // In a case-folding directory a lookup of one name finds another
    // spelling of it (".SSH" for ".ssh"): there every name made, removed or
    // renamed is a change, as in a listing. A directory whose flags cannot
    // be read (inotify could read it, so this can) counts as one; a
    // filesystem without the ioctl has no case folding.
    if (S_ISDIR(st.st_mode)) {
      UniqueFd dir(::open(ProcFd(fd).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      int flags = 0;
      bool folds = !dir || (::ioctl(dir.get(), FS_IOC_GETFLAGS, &flags) == 0 ? (flags & FS_CASEFOLD_FL) != 0
                                                                            : errno != ENOTTY && errno != EOPNOTSUPP &&
                                                                                  errno != EINVAL);
      if (folds) watches_[wd].entries = true;
    }
  }
  Watch& watch = watches_[wd];
  if (scope == Scope::kEntries) watch.entries = true;
  return wd;
}

void NameWatch::WatchName(int dirfd, const std::string& name, const std::string& what) {
  int wd = WatchFd(dirfd, Scope::kSelf, what);
  if (wd >= 0) watches_[wd].names.insert(name);
}

void NameWatch::LookupFrom(int dirfd, const std::string& path, ObservedCall::Last last) {
  auto root = [] { return UniqueFd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)); };
  UniqueFd cur;
  if (!path.empty() && path[0] == '/') {
    cur = root();
  } else if (dirfd == AT_FDCWD) {
    return Unwatchable("it looked up a path relative to the working directory: " + path);
  } else {
    cur.Reset(::fcntl(dirfd, F_DUPFD_CLOEXEC, 3));
  }
  if (!cur) return Unwatchable(std::string("cannot open where a lookup starts: ") + std::strerror(errno));
  std::deque<std::string> components = Components(path);
  if (components.empty()) {
    WatchFd(cur.get(), Scope::kEntries, path);
    return;
  }
  int links = 0;
  std::string at = path.empty() || path[0] != '/' ? "(a descriptor)" : "";  // the directory `cur` is, for messages
  while (!components.empty()) {
    std::string name = std::move(components.front());
    components.pop_front();
    if (name == ".") continue;
    if (name == "..") return Unwatchable("it looked up a path with \"..\": " + path);
    WatchName(cur.get(), name, at.empty() ? "/" : at);  // before it is read
    if (!unwatchable_.empty()) return;
    struct stat st;
    if (::fstatat(cur.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      // Missing, or not searchable: its creation is an event on the name,
      // a chmod of `cur` one on `cur` itself.
      if (errno == ENOENT || errno == ENOTDIR || errno == EACCES) return;
      return Unwatchable("cannot look at " + path + ": " + std::strerror(errno));
    }
    const bool at_end = components.empty();
    if (S_ISLNK(st.st_mode) && (!at_end || last == ObservedCall::Last::kFollowed)) {
      if (++links > kMaxLinks) return;  // ELOOP; each link on the way is watched by its name
      char target[PATH_MAX];
      ssize_t n = ::readlinkat(cur.get(), name.c_str(), target, sizeof(target));
      if (n < 0 || n == static_cast<ssize_t>(sizeof(target))) return Unwatchable("cannot read a link in " + path);
      std::string text(target, static_cast<size_t>(n));
      std::deque<std::string> more = Components(text);
      components.insert(components.begin(), more.begin(), more.end());
      if (!text.empty() && text[0] == '/') {
        cur = root();
        if (!cur) return Unwatchable("cannot open /");
        at.clear();
      }
      continue;
    }
    if (at_end) {
      if (S_ISLNK(st.st_mode)) return;  // the link itself: its name is watched, and a link never changes
      // What this user may not read (/etc/shadow, /etc/ssl/private) cannot
      // be watched itself: it is watched through its name (see the top of
      // name_watch.h). Nor could the lookup have listed it. A file of this
      // user's own is not: it may link it elsewhere and chmod it there.
      if (::faccessat(cur.get(), name.c_str(), R_OK, AT_EACCESS | AT_SYMLINK_NOFOLLOW) != 0 && errno == EACCES) {
        if (!S_ISDIR(st.st_mode) && st.st_uid == ::geteuid()) {
          return Unwatchable("cannot watch " + at + "/" + name + ", a file of yours you may not read");
        }
        return;
      }
      UniqueFd end(::openat(cur.get(), name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!end) return;  // gone since: an event on its name
      WatchFd(end.get(), S_ISDIR(st.st_mode) ? Scope::kEntries : Scope::kSelf, at + "/" + name);
      return;
    }
    if (!S_ISDIR(st.st_mode)) return;  // ENOTDIR: replacing it is an event on its name
    UniqueFd next(::openat(cur.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) return;  // gone or swapped since: an event on its name
    cur = std::move(next);
    at += "/" + name;
    WatchFd(cur.get(), Scope::kSelf, at);
    if (!unwatchable_.empty()) return;
  }
}

void NameWatch::Observe(const ObservedCall& call) {
  switch (call.kind) {
    case ObservedCall::Kind::kOther:
      return Unwatchable("it made a call that is not followed: " + call.name);
    case ObservedCall::Kind::kListing:
      WatchFd(call.dirfd, Scope::kEntries, "a directory it listed");
      return;
    case ObservedCall::Kind::kInode:
      WatchFd(call.dirfd, Scope::kSelf, "a descriptor it looked at");
      return;
    case ObservedCall::Kind::kLookup: {
      int fd;
      std::string rest;
      if (MagicDescriptor(call.path, &fd, &rest)) {
        // What the descriptor is, and the name it has now (readlink of the
        // magic link answers with that path).
        char target[PATH_MAX];
        ssize_t n = ::readlink(ProcFd(fd).c_str(), target, sizeof(target));
        if (n <= 0 || n == static_cast<ssize_t>(sizeof(target)) || target[0] != '/') {
          return Unwatchable("it looked at a descriptor with no path: " + call.path);
        }
        LookupFrom(AT_FDCWD, std::string(target, static_cast<size_t>(n)), ObservedCall::Last::kNotFollowed);
        if (rest.empty()) {
          WatchFd(fd, Scope::kEntries, call.path);
        } else {
          LookupFrom(fd, rest, call.last);
        }
        return;
      }
      if (call.path.empty()) return Unwatchable("it looked up an empty path (" + call.name + ")");
      LookupFrom(call.dirfd, call.path, call.last);
      return;
    }
  }
}

bool NameWatch::Changed() {
  if (changed_) return true;
  if (MutantActive(Mutant::kDerivationStale)) return false;
  alignas(struct inotify_event) char buffer[16 * 1024];
  for (;;) {
    ssize_t n = ::read(inotify_.get(), buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) changed_ = true;
      break;
    }
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const struct inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(struct inotify_event) + event->len);
      if ((event->mask & IN_Q_OVERFLOW) != 0 || event->len == 0) {
        changed_ = true;
        continue;
      }
      auto watch = watches_.find(event->wd);
      if (watch == watches_.end()) {
        changed_ = true;
        continue;
      }
      std::string name(event->name, ::strnlen(event->name, event->len));
      if (watch->second.names.count(name) != 0 || (watch->second.entries && (event->mask & kEntryEvents) != 0)) {
        changed_ = true;
      }
    }
  }
  pollfd mounts{mounts_.get(), POLLPRI, 0};
  if (::poll(&mounts, 1, 0) != 0) changed_ = true;  // a mount or unmount (or poll failed)
  return changed_;
}

}  // namespace corral
