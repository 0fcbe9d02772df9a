#include "policy/sweep.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <optional>

#include "base/unique_fd.h"

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
  kFirstCreated,  // at the first component that is not a directory, or the last
  kLast,          // at the last component, existing or not
};

// nullopt with an empty `error` when there is nothing to act on: a missing
// component on the way, or a directory the caller neither owns nor may
// search (so neither could the command, which ran as the caller).
std::optional<Located> Locate(const ProtectedPath& entry, Stop stop, ModeChanges* modes, std::string* error) {
  Located at;
  at.root.Reset(::open(entry.root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!at.root) {
    *error = Errno("opening " + entry.root);
    return std::nullopt;
  }
  UniqueFd dir(::fcntl(at.root.get(), F_DUPFD_CLOEXEC, 0));
  std::string rest = entry.path.substr(entry.root.size() + 1);
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
      if (stop == Stop::kFirstCreated || !last) return std::nullopt;
    }
    if (rc != 0 || last || (stop == Stop::kFirstCreated && !S_ISDIR(st.st_mode))) {
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
      *error = Errno("opening " + current);
      return std::nullopt;
    }
    dir = std::move(next);
  }
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

std::vector<std::string> Names(int dir) {
  std::vector<std::string> names;
  UniqueFd listing(::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!listing) return names;
  DIR* stream = ::fdopendir(listing.get());
  if (stream == nullptr) return names;
  (void)listing.Release();  // the stream owns it now
  while (struct dirent* entry = ::readdir(stream)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(std::move(name));
  }
  ::closedir(stream);
  return names;
}

// Deletes `name` in `dir` and everything below it, giving each directory its
// owner's rwx first. Never follows a symlink. Iterative, holding one
// descriptor and climbing back through "..": depth is no limit (every
// process of the sandbox is gone, nothing moves the tree meanwhile).
bool RemoveTree(int dir, const std::string& name, std::string* error) {
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return true;
    *error = Errno("examining " + name);
    return false;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlinkat(dir, name.c_str(), 0) == 0) return true;
    *error = Errno("deleting " + name);
    return false;
  }
  auto enter = [&](int parent, const std::string& child, mode_t mode) {
    UniqueFd fd = OpenDirectoryPath(parent, child);
    if (!fd || !ChmodDirectory(fd.get(), (mode & 07777) | S_IRWXU)) {
      *error = Errno("giving " + child + " its owner's rwx");
      return UniqueFd();
    }
    return fd;
  };
  UniqueFd current = enter(dir, name, st.st_mode);
  if (!current) return false;
  std::vector<std::string> below;  // the names from `name` down to `current`
  for (;;) {
    std::string subdirectory;
    for (const std::string& child : Names(current.get())) {
      if (::fstatat(current.get(), child.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        subdirectory = child;
        break;
      }
      if (::unlinkat(current.get(), child.c_str(), 0) != 0) {
        *error = Errno("deleting " + child);
        return false;
      }
    }
    if (!subdirectory.empty()) {
      UniqueFd next = enter(current.get(), subdirectory, st.st_mode);
      if (!next) return false;
      below.push_back(subdirectory);
      current = std::move(next);
      continue;
    }
    if (below.empty()) break;
    UniqueFd parent(::openat(current.get(), "..", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!parent || ::unlinkat(parent.get(), below.back().c_str(), AT_REMOVEDIR) != 0) {
      *error = Errno("deleting " + below.back());
      return false;
    }
    below.pop_back();
    current = std::move(parent);
  }
  current.Reset();
  if (::unlinkat(dir, name.c_str(), AT_REMOVEDIR) == 0) return true;
  *error = Errno("deleting " + name);
  return false;
}

// <root>/.corral-quarantine/<run>, created when missing; never a symlink.
// When a run left something unusable at .corral-quarantine, the directory
// is <root>/.corral-quarantine-<run>: the run could not guess that name.
UniqueFd TreeQuarantine(int root, const std::string& run, ModeChanges* modes, std::string* name, std::string* error) {
  auto make = [&](int parent, const std::string& child) {
    if (::mkdirat(parent, child.c_str(), 0700) != 0 && errno == EACCES && modes->Add(parent, S_IWUSR | S_IXUSR)) {
      ::mkdirat(parent, child.c_str(), 0700);
    }
    UniqueFd fd = OpenDirectoryPath(parent, child);
    // Only the owner may look in; a directory a run left here gets the same.
    if (!fd || !ChmodDirectory(fd.get(), 0700)) return UniqueFd();
    return fd;
  };
  if (UniqueFd shared = make(root, kTreeQuarantineName)) {
    if (UniqueFd dir = make(shared.get(), run)) {
      *name = std::string(kTreeQuarantineName) + "/" + run;
      return dir;
    }
  }
  *name = std::string(kTreeQuarantineName) + "-" + run;
  UniqueFd dir = make(root, *name);
  if (!dir) *error = Errno("preparing " + *name);
  return dir;
}

// Takes `at` out of the tree (see the header for the order).
SweepFinding TakeOut(const Located& at, const std::string& quarantine_dir, const std::string& run,
                     std::string what, ModeChanges* modes) {
  SweepFinding finding{at.path, std::move(what), SweepFinding::Outcome::kLeftInPlace, {}, {}};
  std::vector<std::string> errors;
  std::string unwritable;  // said only when nothing else worked either
  if (S_ISDIR(at.st.st_mode)) {
    // A directory moves to another parent only when its owner may write it.
    UniqueFd self = OpenDirectoryPath(at.parent.get(), at.name);
    if (!self || !ChmodDirectory(self.get(), (at.st.st_mode & 07777) | S_IRWXU)) {
      unwritable = Errno("giving it its owner's rwx");
    }
  }
  // Without effect when the caller does not own the directory; the move
  // then says whether it mattered.
  modes->Add(at.parent.get(), S_IWUSR | S_IXUSR);

  std::string target = quarantine_dir + at.path;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(target).parent_path(), ec);
  if (!ec) std::filesystem::permissions(quarantine_dir, std::filesystem::perms::owner_all, ec);
  if (ec) {
    errors.push_back("creating " + quarantine_dir + ": " + ec.message());
  } else if (::renameat(at.parent.get(), at.name.c_str(), AT_FDCWD, target.c_str()) == 0) {
    finding.outcome = SweepFinding::Outcome::kQuarantined;
    finding.moved_to = target;
  } else {
    errors.push_back(Errno("moving it to " + target));
  }

  if (finding.outcome == SweepFinding::Outcome::kLeftInPlace) {
    std::string error;
    std::string safe_run = run;
    std::replace(safe_run.begin(), safe_run.end(), '/', '_');
    std::string name = EscapedName(at.relative);
    std::string directory;
    UniqueFd quarantine = TreeQuarantine(at.root.get(), safe_run, modes, &directory, &error);
    std::string tree_target = Join(Join(at.root_path, directory), name);
    if (!quarantine) {
      errors.push_back(error);
    } else if (::renameat(at.parent.get(), at.name.c_str(), quarantine.get(), name.c_str()) == 0) {
      finding.outcome = SweepFinding::Outcome::kQuarantined;
      finding.moved_to = tree_target;
    } else {
      errors.push_back(Errno("moving it to " + tree_target));
      // Leave no empty quarantine behind (both fail when something is in them).
      ::unlinkat(at.root.get(), directory.c_str(), AT_REMOVEDIR);
      ::unlinkat(at.root.get(), kTreeQuarantineName, AT_REMOVEDIR);
    }
  }

  if (finding.outcome == SweepFinding::Outcome::kLeftInPlace) {
    // Nothing may survive at the protected path: delete it.
    std::string error;
    if (RemoveTree(at.parent.get(), at.name, &error)) {
      finding.outcome = SweepFinding::Outcome::kDeleted;
    } else {
      errors.push_back("deleting it: " + error);
      if (!unwritable.empty()) errors.insert(errors.begin(), unwritable);
    }
  }
  for (const std::string& error : errors) finding.error += (finding.error.empty() ? "" : "; ") + error;
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
    case SweepFinding::Outcome::kDeleted: return "deleted";
    case SweepFinding::Outcome::kLeftInPlace: return "left";
    case SweepFinding::Outcome::kNone: return "none";
  }
  return "left";
}

