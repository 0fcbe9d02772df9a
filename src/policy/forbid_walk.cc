#include "policy/forbid_walk.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/openat2.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "base/mutant.h"

namespace corral {

namespace {

// fnmatch(3) of one segment, without escapes; a segment with no wildcard
// matches only itself, which a comparison says without fnmatch.
bool SegmentMatches(const std::string& pattern, const std::string& segment) {
  if (pattern.find_first_of("*?[") == std::string::npos) return pattern == segment;
  return ::fnmatch(pattern.c_str(), segment.c_str(), FNM_NOESCAPE) == 0;
}

}  // namespace

std::string QuoteLiteral(std::string_view path) {
  if (MutantActive(Mutant::kForbidQuote)) return std::string(path);
  std::string quoted;
  quoted.reserve(path.size());
  for (char c : path) {
    if (c == '*' || c == '?' || c == '[') {
      quoted += '[';
      quoted += c;
      quoted += ']';
    } else {
      quoted += c;
    }
  }
  return quoted;
}

std::optional<std::string> LiteralOf(std::string_view pattern) {
  std::string literal;
  literal.reserve(pattern.size());
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '*' || c == '?') return std::nullopt;
    if (c == '[') {
      // Only a bracket of one plain character: `[x]`, not `[!x]`, `[^x]`,
      // `[]]` or a range.
      if (i + 2 >= pattern.size() || pattern[i + 2] != ']') return std::nullopt;
      char quoted = pattern[i + 1];
      if (quoted == '!' || quoted == '^' || quoted == ']' || quoted == '/') return std::nullopt;
      literal += quoted;
      i += 2;
      continue;
    }
    literal += c;
  }
  return literal;
}

PatternProgress::PatternProgress(const PatternSegments& patterns) : patterns_(&patterns) {
  live_.resize(patterns.size());
  for (size_t i = 0; i < patterns.size(); ++i) {
    live_[i].assign(patterns[i].size() + 1, 0);
    live_[i][0] = 1;
    Close(i);
  }
}

PatternProgress PatternProgress::Step(const std::string& segment) const {
  PatternProgress next = *this;
  for (size_t i = 0; i < live_.size(); ++i) {
    const std::vector<std::string>& pattern = (*patterns_)[i];
    std::vector<char>& to = next.live_[i];
    std::fill(to.begin(), to.end(), 0);
    for (size_t p = 0; p < pattern.size(); ++p) {
      if (!live_[i][p]) continue;
      if (pattern[p] == "**") to[p] = 1;
      else if (SegmentMatches(pattern[p], segment)) to[p + 1] = 1;
    }
    next.Close(i);
  }
  return next;
}

bool PatternProgress::Matches() const {
  for (size_t i = 0; i < live_.size(); ++i) {
    if (live_[i].back()) return true;
  }
  return false;
}

bool PatternProgress::MayMatchBelow() const {
  for (const std::vector<char>& live : live_) {
    if (std::find(live.begin(), live.end() - 1, 1) != live.end() - 1) return true;
  }
  return false;
}

void PatternProgress::Close(size_t i) {
  const std::vector<std::string>& pattern = (*patterns_)[i];
  for (size_t p = 0; p < pattern.size(); ++p) {
    if (live_[i][p] && pattern[p] == "**") live_[i][p + 1] = 1;
  }
}

PatternProgress ProgressOf(const PatternSegments& patterns, const std::string& path) {
  PatternProgress progress(patterns);
  for (const std::string& segment : PathSegments(path)) progress = progress.Step(segment);
  return progress;
}

BelowMatcher::BelowMatcher(const PatternSegments& patterns) {
  for (const std::vector<std::string>& pattern : patterns) {
    std::vector<std::string> literal;
    for (const std::string& segment : pattern) {
      std::optional<std::string> text = segment == "**" ? std::nullopt : LiteralOf(segment);
      if (!text) break;
      literal.push_back(std::move(*text));
    }
    if (literal.size() == pattern.size()) {
      literal_.push_back(std::move(literal));
    } else {
      globs_.push_back(pattern);
    }
  }
}

