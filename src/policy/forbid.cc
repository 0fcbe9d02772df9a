#include "policy/forbid.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <set>

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

// Segment-wise glob match, `**` spanning any number of segments. Dynamic
// programming over (pattern, path) positions keeps it O(P * Q) whatever the
// pattern: naive backtracking is exponential in the number of `**`s, and a
// project's corral.toml is only partly trusted.
bool MatchSegments(const std::vector<std::string>& pattern, const std::vector<std::string>& path) {
  // row[q]: pattern[p..] matches path[q..]; computed from the last pattern
  // segment backwards.
  std::vector<char> row(path.size() + 1, 0), next(path.size() + 1, 0);
  next[path.size()] = 1;  // the empty pattern matches only the empty path
  for (size_t p = pattern.size(); p-- > 0;) {
    const bool any = pattern[p] == "**";
    row[path.size()] = any && next[path.size()];
    for (size_t q = path.size(); q-- > 0;) {
      row[q] = any ? (next[q] || row[q + 1])
                   : (next[q + 1] && ::fnmatch(pattern[p].c_str(), path[q].c_str(), 0) == 0);
    }
    std::swap(row, next);
  }
  return next[0] != 0;
}

class Walker {
 public:
  Walker(const std::vector<std::string>& patterns, size_t budget) : patterns_(patterns), budget_(budget) {}

  Result<void> Walk(const std::string& dir) {
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd) return {};  // unreadable or gone: nothing the sandbox could read either
    DIR* stream = ::fdopendir(fd.Release());
    if (stream == nullptr) return {};
    std::vector<std::pair<std::string, bool>> children;
    while (const struct dirent* entry = ::readdir(stream)) {
      std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      if (++seen_ > budget_) {
        ::closedir(stream);
        return Error(ErrorKind::kPolicy, "forbid_read: matching the patterns walked more than " +
                                             std::to_string(budget_) + " entries under " + dir +
                                             "; use narrower patterns (for example an absolute path)");
      }
      bool is_dir = entry->d_type == DT_DIR;
      if (entry->d_type == DT_UNKNOWN) {
        struct stat st;
        is_dir = ::fstatat(::dirfd(stream), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
      }
      children.emplace_back(dir == "/" ? "/" + name : dir + "/" + name, is_dir);
    }
    ::closedir(stream);
    for (const auto& [path, is_dir] : children) {
      if (Matches(path)) {
        found_.insert({path, is_dir});
        continue;  // the whole subtree is hidden already
      }
      if (is_dir) CORRAL_TRY(Walk(path));
    }
    return {};
  }

  const std::set<std::pair<std::string, bool>>& found() const { return found_; }

 private:
  bool Matches(const std::string& path) const {
    return std::any_of(patterns_.begin(), patterns_.end(),
                       [&](const std::string& pattern) { return MatchesForbidPattern(pattern, path); });
  }

  const std::vector<std::string>& patterns_;
  size_t budget_;
  size_t seen_ = 0;
  std::set<std::pair<std::string, bool>> found_;
};

// The longest leading part of an absolute pattern without glob characters.
std::string LiteralPrefix(const std::string& pattern) {
  std::string prefix;
  for (const std::string& segment : Segments(pattern)) {
    if (HasGlob(segment)) break;
    prefix += "/" + segment;
  }
  return prefix.empty() ? "/" : prefix;
}

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
  return MatchSegments(Segments(pattern), Segments(path));
}

Result<std::vector<MaskedPath>> ExpandForbidden(const std::vector<std::string>& patterns, const std::string& home,
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
  Walker walker(absolute, scope.walk_budget);
  std::set<std::string> walked;
  std::vector<MaskedPath> masks;
  for (const std::string& pattern : absolute) {
    std::string start = LiteralPrefix(pattern);
    bool visible = std::any_of(scope.visible_roots.begin(), scope.visible_roots.end(), [&](const std::string& root) {
      return IsWithin(start, root) || IsWithin(root, start);
    });
    if (!visible) continue;  // outside every grant: already invisible
    if (start == pattern) {
      struct stat st;
      if (::lstat(pattern.c_str(), &st) != 0) continue;
      bool inside = std::any_of(scope.visible_roots.begin(), scope.visible_roots.end(),
                                [&](const std::string& root) { return IsWithin(pattern, root); });
      if (inside) masks.push_back({pattern, S_ISDIR(st.st_mode)});
      continue;
    }
    // Walk only the granted trees the glob can reach.
    for (const std::string& root : scope.visible_roots) {
      std::string base = IsWithin(start, root) ? start : (IsWithin(root, start) ? root : std::string());
      if (base.empty() || !walked.insert(base).second) continue;
      CORRAL_TRY(walker.Walk(base));
    }
  }
  for (const auto& [path, is_dir] : walker.found()) masks.push_back({path, is_dir});
  // A hidden symlink hides what it points at too, when a grant shows that.
  for (size_t i = 0, n = masks.size(); i < n; ++i) {
    struct stat st;
    if (::lstat(masks[i].path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) continue;
    char resolved[PATH_MAX];
    if (::realpath(masks[i].path.c_str(), resolved) == nullptr || ::stat(resolved, &st) != 0) continue;
    bool inside = std::any_of(scope.visible_roots.begin(), scope.visible_roots.end(),
                              [&](const std::string& root) { return IsWithin(resolved, root); });
    if (inside) masks.push_back({resolved, S_ISDIR(st.st_mode)});
  }
  std::sort(masks.begin(), masks.end(), [](const MaskedPath& a, const MaskedPath& b) { return a.path < b.path; });
  masks.erase(std::unique(masks.begin(), masks.end(),
                          [](const MaskedPath& a, const MaskedPath& b) { return a.path == b.path; }),
              masks.end());
  return masks;
}

}  // namespace corral
