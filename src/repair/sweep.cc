#include "repair/sweep.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdio>
#include <map>
#include <optional>

#include "base/absent_names.h"
#include "base/mutant.h"
#include "base/unique_fd.h"
#include "policy/birth_time.h"
#include "repair/fresh_repository.h"

namespace corral {
namespace {

using State = ProtectedPath::State;

std::string Join(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

UniqueFd OpenDirectoryPath(int dir, const std::string& name) {
  return UniqueFd(::openat(dir, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// chmod of the directory an O_PATH descriptor holds (fchmod refuses O_PATH;
// the /proc link names that very inode, not a path that could be swapped).
bool ChmodDirectory(int fd, mode_t mode) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  std::string link = "/proc/self/fd/" + std::to_string(fd);
  return ::chmod(link.c_str(), mode) == 0;
}

// Owner bits the sweep added to the caller's directories, taken away again
// (in reverse order) when it is done with one path.
class ModeChanges {
 public:
  ModeChanges() = default;
  ModeChanges(const ModeChanges&) = delete;
  ModeChanges& operator=(const ModeChanges&) = delete;
  ~ModeChanges() {
    for (auto change = changes_.rbegin(); change != changes_.rend(); ++change) {
      ChmodDirectory(change->fd.get(), change->mode);
    }
  }

  // Adds `bits` to the mode of the directory `fd` holds. False with errno
  // when that is not possible.
  bool Add(int fd, mode_t bits) {
    struct stat st;
    if (::fstat(fd, &st) != 0) return false;
    mode_t mode = st.st_mode & 07777;
    if ((mode & bits) == bits) return true;
    UniqueFd keep(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
    if (!keep || !ChmodDirectory(fd, mode | bits)) return false;
    changes_.push_back({std::move(keep), mode});
    return true;
  }

 private:
  struct Change {
    UniqueFd fd;
    mode_t mode;
  };
  std::vector<Change> changes_;
};

// One component of a protected path, reached from its root through O_PATH
// descriptors opened with O_NOFOLLOW.
struct Located {
  UniqueFd root;
  UniqueFd parent;  // the directory that holds `name`
  std::string name;
  std::string path;
  std::string root_path;
  std::string relative;  // below the root
  bool exists = false;
  struct stat st = {};
};

enum class Stop {
  kFirstCreated,   // at the first component that is not a directory, or the last
  kLast,           // at the last component, existing or not
  kFirstReplaced,  // at the first component that is not the object found at the start
};

// The directories between the roots and the existing protected paths, as
// they were at the start.
using Anchors = std::map<std::string, FileIdentity>;

bool SameObject(const struct stat& st, const FileIdentity& id) { return st.st_dev == id.dev && st.st_ino == id.ino; }

// Whether the object `name` in `dir` (stat `st`) is the one `entry` found.
bool StillTheOriginal(const ProtectedPath& entry, int dir, const std::string& name, const struct stat& st) {
  if (!SameObject(st, entry.id)) return false;
  if (S_ISDIR(st.st_mode) != (entry.state == State::kDirectory)) return false;
  // An inode number can be handed out again once the original is freed.
  return entry.born == 0 || BirthTimeAt(dir, name.c_str()) == entry.born;
}

constexpr char kTreeMoved[] = "the tree moved during the sweep";
constexpr int kLocateRetries = 3;

// nullopt with an empty `error` when there is nothing to act on: a missing
// component on the way, a path that still holds what it held at the start
// (kFirstReplaced), or a directory the caller neither owns nor may search
// (so neither could the command, which ran as the caller).
std::optional<Located> Locate(const ProtectedPath& entry, const SweepRoots& roots, Stop stop, const Anchors& anchors,
                              ModeChanges* modes, std::string* error) {
  Located at;
  auto pinned = roots.fds.find(entry.root);
  if (pinned == roots.fds.end() || !pinned->second) {
    auto why = roots.errors.find(entry.root);
    *error = "the writable root " + entry.root + " " +
             (why != roots.errors.end() ? why->second : std::string("was not opened before the run"));
    return std::nullopt;
  }
  std::string rest = entry.path.substr(entry.root.size() + 1);
  if (size_t slash = rest.find('/'); stop != Stop::kLast || slash != std::string::npos) {
    // Most protected paths are absent: one fstatat on the pinned root
    // settles those, without the descriptors the walk below takes.
    struct stat st;
    if (::fstatat(pinned->second.get(), rest.substr(0, slash).c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 &&
        errno == ENOENT) {
      return std::nullopt;
    }
  }
  at.root.Reset(::fcntl(pinned->second.get(), F_DUPFD_CLOEXEC, 0));
  if (!at.root) {
    *error = Errno("duplicating the descriptor of " + entry.root);
    return std::nullopt;
  }
  UniqueFd dir(::fcntl(at.root.get(), F_DUPFD_CLOEXEC, 0));
  std::string current = entry.root;
  for (;;) {
    size_t slash = rest.find('/');
    std::string name = rest.substr(0, slash);
    rest = slash == std::string::npos ? std::string() : rest.substr(slash + 1);
    current = Join(current, name);
    struct stat st;
    int rc = ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    if (rc != 0 && errno == EACCES) {
      // The command may have taken the search bit from the caller's directory.
      if (!modes->Add(dir.get(), S_IXUSR)) {
        if (errno != EPERM) *error = Errno("making the directory above " + current + " searchable");
        return std::nullopt;
      }
      rc = ::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    }
    bool last = rest.empty();
    if (rc != 0) {
      if (errno != ENOENT) {
        *error = Errno("examining " + current);
        return std::nullopt;
      }
      if (stop != Stop::kLast || !last) return std::nullopt;
    }
    bool here = rc != 0 || last || (stop == Stop::kFirstCreated && !S_ISDIR(st.st_mode));
    if (stop == Stop::kFirstReplaced) {
      if (last) {
        here = !StillTheOriginal(entry, dir.get(), name, st);
        if (!here) return std::nullopt;
      } else {
        auto anchor = anchors.find(current);
        here = !S_ISDIR(st.st_mode) || (anchor != anchors.end() && !SameObject(st, anchor->second));
      }
    }
    if (here) {
      at.parent = std::move(dir);
      at.name = name;
      at.path = current;
      at.root_path = entry.root;
      at.relative = current.substr(entry.root.size() + 1);
      at.exists = rc == 0;
      if (at.exists) at.st = st;
      return at;
    }
    if (!S_ISDIR(st.st_mode)) {
      *error = current + " is no longer a directory";
      return std::nullopt;
    }
    UniqueFd next = OpenDirectoryPath(dir.get(), name);
    if (!next) {
      // Gone or replaced since fstatat saw a directory there: another run is
      // moving the tree. The caller looks again, then reports it unchecked.
      *error = errno == ENOENT || errno == ENOTDIR ? current + ": " + kTreeMoved : Errno("opening " + current);
      return std::nullopt;
    }
    dir = std::move(next);
  }
}

// Locate's first look, for many paths at once: a path whose first
// component the root's listing proves absent has nothing to act on, as
// when fstatat on the pinned root says ENOENT. The listing is read once
// per root, through its pinned descriptor; what it cannot prove absent
// (base/absent_names.h) is looked up as before.
bool FirstComponentAbsent(const ProtectedPath& entry, Stop stop, const SweepRoots& roots,
                          std::map<std::string, AbsentNames>* listings) {
  std::string_view rest = std::string_view(entry.path).substr(entry.root.size() + 1);
  size_t slash = rest.find('/');
  // A symlink at the top is restored even when it is gone.
  if (stop == Stop::kLast && slash == std::string_view::npos) return false;
  auto pinned = roots.fds.find(entry.root);
  if (pinned == roots.fds.end() || !pinned->second) return false;
  auto listing = listings->find(entry.root);
  if (listing == listings->end()) listing = listings->emplace(entry.root, AbsentNames::Read(pinned->second.get())).first;
  return listing->second.CertainlyAbsent(rest.substr(0, slash));
}

// Whether the tree is still as Locate found it: from the root again, one
// component at a time, the directory that holds the entry is `at.parent`
// and the entry is the object found there. Checked before every move.
// The directory that holds `at`, opened from the root again one component
// at a time; invalid when it is no longer `at.parent`.
UniqueFd ParentFromRoot(const Located& at) {
  UniqueFd dir(::fcntl(at.root.get(), F_DUPFD_CLOEXEC, 0));
  std::string rest = at.relative;
  for (size_t slash; dir && (slash = rest.find('/')) != std::string::npos; rest = rest.substr(slash + 1)) {
    dir = OpenDirectoryPath(dir.get(), rest.substr(0, slash));
  }
  struct stat parent, pinned;
  bool same = dir && ::fstat(dir.get(), &parent) == 0 && ::fstat(at.parent.get(), &pinned) == 0 &&
              parent.st_dev == pinned.st_dev && parent.st_ino == pinned.st_ino;
  return same ? std::move(dir) : UniqueFd();
}

bool Unmoved(const Located& at) {
  UniqueFd dir = ParentFromRoot(at);
  struct stat entry;
  return dir && ::fstatat(dir.get(), at.name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) == 0 &&
         entry.st_dev == at.st.st_dev && entry.st_ino == at.st.st_ino;
}

// Moves `at` to `name` in `to`, never over something already there.
bool MoveTo(const Located& at, int to, const std::string& name) {
  if (MutantActive(Mutant::kSweepMoveByPath)) {  // the mutant: whatever the path names now
    return ::renameat2(AT_FDCWD, at.path.c_str(), to, name.c_str(), RENAME_NOREPLACE) == 0;
  }
  return ::renameat2(at.parent.get(), at.name.c_str(), to, name.c_str(), RENAME_NOREPLACE) == 0;
}

// ".git/hooks" -> "%2Egit%2Fhooks": one harmless name for a path.
std::string EscapedName(const std::string& relative) {
  std::string name;
  for (size_t i = 0; i < relative.size(); ++i) {
    char c = relative[i];
    if (c == '%') {
      name += "%25";
    } else if (c == '/') {
      name += "%2F";
    } else if (c == '.' && i == 0) {
      name += "%2E";
    } else {
      name += c;
    }
  }
  return name;
}

// A directory the sweep makes for its quarantine: `child` in `parent`,
// 0700, never a symlink.
UniqueFd MakeQuarantineDir(int parent, const std::string& child, ModeChanges* modes) {
  if (::mkdirat(parent, child.c_str(), 0700) != 0 && errno == EACCES && modes->Add(parent, S_IWUSR | S_IXUSR)) {
    ::mkdirat(parent, child.c_str(), 0700);
  }
  UniqueFd fd = OpenDirectoryPath(parent, child);
  // Only the owner may look in; a directory a run left here gets the same.
  if (!fd || !ChmodDirectory(fd.get(), 0700)) return UniqueFd();
  return fd;
}

// <root>/.corral-quarantine/<run>, created when missing; never a symlink.
// When a run left something unusable at .corral-quarantine, the directory
// is <root>/.corral-quarantine-<run>: the run could not guess that name.
struct TreeQuarantine {
  UniqueFd shared;  // .corral-quarantine, when that is the one used
  UniqueFd dir;
  std::string name;  // below the root
};

TreeQuarantine MakeTreeQuarantine(int root, const std::string& run, ModeChanges* modes) {
  TreeQuarantine quarantine;
  quarantine.shared = MakeQuarantineDir(root, kTreeQuarantineName, modes);
  if (quarantine.shared) {
    quarantine.dir = MakeQuarantineDir(quarantine.shared.get(), run, modes);
    if (quarantine.dir) {
      quarantine.name = std::string(kTreeQuarantineName) + "/" + run;
      return quarantine;
    }
    quarantine.shared.Reset();
  }
  quarantine.name = std::string(kTreeQuarantineName) + "-" + run;
  quarantine.dir = MakeQuarantineDir(root, quarantine.name, modes);
  return quarantine;
}

// <home>/quarantine/<run>/<the path's directories>, made when missing.
UniqueFd StateQuarantine(const QuarantineHome& home, const std::string& run, const std::string& path,
                         ModeChanges* modes, std::string* error) {
  std::vector<std::string> names = {"quarantine", run};
  for (size_t start = 1, slash; (slash = path.find('/', start)) != std::string::npos; start = slash + 1) {
    names.push_back(path.substr(start, slash - start));
  }
  UniqueFd dir(::fcntl(home.dir, F_DUPFD_CLOEXEC, 0));
  std::string made = home.path;
  for (const std::string& name : names) {
    if (name.empty() || name == "." || name == "..") {
      *error = "no quarantine directory for " + path;
      return UniqueFd();
    }
    made += "/" + name;
    dir = MakeQuarantineDir(dir.get(), name, modes);
    if (!dir) {
      *error = Errno("preparing " + made);
      return UniqueFd();
    }
  }
  return dir;
}

// Notes `path` in <home>/quarantine/<run>.moved (NUL after each path), the
// list `corral quarantine` reads (repair/quarantine.h). Best effort: the
// move already happened, and the finding says where to.
void NoteQuarantined(const QuarantineHome& home, const std::string& run, const std::string& path) {
  UniqueFd quarantine = OpenDirectoryPath(home.dir, "quarantine");
  if (!quarantine) return;
  std::string name = run + kQuarantineListSuffix;
  UniqueFd list(::openat(quarantine.get(), name.c_str(),
                         O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600));
  if (!list) return;
  std::string line = path + '\0';
  if (::write(list.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size())) return;
}

// "corral-quarantined-<run>-<name>", escaped, at most NAME_MAX bytes.
std::string AsideName(const std::string& run, const std::string& name) {
  std::string aside = "corral-quarantined-" + run + "-" + EscapedName(name);
  if (aside.size() > NAME_MAX) aside.resize(NAME_MAX);
  return aside;
}

std::string SafeRun(const std::string& run) {
  std::string safe_run = run.empty() || run == "." || run == ".." ? "run" : run;
  std::replace(safe_run.begin(), safe_run.end(), '/', '_');
  return safe_run;
}

// Gives a directory at `at` its owner's rwx (a directory moves to another
// parent only when its owner may write it) and the directory above it the
// owner's write and search bits. False when `at` is no longer there.
bool MakeMovable(const Located& at, ModeChanges* modes, std::vector<std::string>* errors) {
  if (S_ISDIR(at.st.st_mode)) {
    UniqueFd self = OpenDirectoryPath(at.parent.get(), at.name);
    struct stat st;
    if (!self || ::fstat(self.get(), &st) != 0 || st.st_dev != at.st.st_dev || st.st_ino != at.st.st_ino) {
      errors->push_back(kTreeMoved);
      return false;
    }
    if (!ChmodDirectory(self.get(), (at.st.st_mode & 07777) | S_IRWXU)) errors->push_back(Errno("giving it its owner's rwx"));
  }
  // Without effect when the caller does not own the directory; the move
  // then says whether it mattered.
  modes->Add(at.parent.get(), S_IWUSR | S_IXUSR);
  return true;
}

// Takes `at` out of the tree (see the header for the order).
SweepFinding TakeOut(const Located& at, const QuarantineHome& home, const std::string& run, std::string what,
                     ModeChanges* modes, const SweepRacer& racer) {
  SweepFinding finding{at.path, std::move(what), SweepFinding::Outcome::kLeftInPlace, {}, {}, {}};
  std::vector<std::string> errors;
  auto done = [&] {
    for (const std::string& error : errors) finding.error += (finding.error.empty() ? "" : "; ") + error;
    return finding;
  };
  auto moved = [&](std::string to) {
    finding.outcome = SweepFinding::Outcome::kQuarantined;
    finding.moved_to = std::move(to);
    return done();
  };
  auto unmoved = [&] {
    if (MutantActive(Mutant::kSweepRecheck) || Unmoved(at)) {  // the mutant: no second look
      if (racer) racer(SweepStep::kChecked, at.path);
      return true;
    }
    errors.push_back(kTreeMoved);
    return false;
  };
  std::string safe_run = SafeRun(run);
  if (!MakeMovable(at, modes, &errors)) return done();

  // 1. corral's state directory.
  if (home.dir >= 0) {
    std::string error;
    std::string target = home.path + "/quarantine/" + safe_run + at.path;
    UniqueFd quarantine = StateQuarantine(home, safe_run, at.path, modes, &error);
    if (!quarantine) {
      errors.push_back(error);
    } else if (!unmoved()) {
      return done();
    } else if (MoveTo(at, quarantine.get(), at.path.substr(at.path.rfind('/') + 1))) {
      NoteQuarantined(home, safe_run, at.path);
      return moved(target);
    } else {
      errors.push_back(Errno("moving it to " + target));
    }
  }

  // 2. Beside the tree, on its own filesystem.
  std::string name = EscapedName(at.relative);
  TreeQuarantine tree = MakeTreeQuarantine(at.root.get(), safe_run, modes);
  std::string tree_target = Join(Join(at.root_path, tree.name), name);
  if (!tree.dir) {
    errors.push_back(Errno("preparing " + Join(at.root_path, tree.name)));
  } else if (!unmoved()) {
    return done();
  } else if (MoveTo(at, tree.dir.get(), name)) {
    return moved(tree_target);
  } else {
    errors.push_back(Errno("moving it to " + tree_target));
  }
  // Leave no empty quarantine behind (an rmdir fails when something is in it).
  if (tree.dir) {
    tree.dir.Reset();
    if (tree.shared) {
      ::unlinkat(tree.shared.get(), safe_run.c_str(), AT_REMOVEDIR);
      ::unlinkat(at.root.get(), kTreeQuarantineName, AT_REMOVEDIR);
    } else {
      ::unlinkat(at.root.get(), tree.name.c_str(), AT_REMOVEDIR);
    }
  }

  // 3. Aside, in its own directory: never another filesystem.
  std::string aside = AsideName(safe_run, at.name);
  std::string parent_path = at.path.substr(0, at.path.rfind('/'));
  if (!unmoved()) return done();
  if (MoveTo(at, at.parent.get(), aside)) return moved(Join(parent_path, aside));
  errors.push_back(Errno("renaming it to " + aside));
  return done();
}

// Whether the directory that held `at` is still where it was, seen from the
// root again, with nothing at `at.name` in it now.
bool ParentUnmoved(const Located& at) {
  UniqueFd dir = ParentFromRoot(at);
  struct stat entry;
  return dir && ::fstatat(dir.get(), at.name.c_str(), &entry, AT_SYMLINK_NOFOLLOW) != 0 && errno == ENOENT;
}

// A `.git` directory the run created at a missing path: moved into corral's
// quarantine, checked there, and a copy built from what was checked put
// back when nothing in it runs code on the host (repair/fresh_repository.h).
// Without corral's own quarantine (nothing else is out of every run's
// reach), it is taken out like anything else.
SweepFinding AdmitOrTakeOut(const Located& at, const QuarantineHome& home, const std::string& run,
                            ModeChanges* modes, const SweepRacer& racer) {
  if (home.dir < 0) return TakeOut(at, home, run, "created", modes, racer);
  std::vector<std::string> errors;
  std::string error;
  std::string safe_run = SafeRun(run);
  UniqueFd quarantine = StateQuarantine(home, safe_run, at.path, modes, &error);
  if (!quarantine || !MakeMovable(at, modes, &errors) || !Unmoved(at) || !MoveTo(at, quarantine.get(), at.name)) {
    return TakeOut(at, home, run, "created", modes, racer);
  }
  SweepFinding finding{at.path, "created", SweepFinding::Outcome::kQuarantined,
                       home.path + "/quarantine/" + safe_run + at.path, {}, {}};
  UniqueFd moved(::openat(quarantine.get(), at.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  struct stat st;
  if (!moved || ::fstat(moved.get(), &st) != 0 || st.st_dev != at.st.st_dev || st.st_ino != at.st.st_ino) {
    finding.detail = "not admitted: it could not be opened in the quarantine";
    return finding;
  }
  constexpr char kBuilt[] = ".git.admitted";
  if (MutantActive(Mutant::kFreshRepositoryCheck)) {
    // The mutant: the run's own directory goes back as it is, unchecked.
    if (ParentUnmoved(at) &&
        ::renameat2(quarantine.get(), at.name.c_str(), at.parent.get(), at.name.c_str(), RENAME_NOREPLACE) == 0) {
      finding.outcome = SweepFinding::Outcome::kAdmitted;
    }
    return finding;
  }
  FreshRepository fresh = CheckFreshRepository(moved.get());
  if (!fresh.unsafe.empty()) {
    finding.detail = "not admitted: " + fresh.unsafe;
    return finding;
  }
  std::string built = RebuildFreshRepository(moved.get(), fresh, quarantine.get(), kBuilt);
  std::string built_path = finding.moved_to.substr(0, finding.moved_to.rfind('/') + 1) + kBuilt;
  if (!built.empty()) {
    finding.detail = "not admitted: building its copy in " + built_path + " failed (" + built + ")";
    return finding;
  }
  if (!ParentUnmoved(at)) {
    finding.detail = "not admitted: " + std::string(kTreeMoved) + " (its checked copy is " + built_path + ")";
    return finding;
  }
  if (::renameat2(quarantine.get(), kBuilt, at.parent.get(), at.name.c_str(), RENAME_NOREPLACE) != 0) {
    finding.detail = "not admitted: " + Errno("putting its checked copy " + built_path + " back");
    return finding;
  }
  finding.outcome = SweepFinding::Outcome::kAdmitted;
  finding.detail = "nothing in it runs on the host; its hooks/ (git's samples) and original config stay in the quarantine";
  return finding;
}

std::string ReadLinkAt(int dir, const std::string& name) {
  char text[PATH_MAX];
  ssize_t n = ::readlinkat(dir, name.c_str(), text, sizeof text);
  return n >= 0 && static_cast<size_t>(n) < sizeof text ? std::string(text, static_cast<size_t>(n)) : std::string();
}

}  // namespace

std::string_view OutcomeName(SweepFinding::Outcome outcome) {
  switch (outcome) {
    case SweepFinding::Outcome::kQuarantined: return "quarantined";
    case SweepFinding::Outcome::kLeftInPlace: return "left";
    case SweepFinding::Outcome::kNone: return "none";
    case SweepFinding::Outcome::kAdmitted: return "admitted";
  }
  return "left";
}

bool AnyLeftInPlace(const std::vector<SweepFinding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const SweepFinding& finding) {
    return finding.outcome == SweepFinding::Outcome::kLeftInPlace;
  });
}

namespace {

SweepFinding UnreachableRoot(const std::string& root, const std::vector<std::string>& names, const SweepRoots& roots) {
  constexpr size_t kNamed = 4;
  auto why = roots.errors.find(root);
  std::string detail = std::to_string(names.size()) + (names.size() == 1 ? " protected path" : " protected paths") +
                       " not checked: ";
  for (size_t i = 0; i < names.size() && i < kNamed; ++i) detail += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > kNamed) detail += " and " + std::to_string(names.size() - kNamed) + " more";
  return {root, "unreachable", SweepFinding::Outcome::kLeftInPlace, {},
          "the writable root " + root + " " + (why != roots.errors.end() ? why->second : "was not opened before the run"),
          detail};
}

}  // namespace

SweepRoots OpenSweepRoots(const ProtectedSet& set) {
  SweepRoots roots;
  std::map<std::string, std::optional<FileIdentity>> wanted;
  for (const ProtectedPath& entry : set.paths) wanted.emplace(entry.root, std::nullopt);
  for (const PinnedPath& root : set.roots) wanted[root.path] = root.id;
  for (const auto& [path, id] : wanted) {
    struct open_how how = {};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
    struct stat st;
    if (!fd) {
      roots.errors[path] = errno == ELOOP    ? "now goes through a symlink (another run may have moved it)"
                           : errno == ENOENT ? "is gone (deleted, or moved away)"
                                             : std::string("cannot be opened: ") + std::strerror(errno);
    } else if (::fstat(fd.get(), &st) != 0 || (id && (st.st_dev != id->dev || st.st_ino != id->ino))) {
      roots.errors[path] = "is no longer the directory the run started in (another run may have moved it)";
    } else {
      roots.fds.emplace(path, std::move(fd));
    }
  }
  return roots;
}

std::vector<SweepFinding> SweepProtected(const ProtectedSet& set, const SweepRoots& pinned_roots,
                                         const QuarantineHome& home, const std::string& run,
                                         const SweepRacer& racer) {
  SweepRoots by_path;  // the sweep_roots mutant: each root looked up again now, symlinks followed
  if (MutantActive(Mutant::kSweepRoots)) {
    for (const ProtectedPath& entry : set.paths) {
      if (!by_path.fds.contains(entry.root)) {
        by_path.fds.emplace(entry.root, UniqueFd(::open(entry.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)));
      }
    }
  }
  const SweepRoots& roots = MutantActive(Mutant::kSweepRoots) ? by_path : pinned_roots;
  Anchors anchors;
  for (const PinnedPath& anchor : set.anchors) anchors.emplace(anchor.path, anchor.id);
  std::vector<SweepFinding> findings;
  // A root the sweep could not open: one finding for the root, naming what
  // could not be checked in it, instead of one per protected path.
  std::map<std::string, std::vector<std::string>> unreachable;  // root -> its protected paths, relative
  for (const ProtectedPath& entry : set.paths) {
    auto pinned = roots.fds.find(entry.root);
    if (pinned == roots.fds.end() || !pinned->second) {
      unreachable[entry.root].push_back(entry.path.substr(entry.root.size() + 1));
    }
  }
  for (const auto& [root, names] : unreachable) findings.push_back(UnreachableRoot(root, names, roots));
  std::map<std::string, AbsentNames> listings;  // each root's names, read once
  for (const ProtectedPath& entry : set.paths) {
    if (unreachable.contains(entry.root)) continue;
    const bool existed = entry.state != State::kMissing && entry.state != State::kSymlink;
    if (existed && MutantActive(Mutant::kSweepIdentity)) continue;
    ModeChanges modes;  // put back when this path is done
    std::string error;
    Stop stop = entry.state == State::kMissing   ? Stop::kFirstCreated
                : entry.state == State::kSymlink ? Stop::kLast
                                                 : Stop::kFirstReplaced;
    std::string what = entry.state == State::kMissing   ? "created"
                       : entry.state == State::kSymlink ? "replaced"
                                                        : "recreated";
    if (FirstComponentAbsent(entry, stop, roots, &listings)) continue;
    std::optional<Located> at = Locate(entry, roots, stop, anchors, &modes, &error);
    // A directory on the way that vanished while the sweep looked: look again
    // a few times before giving up on the path.
    for (int retry = 0; !at && retry < kLocateRetries && error.ends_with(kTreeMoved); ++retry) {
      error.clear();
      at = Locate(entry, roots, stop, anchors, &modes, &error);
    }
    if (!at) {
      // Something may be there that the sweep cannot see: never report success.
      if (!error.empty()) {
        if (error.ends_with(kTreeMoved)) what = "unchecked";
        findings.push_back({entry.path, what, SweepFinding::Outcome::kLeftInPlace, {}, error, {}});
      }
      continue;
    }
    if (racer) racer(SweepStep::kLocated, at->path);
    listings.erase(entry.root);  // what the sweep does here changes the root: read it again
    if (entry.state == State::kMissing && at->exists && S_ISDIR(at->st.st_mode) && at->path == entry.path &&
        at->name == ".git") {
      findings.push_back(AdmitOrTakeOut(*at, home, run, &modes, racer));
      continue;
    }
    if (entry.state != State::kSymlink) {
      findings.push_back(TakeOut(*at, home, run, what, &modes, racer));
      continue;
    }
    if (at->exists && S_ISLNK(at->st.st_mode) && ReadLinkAt(at->parent.get(), at->name) == entry.link_target) continue;
    SweepFinding finding = at->exists ? TakeOut(*at, home, run, what, &modes, racer)
                                      : SweepFinding{entry.path, "removed", SweepFinding::Outcome::kNone, {}, {}, {}};
    if (finding.outcome != SweepFinding::Outcome::kLeftInPlace) {
      modes.Add(at->parent.get(), S_IWUSR | S_IXUSR);
      if (::symlinkat(entry.link_target.c_str(), at->parent.get(), at->name.c_str()) != 0) {
        finding.error += (finding.error.empty() ? "" : "; ") + Errno("restoring the symlink");
      }
    }
    findings.push_back(std::move(finding));
  }
  return findings;
}

}  // namespace corral
