#include "overlay/overlay_run.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "base/directory_names.h"
#include "base/mutant.h"
#include "base/replace_file.h"

namespace corral {
namespace {

constexpr const char* kOverlays = "overlay";

Error Io(const std::string& what, const char* call, int err) {
  return Error::FromErrno(ErrorKind::kIo, "overlay: " + what, call, err);
}

Result<std::string> ReadSmallFile(int dir, const char* name) {
  UniqueFd fd(::openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) {
    if (errno == ENOENT) return std::string();
    return Io(std::string("cannot open ") + name, "openat", errno);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return Error(ErrorKind::kPolicy, std::string("overlay: ") + name + " is not a regular file of yours");
  }
  std::string text;
  char buffer[65536];
  for (ssize_t n; (n = ::read(fd.get(), buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Io(std::string("cannot read ") + name, "read", errno);
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

// Writes `text` to `name` in `dir` whole: a temporary file, then a rename.
// Not synced: a baseline lost in a crash makes apply refuse every change
// (fail closed), and the run's files are worth no fsync on every run.
Result<void> WriteSmallFile(int dir, const char* name, const std::string& text) {
  return ReplaceFileAt(dir, name, text, 0600, Durability::kUnsynced, std::string("overlay: cannot write ") + name);
}

Result<UniqueFd> Lock(int dir, OverlayRun::Wait wait, const std::string& id) {
  UniqueFd fd(::openat(dir, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd) return Io("cannot open the lock of run " + id, "openat", errno);
  if (MutantActive(Mutant::kOverlayLock)) return fd;  // the mutant: no lock is taken
  int how = LOCK_EX | (wait == OverlayRun::Wait::kNo ? LOCK_NB : 0);
  while (::flock(fd.get(), how) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      return Error(ErrorKind::kPolicy, "overlay run " + id +
                                           " is busy: a run, an apply or a discard holds it; try again when it "
                                           "ends")
          .WithCode(kOverlayBusy);
    }
    return Io("cannot lock run " + id, "flock", errno);
  }
  return fd;
}

}  // namespace

bool IsOverlayRunId(const std::string& id) {
  if (id.empty() || id.size() > 64 || id[0] == '.') return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
           c == '_';
  });
}

namespace {

// How deep RemoveTreeAt descends holding a descriptor per level; a
// directory found deeper is moved up into the top of the tree and removed
// from there, so neither the descriptors nor the stack grow with a tree the
// confined command made as deep as it liked.
constexpr int kRemoveDepth = 32;

// Opens the directory `name` in `dir` (never through a symlink); a directory
// the kernel left unreadable (overlayfs's work/work) and that is ours is
// made 0700 first, never through a symlink swapped in meanwhile.
Result<UniqueFd> OpenToRemove(int dir, const std::string& name, const struct stat& st) {
  UniqueFd child(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!child && errno == EACCES && st.st_uid == ::geteuid()) {
    if (::fchmodat(dir, name.c_str(), 0700, AT_SYMLINK_NOFOLLOW) == 0) {
      child.Reset(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    }
  }
  if (!child) return Io("cannot open " + name, "openat", errno);
  return child;
}

Result<std::vector<std::string>> ListForRemoval(int dir, const std::string& name) {
  std::vector<std::string> names;
  DIR* stream = ::fdopendir(::fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (stream == nullptr) return Io("cannot list " + name, "fdopendir", errno);
  ::rewinddir(stream);  // the duplicate shares the offset a listing before it left at the end
  while (const struct dirent* entry = ::readdir(stream)) {
    std::string entry_name = entry->d_name;
    if (entry_name != "." && entry_name != "..") names.push_back(entry_name);
  }
  ::closedir(stream);
  return names;
}

// `name` in `dir` examined without following it: true when it is gone
// (it was not there, or it was not a directory and is now unlinked).
Result<bool> RemoveUnlessDirectory(int dir, const std::string& name, struct stat* st) {
  if (::fstatat(dir, name.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    return Io("cannot examine " + name, "fstatat", errno);
  }
  if (S_ISDIR(st->st_mode)) return false;
  if (::unlinkat(dir, name.c_str(), 0) != 0 && errno != ENOENT) return Io("cannot remove " + name, "unlinkat", errno);
  return true;
}

// Renames `name` in `parent` to `aside` in `top`, never over an entry there
// (a file system without RENAME_NOREPLACE: `aside` is checked absent first;
// nothing else writes in the tree being removed).
bool MoveAside(int parent, const std::string& name, int top, const std::string& aside) {
  if (::renameat2(parent, name.c_str(), top, aside.c_str(), RENAME_NOREPLACE) == 0) return true;
  if (errno != EINVAL) return false;
  struct stat there;
  if (::fstatat(top, aside.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0) {
    errno = EEXIST;
    return false;
  }
  return ::renameat(parent, name.c_str(), top, aside.c_str()) == 0;
}

// Empties `dir` (at `depth` below `top`) and removes `name` from `parent`.
// A directory deeper than kRemoveDepth is renamed into `top` instead;
// `*moved` says one was, and the caller empties `top` again.
Result<void> RemoveBelow(int top, int parent, const std::string& name, int depth, uint64_t* counter, bool* moved) {
  struct stat st;
  CORRAL_ASSIGN_OR_RETURN(bool gone, RemoveUnlessDirectory(parent, name, &st));
  if (gone) return {};
  if (depth >= kRemoveDepth && !MutantActive(Mutant::kRemoveTreeDepth)) {
    for (;;) {
      std::string aside = ".corral-remove-" + std::to_string((*counter)++);
      if (MoveAside(parent, name, top, aside)) break;
      // Moving a directory rewrites its "..": one the command made
      // unwritable is ours, so it is opened up first.
      if (errno == EACCES && st.st_uid == ::geteuid() && ::fchmodat(parent, name.c_str(), 0700, AT_SYMLINK_NOFOLLOW) == 0 &&
          MoveAside(parent, name, top, aside)) {
        break;
      }
      if (errno != EEXIST) return Io("cannot move " + name + " up to remove it", "renameat2", errno);
    }
    *moved = true;
    return {};
  }
  CORRAL_ASSIGN_OR_RETURN(UniqueFd child, OpenToRemove(parent, name, st));
  CORRAL_ASSIGN_OR_RETURN(std::vector<std::string> names, ListForRemoval(child.get(), name));
  for (const std::string& entry : names) CORRAL_TRY(RemoveBelow(top, child.get(), entry, depth + 1, counter, moved));
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return Io("cannot remove " + name, "unlinkat", errno);
  }
  return {};
}

}  // namespace

Result<void> RemoveTreeAt(int dir, const std::string& name) {
  struct stat st;
  CORRAL_ASSIGN_OR_RETURN(bool gone, RemoveUnlessDirectory(dir, name, &st));
  if (gone) return {};
  CORRAL_ASSIGN_OR_RETURN(UniqueFd top, OpenToRemove(dir, name, st));
  uint64_t counter = 0;
  for (bool moved = true; moved;) {
    moved = false;
    CORRAL_ASSIGN_OR_RETURN(std::vector<std::string> names, ListForRemoval(top.get(), name));
    for (const std::string& entry : names) CORRAL_TRY(RemoveBelow(top.get(), top.get(), entry, 1, &counter, &moved));
  }
  if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
    return Io("cannot remove " + name, "unlinkat", errno);
  }
  return {};
}

Result<OverlayRun> OverlayRun::Create(const StateDir& state, const std::string& id, const std::string& root,
                                      FileIdentity root_id, const std::vector<OverlayRoot>& extra_roots) {
  if (!IsOverlayRunId(id)) return Error(ErrorKind::kInternal, "overlay: not a run id: " + id);
  OverlayRun run;
  CORRAL_ASSIGN_OR_RETURN(run.overlays_, state.Subdir(kOverlays, StateDir::Create::kYes));
  if (::mkdirat(run.overlays_.get(), id.c_str(), 0700) != 0) return Io("cannot create run " + id, "mkdirat", errno);
  CORRAL_ASSIGN_OR_RETURN(UniqueFd dir, state.Subdir(std::string(kOverlays) + "/" + id, StateDir::Create::kNo));
  run.dir_.Reset(::openat(dir.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!run.dir_) return Io("cannot open run " + id, "openat", errno);
  CORRAL_ASSIGN_OR_RETURN(run.lock_, Lock(run.dir_.get(), Wait::kNo, id));
  run.id_ = id;
  run.path_ = state.path() + "/" + kOverlays + "/" + id;
  run.roots_.push_back(OverlayRoot{root, root_id});
  run.roots_.insert(run.roots_.end(), extra_roots.begin(), extra_roots.end());
  std::ostringstream text;
  for (size_t i = 0; i < run.roots_.size(); ++i) {
    const OverlayRoot& one = run.roots_[i];
    if (one.path.find('\n') != std::string::npos) {
      return Error(ErrorKind::kUsage, "overlay: a path with a line break cannot be overlaid");
    }
    text << one.path << "\n" << one.id.dev << " " << one.id.ino << "\n";
    if (i > 0 && ::mkdirat(run.dir_.get(), ("root." + std::to_string(i)).c_str(), 0700) != 0) {
      return Io("cannot create the directory of root " + std::to_string(i), "mkdirat", errno);
    }
    CORRAL_ASSIGN_OR_RETURN(UniqueFd layer, run.LayerDir(i));
    for (const char* name : {"upper", "work"}) {
      if (::mkdirat(layer.get(), name, 0700) != 0) return Io(std::string("cannot create ") + name, "mkdirat", errno);
    }
  }
  CORRAL_TRY(WriteSmallFile(run.dir_.get(), "root", text.str()));
  return run;
}

Result<OverlayRun> OverlayRun::Open(const StateDir& state, const std::string& id, Wait wait) {
  if (!IsOverlayRunId(id)) {
    return Error(ErrorKind::kUsage, "overlay: \"" + id + "\" is not a run id (see `corral changes`)")
        .WithCode(kOverlayUnknown);
  }
  OverlayRun run;
  Result<UniqueFd> overlays = state.Subdir(kOverlays, StateDir::Create::kNo);
  Result<UniqueFd> dir = overlays.ok() ? state.Subdir(std::string(kOverlays) + "/" + id, StateDir::Create::kNo)
                                       : Result<UniqueFd>(std::move(overlays).error());
  if (!dir.ok()) {
    if (dir.error().code() == kStateDirUnsafe) return std::move(dir).error();
    return Error(ErrorKind::kUsage, "overlay: no run " + id + " is kept (see `corral changes`)").WithCode(kOverlayUnknown);
  }
  run.overlays_ = std::move(overlays).value();
  run.dir_.Reset(::openat(dir->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!run.dir_) return Io("cannot open run " + id, "openat", errno);
  CORRAL_ASSIGN_OR_RETURN(run.lock_, Lock(run.dir_.get(), wait, id));
  CORRAL_ASSIGN_OR_RETURN(std::string text, ReadSmallFile(run.dir_.get(), "root"));
  std::istringstream in(text);
  for (std::string path, ids; std::getline(in, path);) {
    unsigned long long dev = 0, ino = 0;
    if (path.empty() || path[0] != '/' || !std::getline(in, ids) || !(std::istringstream(ids) >> dev >> ino)) {
      return Error(ErrorKind::kPolicy, "overlay: run " + id + " names no workspace (its root file is damaged)");
    }
    run.roots_.push_back(OverlayRoot{path, FileIdentity{static_cast<dev_t>(dev), static_cast<ino_t>(ino)}});
  }
  if (run.roots_.empty()) {
    return Error(ErrorKind::kPolicy, "overlay: run " + id + " names no workspace (its root file is damaged)");
  }
  run.id_ = id;
  run.path_ = state.path() + "/" + kOverlays + "/" + id;
  return run;
}

std::vector<std::string> OverlayRun::List(const StateDir& state) {
  std::vector<std::string> ids;
  Result<UniqueFd> overlays = state.Subdir(kOverlays, StateDir::Create::kNo);
  if (!overlays.ok()) return ids;
  DIR* stream = ::fdopendir(::openat(overlays->get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (stream == nullptr) return ids;
  while (const struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    struct stat st;
    if (!IsOverlayRunId(name) || ::fstatat(::dirfd(stream), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(st.st_mode)) {
      continue;
    }
    ids.push_back(name);
  }
  ::closedir(stream);
  std::sort(ids.begin(), ids.end());
  return ids;
}

Result<std::string> OverlayRun::Newest(const StateDir& state) {
  std::vector<std::string> ids = List(state);
  Result<UniqueFd> overlays = state.Subdir(kOverlays, StateDir::Create::kNo);
  std::string newest;
  struct timespec best = {0, 0};
  for (const std::string& id : ids) {
    struct stat st;
    if (!overlays.ok() || ::fstatat(overlays->get(), id.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (newest.empty() || st.st_mtim.tv_sec > best.tv_sec ||
        (st.st_mtim.tv_sec == best.tv_sec && st.st_mtim.tv_nsec >= best.tv_nsec)) {
      newest = id;
      best = st.st_mtim;
    }
  }
  if (newest.empty()) {
    return Error(ErrorKind::kUsage, "overlay: no overlay run is kept (run one with `corral run --overlay`)")
        .WithCode(kOverlayUnknown);
  }
  return newest;
}

Result<UniqueFd> OverlayRun::LayerDir(size_t index) const {
  if (index >= roots_.size()) return Error(ErrorKind::kInternal, "overlay: no root " + std::to_string(index));
  const std::string name = index == 0 ? std::string(".") : "root." + std::to_string(index);
  UniqueFd fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Io("cannot open " + name + " of run " + id_, "openat", errno);
  return fd;
}

std::string OverlayRun::LayerPath(size_t index) const {
  return index == 0 ? path_ : path_ + "/root." + std::to_string(index);
}

Result<UniqueFd> OverlayRun::Upper(size_t index) const {
  CORRAL_ASSIGN_OR_RETURN(UniqueFd layer, LayerDir(index));
  UniqueFd fd(::openat(layer.get(), "upper", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd) return Io("cannot open the upper layer of run " + id_, "openat", errno);
  return fd;
}

Result<UniqueFd> OverlayRun::OpenRoot(size_t index) const {
  if (index >= roots_.size()) return Error(ErrorKind::kInternal, "overlay: no root " + std::to_string(index));
  const OverlayRoot& root = roots_[index];
  const std::string named = index == 0 ? "the workspace " + root.path : root.path;
  struct open_how how = {};
  how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  if (MutantActive(Mutant::kApplyNoFollow)) how.resolve = 0;  // the mutant: the path is followed
  UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, root.path.c_str(), &how, sizeof how)));
  if (!fd) return Io("cannot open " + named + " without following a symlink", "openat2", errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Io("cannot examine " + root.path, "fstat", errno);
  if ((st.st_dev != root.id.dev || st.st_ino != root.id.ino) && !MutantActive(Mutant::kApplyNoFollow)) {
    return Error(ErrorKind::kPolicy, "overlay: " + named +
                                         " is not the directory the run overlaid (it was moved or replaced); "
                                         "nothing was applied");
  }
  return fd;
}

Result<std::string> OverlayRun::ReadBaseline(size_t index) const {
  CORRAL_ASSIGN_OR_RETURN(UniqueFd layer, LayerDir(index));
  return ReadSmallFile(layer.get(), "baseline");
}

Result<void> OverlayRun::WriteBaseline(const std::string& text, size_t index) const {
  CORRAL_ASSIGN_OR_RETURN(UniqueFd layer, LayerDir(index));
  return WriteSmallFile(layer.get(), "baseline", text);
}

Result<void> OverlayRun::Remove() {
  for (size_t i = 1; i < roots_.size(); ++i) CORRAL_TRY(RemoveTreeAt(dir_.get(), "root." + std::to_string(i)));
  // ".baseline.new" and ".root.new": what builds before ReplaceFileAt left.
  for (const char* name : {"upper", "work", "baseline", "root", ".baseline.new", ".root.new"}) {
    CORRAL_TRY(RemoveTreeAt(dir_.get(), name));
  }
  // A writer killed between its temporary and the rename left that file.
  for (const std::string& name : DirectoryNames(dir_.get())) {
    if (IsReplaceFileTemporary(name)) CORRAL_TRY(RemoveTreeAt(dir_.get(), name));
  }
  if (::unlinkat(dir_.get(), "lock", 0) != 0 && errno != ENOENT) return Io("cannot remove the lock", "unlinkat", errno);
  if (::unlinkat(overlays_.get(), id_.c_str(), AT_REMOVEDIR) != 0) {
    return Io("cannot remove run " + id_ + " (something else is in it)", "unlinkat", errno);
  }
  lock_.Reset();
  return {};
}

}  // namespace corral