bool AnyLeftInPlace(const std::vector<SweepFinding>& findings) {
  return std::any_of(findings.begin(), findings.end(), [](const SweepFinding& finding) {
    return finding.outcome == SweepFinding::Outcome::kLeftInPlace;
  });
}

std::vector<SweepFinding> SweepProtected(const ProtectedSet& set, const std::string& quarantine_dir,
                                         const std::string& run) {
  std::vector<SweepFinding> findings;
  for (const ProtectedPath& entry : set.paths) {
    if (entry.state != State::kMissing && entry.state != State::kSymlink) continue;
    ModeChanges modes;  // put back when this path is done
    std::string error;
    bool missing = entry.state == State::kMissing;
    std::optional<Located> at = Locate(entry, missing ? Stop::kFirstCreated : Stop::kLast, &modes, &error);
    if (!at) {
      // Something may be there that the sweep cannot see: never report success.
      if (!error.empty()) {
        std::string what = missing ? "created" : "replaced";
        findings.push_back({entry.path, what, SweepFinding::Outcome::kLeftInPlace, {}, error});
      }
      continue;
    }
    if (missing) {
      findings.push_back(TakeOut(*at, quarantine_dir, run, "created", &modes));
      continue;
    }
    if (at->exists && S_ISLNK(at->st.st_mode) && ReadLinkAt(at->parent.get(), at->name) == entry.link_target) continue;
    SweepFinding finding = at->exists ? TakeOut(*at, quarantine_dir, run, "replaced", &modes)
                                      : SweepFinding{entry.path, "removed", SweepFinding::Outcome::kNone, {}, {}};
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
