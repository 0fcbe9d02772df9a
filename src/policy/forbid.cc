#include "policy/forbid.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "base/unique_fd.h"
#include "policy/path.h"

namespace corral {
namespace {

std::vector<std::string> Segments(const std::string& path) {
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

bool HasGlob(const std::string& text) { return text.find_first_of("*?[") != std::string::npos; }

// The pattern positions a path has reached: position p is live when
// pattern[0..p) matches the path's segments (an NFA over the segments, `**`
// staying put or moving on). The path matches when the end is live; a
// directory can hold matches when some earlier position is. Each step is
// O(pattern length) whatever the pattern: naive backtracking is exponential
// in the number of `**`s, and a project's corral.toml is only partly trusted.
class Progress {
 public:
  explicit Progress(const std::vector<std::vector<std::string>>& patterns) : patterns_(&patterns) {
    live_.resize(patterns.size());
    for (size_t i = 0; i < patterns.size(); ++i) {
      live_[i].assign(patterns[i].size() + 1, 0);
      live_[i][0] = 1;
      Close(i);
    }
  }

  Progress Step(const std::string& segment) const {
    Progress next = *this;
    for (size_t i = 0; i < live_.size(); ++i) {
      const std::vector<std::string>& pattern = (*patterns_)[i];
      std::vector<char>& to = next.live_[i];
      std::fill(to.begin(), to.end(), 0);
      for (size_t p = 0; p < pattern.size(); ++p) {
        if (!live_[i][p]) continue;
        if (pattern[p] == "**") to[p] = 1;
        else if (::fnmatch(pattern[p].c_str(), segment.c_str(), 0) == 0) to[p + 1] = 1;
      }
      next.Close(i);
    }
    return next;
  }

  bool Matches() const {
    for (size_t i = 0; i < live_.size(); ++i) {
      if (live_[i].back()) return true;
    }
    return false;
  }

  bool MayMatchBelow() const {
    for (const std::vector<char>& live : live_) {
      if (std::find(live.begin(), live.end() - 1, 1) != live.end() - 1) return true;
    }
    return false;
  }

 private:
  void Close(size_t i) {
    const std::vector<std::string>& pattern = (*patterns_)[i];
    for (size_t p = 0; p < pattern.size(); ++p) {
      if (live_[i][p] && pattern[p] == "**") live_[i][p + 1] = 1;
    }
  }

  const std::vector<std::vector<std::string>>* patterns_;
  std::vector<std::vector<char>> live_;
};

Progress ProgressOf(const std::vector<std::vector<std::string>>& patterns, const std::string& path) {
  Progress progress(patterns);
  for (const std::string& segment : Segments(path)) progress = progress.Step(segment);
  return progress;
}

std::string Join(const std::string& dir, const std::string& name) { return dir == "/" ? "/" + name : dir + "/" + name; }

// What one walk of one directory found out.
enum class Visit { kListed, kHideWhole, kMoved };

// One walk over the granted trees, on pinned directory fds: each directory
// is opened relative to its parent's fd without following symlinks, checked
// to be the inode its parent listed, and watched (inotify) for entries moved
// or directories created in it before it is listed. When the walk ends with
// no such event, every listing still holds: together they are the tree as
// it is at that moment, and each match is recorded with its (dev, inode).
class PinnedWalk {
 public:
  PinnedWalk(const std::vector<std::vector<std::string>>& patterns, size_t budget)
      : patterns_(patterns), budget_(budget) {}

  Result<void> Start() {
    watch_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
    if (!watch_) return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot watch the walk for moves", "inotify", errno);
    return {};
  }

  // Walks `root` (a granted directory); false when the tree moved.
  Result<bool> WalkRoot(const std::string& root) {
    struct open_how how = {};
    how.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    UniqueFd fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, root.c_str(), &how, sizeof how)));
    struct stat st;
    if (!fd) {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return false;
      if (errno != EACCES || ::lstat(root.c_str(), &st) != 0) {
        return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot look for paths to hide", root, errno);
      }
      HideWhole(root, st);
      return true;
    }
    if (::fstat(fd.get(), &st) != 0) {
      return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot look for paths to hide", root, errno);
    }
    CORRAL_ASSIGN_OR_RETURN(Visit visit, VisitDir(fd, root, ProgressOf(patterns_, root)));
    if (visit == Visit::kHideWhole) HideWhole(root, st);
    return visit != Visit::kMoved;
  }

