#include "overlay/snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <set>
#include <string_view>

#include "base/directory_names.h"
#include "base/unique_fd.h"
#include "overlay/overlay_run.h"

namespace corral {
namespace {

constexpr int kMaxDepth = 256;

Error Io(const std::string& what, const char* call, int err) {
  return Error::FromErrno(ErrorKind::kIo, "overlay snapshot: " + what, call, err);
}

std::string Join(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

int64_t CtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
}

// The bits a copy keeps: permissions and the sticky bit, never set-user-ID
// or set-group-ID.
mode_t CopyBits(mode_t mode) { return mode & (S_IRWXU | S_IRWXG | S_IRWXO | S_ISVTX); }

// Copies the open regular file `from` into `to`.
int CopyBytes(int from, int to) {
  for (;;) {
    ssize_t n = ::copy_file_range(from, nullptr, to, nullptr, size_t{1} << 30, 0);
    if (n == 0) return 0;
    if (n > 0) continue;
    if (errno == EINTR) continue;
    if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return errno;
    break;
  }
  static char buffer[65536];
  for (;;) {
    ssize_t n = ::read(from, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    for (ssize_t done = 0; done < n;) {
      ssize_t m = ::write(to, buffer + done, static_cast<size_t>(n - done));
      if (m < 0 && errno == EINTR) continue;
      if (m < 0) return errno;
      done += m;
    }
  }
}

}  // namespace

SnapshotLimits DefaultSnapshotLimits() {
  SnapshotLimits limits;
#if defined(CORRAL_HOST_SIMULATION) && CORRAL_HOST_SIMULATION
  // Tests only (CMakeLists.txt): a small cap, to see the refusal.
  if (const char* cap = std::getenv("CORRAL_TEST_SNAPSHOT_LIMIT_BYTES"); cap != nullptr && *cap != '\0') {
    limits.bytes = std::strtoull(cap, nullptr, 10);
  }
#endif
  return limits;
}

class Snapshot::Copier {
 public:
  Copier(Snapshot& out, const std::vector<std::string>& masked, const SnapshotLimits& limits)
      : out_(out), masked_(masked.begin(), masked.end()), limits_(limits) {}