bool BelowMatcher::MayMatchBelow(const std::string& dir) const {
  const std::vector<std::string> at = PathSegments(dir);
  for (const std::vector<std::string>& pattern : literal_) {
    if (pattern.size() > at.size() && std::equal(at.begin(), at.end(), pattern.begin())) return true;
  }
  return !globs_.empty() && ProgressOf(globs_, dir).MayMatchBelow();
}

namespace {

// The forbid_walk_moves mutant (base/mutant.h): a tree seen moving is taken as it was listed.
bool MovesIgnored() { return MutantActive(Mutant::kForbidWalkMoves); }

std::string Join(const std::string& dir, const std::string& name) { return dir == "/" ? "/" + name : dir + "/" + name; }

}  // namespace

MaskWalk::MaskWalk(const PatternSegments& patterns, size_t budget) : patterns_(&patterns), budget_(budget) {}

Result<void> MaskWalk::Start() {
  watch_ = UniqueFd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!watch_) return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot watch the walk for moves", "inotify", errno);
  return {};
}

Result<bool> MaskWalk::WalkRoot(const std::string& root) {
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
  CORRAL_ASSIGN_OR_RETURN(Visit visit, VisitDir(fd, root, ProgressOf(*patterns_, root)));
  if (visit == Visit::kHideWhole) HideWhole(root, st);
  return visit != Visit::kMoved;
}

Result<bool> MaskWalk::Unmoved() {
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
      PatternProgress progress = ProgressOf(*patterns_, Join(dir->second, event->name));
      // A moved or new directory may hold matches; a moved file matters
      // when its name matches.
      if (progress.Matches() || ((event->mask & IN_ISDIR) && progress.MayMatchBelow())) return false;
    }
  }
}

Result<MaskWalk::Visit> MaskWalk::VisitDir(const UniqueFd& fd, const std::string& dir, const PatternProgress& progress) {
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
  struct Listed {
    std::string name;
    unsigned char type;  // d_type: DT_UNKNOWN where the filesystem does not say
  };
  std::vector<Listed> names;
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
    names.push_back({std::move(name), entry->d_type});
  }
  for (const auto& [name, type] : names) {
    PatternProgress child = progress.Step(name);
    const bool matches = child.Matches();
    if (!matches && !child.MayMatchBelow()) continue;
    // What matches no pattern matters only as a directory to walk into: an
    // entry the listing calls something else needs no fstatat (one made a
    // directory since is an IN_CREATE or IN_MOVED_TO, and Unmoved says so).
    if (!matches && type != DT_DIR && type != DT_UNKNOWN) continue;
    std::string path = Join(dir, name);
    struct stat st;
    if (::fstatat(fd.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return MovesIgnored() ? Visit::kListed : Visit::kMoved;  // listed, and gone
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
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) return MovesIgnored() ? Visit::kListed : Visit::kMoved;
      return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot open", path, errno);
    }
    struct stat opened;
    if (::fstat(sub.get(), &opened) != 0) {
      return Error::FromErrno(ErrorKind::kPolicy, "forbid_read: cannot inspect", path, errno);
    }
    if ((opened.st_dev != st.st_dev || opened.st_ino != st.st_ino) && !MovesIgnored()) return Visit::kMoved;
    CORRAL_ASSIGN_OR_RETURN(Visit visit, VisitDir(sub, path, child));
    if (visit == Visit::kMoved) return visit;
    if (visit == Visit::kHideWhole) HideWhole(path, st);
  }
  return Visit::kListed;
}

void MaskWalk::HideWhole(const std::string& path, const struct stat& st) {
  if (MutantActive(Mutant::kHideUnreadable)) return;
  found_.push_back({path, true, true, {st.st_dev, st.st_ino}});
  hidden_whole_.push_back(path);
}

}  // namespace corral