  // True when no watched directory saw a relevant change since its listing.
  Result<bool> Unmoved() {
    alignas(struct inotify_event) char buffer[64 * 1024];
    for (;;) {
      ssize_t n = ::read(watch_.get(), buffer, sizeof buffer);
      if (n < 0) {
        if (errno == EAGAIN) return true;
        if (errno == EINTR) continue;
        return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot read the walk's watch", "inotify", errno);
      }
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const struct inotify_event*>(buffer + at);
        at += static_cast<ssize_t>(sizeof *event + event->len);
        if (event->mask & IN_Q_OVERFLOW) return false;
        auto dir = watched_.find(event->wd);
        if (dir == watched_.end() || event->len == 0) continue;
        Progress progress = ProgressOf(patterns_, Join(dir->second, event->name));
        // A moved or new directory may hold matches; a moved file matters
        // when its name matches.
        if (progress.Matches() || ((event->mask & IN_ISDIR) && progress.MayMatchBelow())) return false;
      }
    }
  }

  std::vector<MaskedPath>& found() { return found_; }
  std::vector<std::string>& hidden_whole() { return hidden_whole_; }

 private:
  Result<Visit> VisitDir(const UniqueFd& fd, const std::string& dir, const Progress& progress) {
    char proc_path[64];
    std::snprintf(proc_path, sizeof proc_path, "/proc/self/fd/%d", fd.get());
    int wd = ::inotify_add_watch(watch_.get(), proc_path, IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_ONLYDIR);
    if (wd < 0) {
      if (errno == EACCES) return Visit::kHideWhole;  // not readable: not listable either
      return Error::FromErrno(ErrorKind::kPolicy,
                              "forbid_read: cannot watch " + dir +
                                  " for moves while looking for paths to hide (is fs.inotify.max_user_watches "
                                  "too low for this tree?)",
                              "inotify_add_watch", errno);
    }
    watched_[wd] = dir;
    int listing = ::openat(fd.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (listing < 0) {
      if (errno == EACCES) return Visit::kHideWhole;
      return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot list", dir, errno);
    }
    DIR* stream = ::fdopendir(listing);
    if (stream == nullptr) {
      ::close(listing);
      return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot list", dir, errno);
    }
    std::vector<std::string> names;
    for (;;) {
      errno = 0;
      const struct dirent* entry = ::readdir(stream);
      if (entry == nullptr) {
        int err = errno;
        ::closedir(stream);
        if (err == 0) break;
        if (err == EACCES) return Visit::kHideWhole;
        return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot list", dir, err);
      }
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (++seen_ > budget_) {
        ::closedir(stream);
        return Error(ErrorKind::kPolicy, "forbid_read: matching the patterns walked more than " +
                                             std::to_string(budget_) + " entries under " + dir +
                                             "; use narrower patterns (for example an absolute path)");
      }
      names.push_back(std::move(name));
    }
    for (const std::string& name : names) {
      Progress child = progress.Step(name);
      const bool matches = child.Matches();
      if (!matches && !child.MayMatchBelow()) continue;
      std::string path = Join(dir, name);
      struct stat st;
      if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return Visit::kMoved;  // listed, and gone
        if (errno == EACCES) return Visit::kHideWhole;  // listable, not searchable
        return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot inspect", path, errno);
      }
      if (matches) {
        found_.push_back({path, S_ISDIR(st.st_mode), true, {st.st_dev, st.st_ino}});
        continue;  // the whole subtree is hidden already
      }
      if (!S_ISDIR(st.st_mode)) continue;
      UniqueFd sub(::openat(fd.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!sub) {
        if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return Visit::kMoved;
        return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot open", path, errno);
      }
      struct stat opened;
      if (::fstat(sub.get(), &opened) != 0) {
        return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot inspect", path, errno);
      }
      if (opened.st_dev != st.st_dev || opened.st_ino != st.st_ino) return Visit::kMoved;
      CORRAL_ASSIGN_OR_RETURN(Visit visit, VisitDir(sub, path, child));
      if (visit == Visit::kMoved) return visit;
      if (visit == Visit::kHideWhole) HideWhole(path, st);
    }
    return Visit::kListed;
  }

  // A directory the walk cannot read, where a pattern could match below: the
  // sandbox sees none of it (as root the walk reads everything).
  void HideWhole(const std::string& path, const struct stat& st) {
    found_.push_back({path, true, true, {st.st_dev, st.st_ino}});
    hidden_whole_.push_back(path);
  }

  const std::vector<std::vector<std::string>>& patterns_;
  size_t budget_;
  size_t seen_ = 0;
  UniqueFd watch_;
  std::map<int, std::string> watched_;
  std::vector<MaskedPath> found_;
  std::vector<std::string> hidden_whole_;
};

}  // namespace