  Result<void> Directory(int real, int copy, const std::string& dir, int depth) {
    if (depth > kMaxDepth) return Error(ErrorKind::kPolicy, "overlay snapshot: the tree is nested too deep at " + dir);
    for (const std::string& name : DirectoryNames(real)) {
      const std::string path = Join(dir, name);
      struct stat st;
      if (::fstatat(real, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;  // removed meanwhile
        return Io("cannot examine " + path, "fstatat", errno);
      }
      if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) continue;  // never copied
      if (++out_.entries_ > limits_.entries) return TooLarge();
      if (masked_.count(path) != 0) {
        CORRAL_TRY(Placeholder(copy, name, path, S_ISDIR(st.st_mode)));
        continue;
      }
      if (S_ISDIR(st.st_mode)) {
        UniqueFd real_child(::openat(real, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!real_child) return Io("cannot open " + path, "openat", errno);
        if (::mkdirat(copy, name.c_str(), 0700) != 0) return Io("cannot make " + path, "mkdirat", errno);
        UniqueFd copy_child(::openat(copy, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!copy_child) return Io("cannot open the copy of " + path, "openat", errno);
        CORRAL_TRY(Directory(real_child.get(), copy_child.get(), path, depth + 1));
        struct stat real_now;
        if (::fstat(real_child.get(), &real_now) != 0) return Io("cannot examine " + path, "fstat", errno);
        if (::fchmod(copy_child.get(), CopyBits(real_now.st_mode)) != 0) return Io("cannot set the mode of " + path, "fchmod", errno);
        CORRAL_TRY(Record(copy_child.get(), dir, name, real_now.st_mode));
        out_.manifest_[path];  // listed, even when empty
      } else if (S_ISLNK(st.st_mode)) {
        char text[4096];
        ssize_t n = ::readlinkat(real, name.c_str(), text, sizeof text - 1);
        if (n < 0) return Io("cannot read the symlink " + path, "readlinkat", errno);
        text[n] = '\0';
        if (::symlinkat(text, copy, name.c_str()) != 0) return Io("cannot copy the symlink " + path, "symlinkat", errno);
        struct stat made;
        if (::fstatat(copy, name.c_str(), &made, AT_SYMLINK_NOFOLLOW) != 0) return Io("cannot examine " + path, "fstatat", errno);
        out_.manifest_[dir][name] = Entry{made.st_ino, CtimeNs(made), made.st_mode, st.st_mode};
      } else {
        UniqueFd from(::openat(real, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!from) return Io("cannot read " + path, "openat", errno);
        struct stat opened;
        if (::fstat(from.get(), &opened) != 0) return Io("cannot examine " + path, "fstat", errno);
        if (!S_ISREG(opened.st_mode)) continue;  // swapped for a special file meanwhile: never copied
        out_.bytes_ += static_cast<uint64_t>(opened.st_size);
        if (out_.bytes_ > limits_.bytes) return TooLarge();
        UniqueFd to(::openat(copy, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!to) return Io("cannot make the copy of " + path, "openat", errno);
        if (int err = CopyBytes(from.get(), to.get()); err != 0) return Io("cannot copy " + path, "copy_file_range", err);
        if (::fchmod(to.get(), CopyBits(opened.st_mode)) != 0) return Io("cannot set the mode of " + path, "fchmod", errno);
        CORRAL_TRY(Record(to.get(), dir, name, opened.st_mode));
      }
    }
    return {};
  }

 private:
  Result<void> Record(int fd, const std::string& dir, const std::string& name, mode_t real_mode) {
    struct stat made;
    if (::fstat(fd, &made) != 0) return Io("cannot examine the copy of " + Join(dir, name), "fstat", errno);
    out_.manifest_[dir][name] = Entry{made.st_ino, CtimeNs(made), made.st_mode, real_mode};
    return {};
  }

  Result<void> Placeholder(int copy, const std::string& name, const std::string& path, bool is_dir) {
    UniqueFd made;
    if (is_dir) {
      if (::mkdirat(copy, name.c_str(), 0) != 0) return Io("cannot make " + path, "mkdirat", errno);
      made.Reset(::openat(copy, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    } else {
      made.Reset(::openat(copy, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0));
    }
    if (!made) return Io("cannot make the placeholder of " + path, "openat", errno);
    struct stat st;
    if (::fstat(made.get(), &st) != 0) return Io("cannot examine " + path, "fstat", errno);
    out_.placeholders_[path] = FileIdentity{st.st_dev, st.st_ino};
    const size_t slash = path.rfind('/');
    out_.manifest_[slash == std::string::npos ? std::string() : path.substr(0, slash)][name] =
        Entry{st.st_ino, CtimeNs(st), st.st_mode, st.st_mode, true};
    return {};
  }

  Error TooLarge() const {
    return Error(ErrorKind::kUnsupported,
                 "--overlay --best-effort: the copied snapshot is limited to " + std::to_string(limits_.bytes >> 20) +
                     " MiB and " + std::to_string(limits_.entries) +
                     " entries per tree (docs/overlay.md), and this tree is larger. The command was not run. Use a "
                     "host whose kernel mounts overlayfs, or overlay a smaller tree");
  }

  Snapshot& out_;
  std::set<std::string> masked_;
  SnapshotLimits limits_;
};

Result<Snapshot> Snapshot::Take(int real_root, int layer_dir, const std::vector<std::string>& masked,
                                const SnapshotLimits& limits) {
  Snapshot snapshot;
  UniqueFd real(::openat(real_root, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!real) return Io("cannot open the tree", "openat", errno);
  if (::mkdirat(layer_dir, kSnapshotDir, 0700) != 0) return Io("cannot make the copy's directory", "mkdirat", errno);
  UniqueFd copy(::openat(layer_dir, kSnapshotDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!copy) return Io("cannot open the copy's directory", "openat", errno);
  Copier copier(snapshot, masked, limits);
  Result<void> copied = copier.Directory(real.get(), copy.get(), "", 0);
  struct stat root_st, copy_st;
  if (copied.ok() && (::fstat(real.get(), &root_st) != 0 || ::fstat(copy.get(), &copy_st) != 0)) {
    copied = Io("cannot examine the tree", "fstat", errno);
  }
  if (copied.ok() && ::fchmod(copy.get(), CopyBits(root_st.st_mode)) != 0) {
    copied = Io("cannot set the copy's mode", "fchmod", errno);
  }
  if (!copied.ok()) {
    (void)RemoveTreeAt(layer_dir, kSnapshotDir);
    return std::move(copied).error();
  }
  snapshot.id_ = FileIdentity{copy_st.st_dev, copy_st.st_ino};
  snapshot.manifest_[""];  // listed, even when empty
  return snapshot;
}

class Snapshot::Converter {
 public:
  explicit Converter(const Snapshot& snapshot) : snapshot_(snapshot) {}

  // Fills `upper` from `copy` (the directory at `dir`); returns whether
  // anything was put in `upper`.
  Result<bool> Directory(int copy, int upper, const std::string& dir, int depth) {
    if (depth > kMaxDepth) return Error(ErrorKind::kPolicy, "overlay snapshot: the copy is nested too deep at " + dir);
    static const std::map<std::string, Entry> kNone;
    auto listed = snapshot_.manifest_.find(dir);
    const std::map<std::string, Entry>& had = listed == snapshot_.manifest_.end() ? kNone : listed->second;
    bool wrote = false;
    std::set<std::string> present;
    for (const std::string& name : DirectoryNames(copy)) {
      present.insert(name);
      const std::string path = Join(dir, name);
      struct stat st;
      if (::fstatat(copy, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return Io("cannot examine " + path, "fstatat", errno);
      auto was = had.find(name);
      const bool known = was != had.end();
      if (S_ISDIR(st.st_mode)) {
        const bool had_dir = known && S_ISDIR(was->second.mode);
        const bool same = had_dir && was->second.ino == st.st_ino;
        if (same && was->second.placeholder && CopyBits(st.st_mode) == CopyBits(was->second.mode)) {
          continue;  // a masked directory's placeholder (mode 0: not opened)
        }
        if (!had_dir) {
          // New, or in place of a file: taken whole.
          CORRAL_TRY(Move(copy, upper, name, path));
          wrote = true;
          continue;
        }
        // A directory the copy had (or a new one in its place): what
        // changed below it, and whiteouts for what is gone.
        if (::mkdirat(upper, name.c_str(), 0700) != 0) return Io("cannot make " + path + " in the upper layer", "mkdirat", errno);
        UniqueFd copy_child(::openat(copy, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        UniqueFd upper_child(::openat(upper, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!copy_child) {
          // Left unreadable by the command: it is taken whole.
          ::unlinkat(upper, name.c_str(), AT_REMOVEDIR);
          CORRAL_TRY(Move(copy, upper, name, path));
          wrote = true;
          continue;
        }
        if (!upper_child) return Io("cannot open " + path + " in the upper layer", "openat", errno);
        CORRAL_ASSIGN_OR_RETURN(bool below, Directory(copy_child.get(), upper_child.get(), path, depth + 1));
        const bool mode_changed = CopyBits(st.st_mode) != CopyBits(was->second.mode);
        if (!below && same && !mode_changed) {
          if (::unlinkat(upper, name.c_str(), AT_REMOVEDIR) != 0) return Io("cannot tidy " + path, "unlinkat", errno);
          continue;
        }
        // Its real mode where the command left the mode alone: the copy
        // never has a set-user-ID or set-group-ID bit the real one may have.
        const mode_t mode = mode_changed ? st.st_mode : was->second.real_mode;
        if (::fchmod(upper_child.get(), mode & 07777) != 0) return Io("cannot set the mode of " + path, "fchmod", errno);
        wrote = true;
        continue;
      }
      if (known && !S_ISDIR(was->second.mode) && was->second.ino == st.st_ino && was->second.ctime_ns == CtimeNs(st)) {
        continue;  // the copy as it was made
      }
      CORRAL_TRY(Move(copy, upper, name, path));
      wrote = true;
    }
    for (const auto& [name, entry] : had) {
      if (present.count(name) != 0) continue;
      if (::mknodat(upper, name.c_str(), S_IFCHR | 0000, makedev(0, 0)) != 0) {
        return Io("cannot record the deletion of " + Join(dir, name) + " (a whiteout)", "mknodat", errno);
      }
      wrote = true;
    }
    return wrote;
  }

 private:
  static Result<void> Move(int copy, int upper, const std::string& name, const std::string& path) {
    if (::renameat(copy, name.c_str(), upper, name.c_str()) != 0) {
      return Io("cannot move " + path + " to the upper layer", "renameat", errno);
    }
    return {};
  }
  const Snapshot& snapshot_;
};

Result<void> Snapshot::ToUpper(int layer_dir) const {
  UniqueFd copy(::openat(layer_dir, kSnapshotDir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!copy) return Io("cannot open the copy", "openat", errno);
  UniqueFd upper(::openat(layer_dir, "upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!upper) return Io("cannot open the upper layer", "openat", errno);
  struct stat st;
  if (::fstat(copy.get(), &st) != 0) return Io("cannot examine the copy", "fstat", errno);
  if (st.st_ino != id_.ino || st.st_dev != id_.dev) {
    return Error(ErrorKind::kPolicy, "overlay snapshot: the copy is not the directory the run was given");
  }
  Converter converter(*this);
  Result<bool> converted = converter.Directory(copy.get(), upper.get(), "", 0);
  copy.Reset();
  Result<void> removed = RemoveTreeAt(layer_dir, kSnapshotDir);
  if (!converted.ok()) return std::move(converted).error();
  return removed;
}

}  // namespace corral
