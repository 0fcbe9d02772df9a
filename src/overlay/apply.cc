#include "overlay/apply.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>

#include "base/directory_names.h"
#include "base/hex.h"
#include "base/mutant.h"
#include "base/random.h"
#include "base/sha256.h"
#include "base/terminal.h"
#include "policy/path.h"
#include "policy/protected.h"

namespace corral {
namespace {

std::string Parent(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}
std::string Name(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}
bool Under(const std::string& path, const std::string& top) {
  return top.empty() || path == top || (path.size() > top.size() && path.compare(0, top.size(), top) == 0 &&
                                        path[top.size()] == '/');
}

std::string TemporaryName() {
  Result<std::string> bytes = RandomBytes(8);
  return ".corral-apply-" + (bytes.ok() ? HexEncode(*bytes) : std::to_string(::getpid()));
}

std::string Why(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

int RenameNoReplace(int from_dir, const std::string& from, int to_dir, const std::string& to) {
  return static_cast<int>(::syscall(SYS_renameat2, from_dir, from.c_str(), to_dir, to.c_str(), RENAME_NOREPLACE));
}

// Whether the real path still is what the run's baseline recorded.
bool MatchesBaseline(const Baseline& base, const Change& change, int parent, const std::string& name,
                     std::string* why) {
  if (MutantActive(Mutant::kApplyConflict)) return true;  // the mutant: no check at all
  if (base.changed_in_run) {
    *why = "the real file changed while the run ran";
    return false;
  }
  struct stat st;
  const bool exists = ::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (exists != base.exists) {
    *why = exists ? "the real path was created since the run" : "the real path was removed since the run";
    return false;
  }
  if (!exists) return true;
  const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (st.st_mode != base.mode || st.st_ino != base.ino) {
    *why = "the real path was replaced or its mode changed since the run";
    return false;
  }
  const bool whole_dir = change.kind == ChangeKind::kDeleted || change.kind == ChangeKind::kReplaced;
  if (S_ISDIR(st.st_mode) && !whole_dir) return true;
  if (static_cast<uint64_t>(st.st_size) != base.size || mtime != base.mtime_ns) {
    *why = S_ISDIR(st.st_mode) ? "the real directory's entries changed since the run"
                               : "the real file changed since the run (size or modification time)";
    return false;
  }
  if (!base.sha256.empty() && S_ISREG(st.st_mode)) {
    UniqueFd fd(::openat(parent, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    Result<std::string> digest = fd ? Sha256HexOfFd(fd.get()) : Result<std::string>(Error(ErrorKind::kIo, "open"));
    if (!digest.ok() || *digest != base.sha256) {
      *why = "the real file's contents changed since the run";
      return false;
    }
  }
  return true;
}

// Whether the real entries below the directory `dir` (at `path`) are the
// ones the baseline recorded when the run ended: none added, removed, or
// changed (type, mode, inode, size, mtime, ctime), none changed while the
// run ran. `seen` counts what was compared.
bool TreeMatches(int dir, const std::string& path, const std::map<std::string, Baseline>& trees, size_t& seen,
                 int depth, std::string* why) {
  if (depth > 256) {
    *why = EscapeControls(path) + " is nested too deep to compare";
    return false;
  }
  for (const std::string& name : DirectoryNames(dir)) {
    const std::string child = path + "/" + name;
    auto found = trees.find(child);
    struct stat st;
    if (found == trees.end()) {
      *why = EscapeControls(child) + " was created since the run, and deleting what is above it would lose it";
      return false;
    }
    const Baseline& base = found->second;
    if (base.changed_in_run) {
      *why = EscapeControls(child) + " changed while the run ran";
      return false;
    }
    if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      *why = EscapeControls(child) + " was removed since the run";
      return false;
    }
    // What is below first, so the message names the deepest change.
    if (S_ISDIR(st.st_mode) && S_ISDIR(base.mode)) {
      UniqueFd below(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!below) {
        *why = EscapeControls(child) + " cannot be read to compare";
        return false;
      }
      if (!TreeMatches(below.get(), child, trees, seen, depth + 1, why)) return false;
    }
    const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    const int64_t ctime = static_cast<int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec;
    if (st.st_mode != base.mode || st.st_ino != base.ino || static_cast<uint64_t>(st.st_size) != base.size ||
        mtime != base.mtime_ns || ctime != base.ctime_ns) {
      *why = EscapeControls(child) + " changed since the run";
      return false;
    }
    ++seen;
  }
  return true;
}

// Whether deleting or replacing the real directory `name` in `parent` (the
// change at `change.path`) would throw away only what the run saw: the
// whole tree below it is still what the baseline recorded.
bool TreeMatchesBaseline(const Change& change, const Baseline& base, const std::map<std::string, Baseline>& trees,
                         int parent, const std::string& name, std::string* why) {
  if (!base.tree) {
    *why = "what is below the directory was not recorded when the run ended";
    return false;
  }
  UniqueFd dir(OpenBeneath(parent, name, O_RDONLY | O_DIRECTORY));
  if (dir.get() < 0) {
    *why = "the real directory cannot be read to compare";
    return false;
  }
  size_t seen = 0;
  if (!TreeMatches(dir.get(), change.path, trees, seen, 0, why)) return false;
  size_t recorded = 0;
  for (auto it = trees.lower_bound(change.path + "/");
       it != trees.end() && it->first.compare(0, change.path.size() + 1, change.path + "/") == 0; ++it) {
    ++recorded;
  }
  if (seen != recorded) {
    *why = "an entry below the directory was removed since the run";
    return false;
  }
  return true;
}

// Whether each real directory above `path` that the run passed through
// without changing is still the one the run saw (the same inode and mode,
// not made while the run ran). `checked` caches the answers by directory.
bool DirectoriesAboveMatch(int root, const std::string& path, const std::set<std::string>& changed,
                           const std::map<std::string, Baseline>& above, std::map<std::string, std::string>& checked,
                           std::string* why) {
  for (size_t slash = path.find('/'); slash != std::string::npos; slash = path.find('/', slash + 1)) {
    const std::string dir = path.substr(0, slash);
    if (changed.count(dir)) continue;  // a change of its own: held back or landed
    auto cached = checked.find(dir);
    if (cached == checked.end()) {
      std::string problem;
      auto found = above.find(dir);
      struct stat st;
      int fd = OpenBeneath(root, dir, O_PATH | O_DIRECTORY);
      UniqueFd real(fd < 0 ? -1 : fd);
      if (found == above.end()) {
        problem = "the directory " + EscapeControls(dir) + " above it has no baseline";
      } else if (found->second.changed_in_run) {
        problem = "the directory " + EscapeControls(dir) + " above it was made while the run ran";
      } else if (!real || ::fstat(real.get(), &st) != 0) {
        problem = "the directory " + EscapeControls(dir) + " above it was removed or replaced since the run";
      } else if (st.st_ino != found->second.ino || (st.st_mode & 07777) != (found->second.mode & 07777)) {
        problem = "the directory " + EscapeControls(dir) + " above it was replaced or its mode changed since the run";
      }
      cached = checked.emplace(dir, problem).first;
    }
    if (!cached->second.empty()) {
      *why = cached->second;
      return false;
    }
  }
  return true;
}

// An opaque directory already applied: the real one holds nothing the upper's does not.
bool OpaqueAlreadyApplied(const Change& change, int upper_root, int parent, const std::string& name) {
  if (change.kind != ChangeKind::kReplaced || !S_ISDIR(change.after) || !S_ISDIR(change.before)) return false;
  struct stat st;
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || (st.st_mode & 07777) != (change.after & 07777)) {
    return false;
  }
  int real = OpenBeneath(parent, name, O_PATH | O_DIRECTORY);
  int upper = OpenBeneath(upper_root, change.path, O_PATH | O_DIRECTORY);
  UniqueFd real_fd(real < 0 ? -1 : real), upper_fd(upper < 0 ? -1 : upper);
  if (!real_fd || !upper_fd) return false;
  std::vector<std::string> in_upper = DirectoryNames(upper_fd.get());
  std::set<std::string> keep(in_upper.begin(), in_upper.end());
  for (const std::string& entry : DirectoryNames(real_fd.get())) {
    if (!keep.count(entry)) return false;
  }
  return true;
}

// Whether the real path already is what the upper holds (an earlier
// apply landed it): a file with the same bytes and mode, a symlink with the
// same text, a directory with the same mode, nothing for a deletion.
bool AlreadyApplied(const Change& change, int upper_root, int parent, const std::string& name) {
  struct stat real;
  const bool exists = ::fstatat(parent, name.c_str(), &real, AT_SYMLINK_NOFOLLOW) == 0;
  if (change.kind == ChangeKind::kDeleted) return !exists;
  if (!exists || (real.st_mode & S_IFMT) != (change.after & S_IFMT)) return false;
  if ((real.st_mode & 07777) != (change.after & 07777) && !S_ISLNK(real.st_mode)) return false;
  if (S_ISDIR(real.st_mode)) return change.kind != ChangeKind::kReplaced || OpaqueAlreadyApplied(change, upper_root, parent, name);
  int up = OpenBeneath(upper_root, change.path, S_ISLNK(real.st_mode) ? O_PATH : O_RDONLY | O_NONBLOCK);
  if (up < 0) return false;
  UniqueFd upper(up);
  if (S_ISLNK(real.st_mode)) {
    char a[4096], b[4096];
    ssize_t n = ::readlinkat(upper.get(), "", a, sizeof a);
    ssize_t m = ::readlinkat(parent, name.c_str(), b, sizeof b);
    return n >= 0 && n == m && std::memcmp(a, b, static_cast<size_t>(n)) == 0;
  }
  if (!S_ISREG(real.st_mode)) return false;
  struct stat st;
  if (::fstat(upper.get(), &st) != 0 || st.st_size != real.st_size) return false;
  UniqueFd mine(::openat(parent, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!mine) return false;
  Result<std::string> left = Sha256HexOfFd(upper.get());
  Result<std::string> right = Sha256HexOfFd(mine.get());
  return left.ok() && right.ok() && *left == *right;
}

class Applier {
 public:
  Applier(int upper, int root) : upper_(upper), root_(root) {}

  // Opens (making the missing directories the upper has) the real parent of `path`.
  Result<UniqueFd> RealParent(const std::string& path) {
    std::string parent = Parent(path);
    int fd = OpenBeneath(root_, parent, O_PATH | O_DIRECTORY);
    if (fd >= 0) return UniqueFd(fd);
    if (fd != -ENOENT) return Error::FromErrno(ErrorKind::kIo, "cannot open the real directory " + parent, "openat2", -fd);
    CORRAL_ASSIGN_OR_RETURN(UniqueFd above, RealParent(parent));
    int up = OpenBeneath(upper_, parent, O_PATH | O_DIRECTORY);
    if (up < 0) return Error::FromErrno(ErrorKind::kIo, "no directory " + parent + " in the upper", "openat2", -up);
    UniqueFd upper_dir(up);
    struct stat st;
    if (::fstat(upper_dir.get(), &st) != 0) return Error::FromErrno(ErrorKind::kIo, "fstat " + parent, "fstat", errno);
    if (::mkdirat(above.get(), Name(parent).c_str(), st.st_mode & 0777) != 0 && errno != EEXIST) {
      return Error::FromErrno(ErrorKind::kIo, "cannot make " + parent, "mkdirat", errno);
    }
    fd = OpenBeneath(root_, parent, O_PATH | O_DIRECTORY);
    if (fd < 0) return Error::FromErrno(ErrorKind::kIo, "cannot open " + parent, "openat2", -fd);
    return UniqueFd(fd);
  }

  // Lands one change whose baseline matched. Returns "" or why it failed.
  std::string Land(const Change& change, int parent) {
    const std::string name = Name(change.path);
    struct stat real;
    const bool exists = ::fstatat(parent, name.c_str(), &real, AT_SYMLINK_NOFOLLOW) == 0;
    if (change.kind == ChangeKind::kDeleted) return exists ? RemoveAside(parent, name, real) : "";
    struct stat up;
    int upper_fd = OpenBeneath(upper_, change.path, O_PATH);
    if (upper_fd < 0) return Why("cannot open it in the upper layer", -upper_fd);
    UniqueFd upper_file(upper_fd);
    if (::fstat(upper_file.get(), &up) != 0) return Why("cannot examine it in the upper layer", errno);
    if ((up.st_mode & S_IFMT) != (change.after & S_IFMT)) return "the upper layer changed since it was read";
    if (S_ISDIR(up.st_mode)) {
      if (exists && S_ISDIR(real.st_mode) && change.kind != ChangeKind::kReplaced) {
        return ::fchmodat(parent, name.c_str(), up.st_mode & 0777, 0) == 0 ? "" : Why("chmod", errno);
      }
      std::string aside;
      if (exists) {
        aside = TemporaryName();
        if (::renameat(parent, name.c_str(), parent, aside.c_str()) != 0) return Why("cannot move the old one aside", errno);
      }
      if (::mkdirat(parent, name.c_str(), 0700) != 0) return Why("mkdir", errno);
      if (::fchmodat(parent, name.c_str(), up.st_mode & 0777, 0) != 0) return Why("chmod", errno);
      if (!aside.empty()) (void)RemoveTreeAt(parent, aside);
      return "";
    }
    const std::string temporary = TemporaryName();
    if (S_ISLNK(up.st_mode)) {
      char text[4096];
      ssize_t n = ::readlinkat(upper_file.get(), "", text, sizeof text - 1);
      if (n < 0) return Why("readlink", errno);
      text[n] = '\0';
      if (::symlinkat(text, parent, temporary.c_str()) != 0) return Why("symlink", errno);
    } else if (S_ISREG(up.st_mode) || MutantActive(Mutant::kApplySpecial)) {
      if (!S_ISREG(up.st_mode)) {  // the mutant: the special file is made as it is
        if (::mknodat(parent, temporary.c_str(), up.st_mode, up.st_rdev) != 0) return Why("mknod", errno);
      } else {
        std::string error = CopyFile(change.path, parent, temporary, up.st_mode);
        if (!error.empty()) {
          ::unlinkat(parent, temporary.c_str(), 0);
          return error;
        }
      }
    } else {
      return "a special file";
    }
    std::string why;
    if (!exists) {
      if (RenameNoReplace(parent, temporary, parent, name) != 0) why = Why("it appeared meanwhile", errno);
    } else if (S_ISDIR(real.st_mode)) {
      std::string aside = TemporaryName();
      if (::renameat(parent, name.c_str(), parent, aside.c_str()) != 0) {
        why = Why("cannot move the old directory aside", errno);
      } else if (RenameNoReplace(parent, temporary, parent, name) != 0) {
        why = Why("rename", errno);
      } else {
        (void)RemoveTreeAt(parent, aside);
      }
    } else if (::renameat(parent, temporary.c_str(), parent, name.c_str()) != 0) {
      why = Why("rename", errno);
    }
    if (!why.empty()) ::unlinkat(parent, temporary.c_str(), 0);
    return why;
  }

 private:
  std::string RemoveAside(int parent, const std::string& name, const struct stat& real) {
    if (!S_ISDIR(real.st_mode)) return ::unlinkat(parent, name.c_str(), 0) == 0 ? "" : Why("unlink", errno);
    std::string aside = TemporaryName();
    if (::renameat(parent, name.c_str(), parent, aside.c_str()) != 0) return Why("cannot move it aside", errno);
    Result<void> removed = RemoveTreeAt(parent, aside);
    return removed.ok() ? "" : "moved aside as " + aside + " but not removed: " + removed.error().ToString();
  }

  std::string CopyFile(const std::string& path, int parent, const std::string& temporary, mode_t mode) {
    int in_fd = OpenBeneath(upper_, path, O_RDONLY | O_NONBLOCK);
    if (in_fd < 0) return Why("cannot open it in the upper layer", -in_fd);
    UniqueFd in(in_fd);
    struct stat st;
    if (::fstat(in.get(), &st) != 0 || (!S_ISREG(st.st_mode) && !MutantActive(Mutant::kApplySpecial))) {
      return "not a regular file in the upper layer";
    }
    UniqueFd out(::openat(parent, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out) return Why("cannot create a temporary file", errno);
    char buffer[1 << 16];
    for (;;) {
      ssize_t n = ::read(in.get(), buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return Why("read", errno);
      if (n == 0) break;
      for (ssize_t done = 0; done < n;) {
        ssize_t m = ::write(out.get(), buffer + done, static_cast<size_t>(n - done));
        if (m < 0 && errno == EINTR) continue;
        if (m <= 0) return Why("write", errno);
        done += m;
      }
    }
    mode_t keep = MutantActive(Mutant::kApplySpecial) ? (mode & 07777) : (mode & 0777);
    if (::fchmod(out.get(), keep) != 0) return Why("chmod", errno);
    if (::fsync(out.get()) != 0) return Why("fsync", errno);
    return "";
  }

  int upper_;
  int root_;
};

Result<ChangeSet> ReadRun(const OverlayRun& run, size_t index, UniqueFd& upper, UniqueFd& root) {
  CORRAL_ASSIGN_OR_RETURN(upper, run.Upper(index));
  CORRAL_ASSIGN_OR_RETURN(root, run.OpenRoot(index));
  CORRAL_ASSIGN_OR_RETURN(ChangeSet set, ScanChanges(upper.get(), root.get(), 0));
  for (Baseline& base : set.baseline) {
    base = Baseline();
    base.changed_in_run = true;  // none recorded: a conflict
  }
  set.above.clear();  // only what the run's end recorded counts
  set.trees.clear();
  CORRAL_ASSIGN_OR_RETURN(std::string text, run.ReadBaseline(index));
  CORRAL_TRY(AttachBaseline(text, set));
  return set;
}

}  // namespace

std::string_view ApplyOutcomeName(ApplyOutcome outcome) {
  switch (outcome) {
    case ApplyOutcome::kApplied: return "applied";
    case ApplyOutcome::kAlreadyApplied: return "already_applied";
    case ApplyOutcome::kConflict: return "conflict";
    case ApplyOutcome::kProtected: return "protected";
    case ApplyOutcome::kRefused: return "refused";
    case ApplyOutcome::kFailed: return "failed";
    case ApplyOutcome::kNotSelected: return "not_selected";
  }
  return "failed";
}

Result<std::string> RelativeSelection(const std::string& root, const std::string& path) {
  std::string relative = path;
  if (!relative.empty() && relative[0] == '/') {
    if (!IsWithin(relative, root)) return Error(ErrorKind::kUsage, "apply: " + path + " is outside the workspace " + root);
    relative = relative.size() == root.size() ? std::string() : relative.substr(root.size() + 1);
  }
  std::string out;
  for (const std::string& part : PathSegments("/" + relative)) {
    if (part == "." || part == "..") return Error(ErrorKind::kUsage, "apply: " + path + " has a '.' or '..' component");
    out += (out.empty() ? "" : "/") + part;
  }
  return out;
}

Result<ApplyReport> ApplyChanges(const OverlayRun& run, size_t index, const ApplyOptions& options) {
  UniqueFd upper, root;
  CORRAL_ASSIGN_OR_RETURN(ChangeSet set, ReadRun(run, index, upper, root));
  Applier applier(upper.get(), root.get());
  ApplyReport report;
  std::vector<std::string> held_dirs;  // directories that did not land: nothing goes in them
  std::set<std::string> changed;
  for (const Change& change : set.changes) changed.insert(change.path);
  std::map<std::string, std::string> checked_above;
  const bool deep = !MutantActive(Mutant::kApplyDeepConflict);
  for (size_t i = 0; i < set.changes.size(); ++i) {
    const Change& change = set.changes[i];
    AppliedChange out{change.path, ApplyOutcome::kApplied, ""};
    auto selected = [&](const std::vector<std::string>& list) {
      return std::any_of(list.begin(), list.end(), [&](const std::string& top) { return Under(change.path, top); });
    };
    if (!options.paths.empty() && !selected(options.paths)) {
      out.outcome = ApplyOutcome::kNotSelected;
    } else if (!change.refusal.empty()) {
      out.outcome = ApplyOutcome::kRefused;
      out.detail = change.refusal + " is never applied";
    } else if (IsProtectedRelative(change.path) && !selected(options.include_protected) &&
               !MutantActive(Mutant::kApplyProtected)) {
      out.outcome = ApplyOutcome::kProtected;
      out.detail = "a protected path (it runs or configures code outside the sandbox); pass --include-protected " +
                   change.path + " to apply it";
    } else if (std::any_of(held_dirs.begin(), held_dirs.end(),
                           [&](const std::string& dir) { return Under(change.path, dir); })) {
      out.outcome = ApplyOutcome::kConflict;
      out.detail = "a directory above it was not applied";
    } else if (std::string why; deep && !DirectoriesAboveMatch(root.get(), change.path, changed, set.above,
                                                               checked_above, &why)) {
      out.outcome = ApplyOutcome::kConflict;
      out.detail = why + "; left alone";
    } else {
      Result<UniqueFd> parent = applier.RealParent(change.path);
      if (!parent.ok()) {
        out.outcome = ApplyOutcome::kFailed;
        out.detail = parent.error().ToString();
      } else if (AlreadyApplied(change, upper.get(), parent->get(), Name(change.path))) {
        out.outcome = ApplyOutcome::kAlreadyApplied;
      } else if (!MatchesBaseline(set.baseline[i], change, parent->get(), Name(change.path), &why) ||
                 (deep && RemovesRealDirectory(change) &&
                  !TreeMatchesBaseline(change, set.baseline[i], set.trees, parent->get(), Name(change.path), &why))) {
        out.outcome = ApplyOutcome::kConflict;
        out.detail = why + "; left alone";
      } else if (std::string failed = applier.Land(change, parent->get()); !failed.empty()) {
        out.outcome = ApplyOutcome::kFailed;
        out.detail = failed;
      }
    }
    if (out.outcome == ApplyOutcome::kApplied || out.outcome == ApplyOutcome::kAlreadyApplied) {
      ++report.landed;
    } else if (out.outcome != ApplyOutcome::kNotSelected) {
      ++report.held_back;
      if (S_ISDIR(change.after)) held_dirs.push_back(change.path);
    }
    report.changes.push_back(std::move(out));
  }
  return report;
}

Result<size_t> PendingChanges(const OverlayRun& run) {
  size_t pending = 0;
  for (size_t index = 0; index < run.roots().size(); ++index) {
    UniqueFd upper, root;
    CORRAL_ASSIGN_OR_RETURN(ChangeSet set, ReadRun(run, index, upper, root));
    for (const Change& change : set.changes) {
      int parent = OpenBeneath(root.get(), Parent(change.path), O_PATH | O_DIRECTORY);
      UniqueFd parent_fd(parent < 0 ? -1 : parent);
      if (!parent_fd || !AlreadyApplied(change, upper.get(), parent_fd.get(), Name(change.path))) ++pending;
    }
  }
  return pending;
}

}  // namespace corral