Result<std::string> NormalizeForbidPattern(const std::string& pattern, const std::string& home) {
  if (pattern.empty()) return Error(ErrorKind::kUsage, "forbid_read: empty pattern");
  std::string text = pattern;
  if (text == "~") text = home;
  else if (text.starts_with("~/")) text = home + text.substr(1);
  for (const std::string& segment : Segments("/" + text)) {
    if (segment == "..") return Error(ErrorKind::kUsage, "forbid_read " + pattern + ": '..' is not allowed");
  }
  return CollapseSlashes(text);
}

bool MatchesForbidPattern(const std::string& pattern, const std::string& path) {
  const std::vector<std::vector<std::string>> patterns = {Segments(pattern)};
  return ProgressOf(patterns, path).Matches();
}

Result<ForbidExpansion> ExpandForbidden(const std::vector<std::string>& patterns, const std::string& home,
                                        const ForbidScope& scope) {
  // Make every pattern absolute: relative ones apply under each user root.
  std::vector<std::string> absolute;
  for (const std::string& raw : patterns) {
    CORRAL_ASSIGN_OR_RETURN(std::string pattern, NormalizeForbidPattern(raw, home));
    if (pattern.front() == '/') {
      absolute.push_back(pattern);
    } else {
      for (const std::string& root : scope.user_roots) absolute.push_back(CollapseSlashes(root + "/" + pattern));
    }
  }
  std::vector<std::vector<std::string>> segments;
  for (const std::string& pattern : absolute) segments.push_back(Segments(pattern));

  ForbidExpansion expansion;
  std::vector<std::string> roots;  // the granted directories a pattern can match inside
  for (const std::string& root : scope.visible_roots) {
    // A literal pattern may name a grant itself; a glob only hides what lies
    // inside one (as `W/**` hides W's entries, not W).
    bool named = std::any_of(absolute.begin(), absolute.end(), [&](const std::string& pattern) {
      return !HasGlob(pattern) && pattern == root;
    });
    struct stat st;
    if (named) {
      if (::lstat(root.c_str(), &st) == 0) {
        expansion.masks.push_back({root, S_ISDIR(st.st_mode), true, {st.st_dev, st.st_ino}});
      }
      continue;
    }
    if (!ProgressOf(segments, root).MayMatchBelow()) continue;
    if (::lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    roots.push_back(root);
  }

  bool settled = roots.empty();
  for (int attempt = 0; attempt < scope.walk_attempts && !settled; ++attempt) {
    PinnedWalk walk(segments, scope.walk_budget);
    CORRAL_TRY(walk.Start());
    settled = true;
    for (const std::string& root : roots) {
      CORRAL_ASSIGN_OR_RETURN(bool held, walk.WalkRoot(root));
      if (!held) {
        settled = false;
        break;
      }
    }
    if (settled) {
      CORRAL_ASSIGN_OR_RETURN(settled, walk.Unmoved());
    }
    if (!settled) continue;
    for (MaskedPath& mask : walk.found()) expansion.masks.push_back(std::move(mask));
    for (const std::string& path : walk.hidden_whole()) {
      expansion.notes.push_back("forbid_read: " + path +
                                " could not be read to look for matches, so it is hidden whole");
    }
  }
  if (!settled) {
    std::string where;
    for (const std::string& root : roots) where += (where.empty() ? "" : ", ") + root;
    return Error(ErrorKind::kPolicy, "forbid_read: the tree under " + where + " moved while corral looked for paths to hide (" +
                                         std::to_string(scope.walk_attempts) +
                                         " walks, each saw directories renamed or created); the command was not run; "
                                         "run it again once nothing renames directories there");
  }

  // A hidden symlink hides what it points at too, when a grant shows that.
  for (size_t i = 0, n = expansion.masks.size(); i < n; ++i) {
    struct stat st;
    if (::lstat(expansion.masks[i].path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
    char resolved[PATH_MAX];
    if (::realpath(expansion.masks[i].path.c_str(), resolved) == nullptr || ::stat(resolved, &st) != 0) continue;
    bool inside = std::any_of(scope.visible_roots.begin(), scope.visible_roots.end(),
                              [&](const std::string& root) { return IsWithin(resolved, root); });
    if (inside) expansion.masks.push_back({resolved, S_ISDIR(st.st_mode), true, {st.st_dev, st.st_ino}});
  }
  std::vector<MaskedPath>& masks = expansion.masks;
  std::sort(masks.begin(), masks.end(), [](const MaskedPath& a, const MaskedPath& b) { return a.path < b.path; });
  masks.erase(std::unique(masks.begin(), masks.end(),
                          [](const MaskedPath& a, const MaskedPath& b) { return a.path == b.path; }),
              masks.end());
  return expansion;
}

const std::vector<std::string>& HomeCredentialPatterns() {
  // Exact paths only: a glob here would walk the home on every run.
  static const std::vector<std::string> patterns = {
      // Keys and keyrings.
      "~/.ssh", "~/.gnupg", "~/.password-store", "~/.local/share/keyrings", "~/.local/share/kwalletd", "~/.pki",
      "~/.config/sops", "~/.config/op", "~/.op",
      // Cloud and cluster credentials.
      "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube", "~/.oci", "~/.config/doctl", "~/.s3cfg", "~/.boto",
      "~/.vault-token", "~/.terraform.d/credentials.tfrc.json", "~/.terraformrc", "~/.config/rclone",
      // Container registries.
      "~/.docker/config.json", "~/.dockercfg", "~/.config/containers/auth.json",
      // Git hosts.
      "~/.netrc", "~/.git-credentials", "~/.config/git/credentials", "~/.config/gh/hosts.yml", "~/.config/hub",
      "~/.config/glab-cli",
      // Package registries.
      "~/.pypirc", "~/.npmrc", "~/.yarnrc.yml", "~/.cargo/credentials", "~/.cargo/credentials.toml",
      "~/.gem/credentials", "~/.m2/settings.xml", "~/.m2/settings-security.xml", "~/.gradle/gradle.properties",
      "~/.composer/auth.json", "~/.config/composer/auth.json", "~/.nuget/NuGet/NuGet.Config",
      // Databases.
      "~/.pgpass", "~/.my.cnf",
      // Browser and mail profiles (saved passwords, cookies, session tokens).
      "~/.mozilla", "~/.thunderbird", "~/.config/google-chrome", "~/.config/chromium", "~/.config/BraveSoftware",
      "~/.config/microsoft-edge", "~/.config/vivaldi",
      // AI agents' own logins.
      "~/.claude", "~/.claude.json", "~/.codex", "~/.config/github-copilot",
      // Shell and REPL histories (pasted tokens, passwords on command lines).
      "~/.bash_history", "~/.zsh_history", "~/.python_history", "~/.psql_history", "~/.mysql_history",
      "~/.local/share/fish",
  };
  return patterns;
}

}  // namespace corral
