#include "policy/forbid.h"

#include <sys/stat.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <optional>

#include "base/mutant.h"
#include "policy/forbid_walk.h"
#include "policy/path.h"

namespace corral {

Result<std::string> NormalizeForbidPattern(const std::string& pattern, const std::string& home) {
  if (pattern.empty()) return Error(ErrorKind::kUsage, "forbid_read: empty pattern");
  std::string text = pattern;
  if (text == "~") text = QuoteLiteral(home);
  else if (text.starts_with("~/")) text = QuoteLiteral(home) + text.substr(1);
  const bool absolute = text.front() == '/';
  std::string normalized = absolute ? "/" : "";
  for (size_t start = 0; start <= text.size();) {  // each segment, without splitting into strings
    size_t end = text.find('/', start);
    if (end == std::string::npos) end = text.size();
    std::string_view segment = std::string_view(text).substr(start, end - start);
    start = end + 1;
    if (segment == "..") return Error(ErrorKind::kUsage, "forbid_read " + pattern + ": '..' is not allowed");
    if (segment.empty() || segment == ".") continue;
    if (!normalized.empty() && normalized.back() != '/') normalized += '/';
    normalized += segment;
  }
  if (normalized.empty()) return Error(ErrorKind::kUsage, "forbid_read " + pattern + ": names no path to hide");
  return normalized;
}

bool MatchesForbidPattern(const std::string& pattern, const std::string& path) {
  const PatternSegments patterns = {PathSegments(pattern)};
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
      for (const std::string& root : scope.user_roots) absolute.push_back(QuoteLiteral(root) + "/" + pattern);
    }
  }
  PatternSegments segments;
  for (const std::string& pattern : absolute) segments.push_back(PathSegments(pattern));

  const BelowMatcher below(segments);
  std::vector<std::string> literals;  // the one path each literal pattern names
  for (const std::string& pattern : absolute) {
    if (std::optional<std::string> literal = LiteralOf(pattern)) literals.push_back(std::move(*literal));
  }
  ForbidExpansion expansion;
  std::vector<std::string> roots;  // the granted directories a pattern can match inside
  for (const std::string& root : scope.visible_roots) {
    // A literal pattern may name a grant itself; a glob only hides what lies
    // inside one (as `W/**` hides W's entries, not W).
    bool named = std::find(literals.begin(), literals.end(), root) != literals.end();
    struct stat st;
    if (named) {
      if (::lstat(root.c_str(), &st) == 0) {
        expansion.masks.push_back({root, S_ISDIR(st.st_mode), true, {st.st_dev, st.st_ino}});
      }
      continue;
    }
    if (!below.MayMatchBelow(root)) continue;
    if (::lstat(root.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) continue;
    roots.push_back(root);
  }

  bool settled = roots.empty();
  for (int attempt = 0; attempt < scope.walk_attempts && !settled; ++attempt) {
    MaskWalk walk(segments, scope.walk_budget);
    CORRAL_TRY(walk.Start());
    settled = true;
    for (const std::string& root : roots) {
      CORRAL_ASSIGN_OR_RETURN(bool held, walk.WalkRoot(root));
      if (!held) {
        settled = false;
        break;
      }
    }
    if (settled && !MutantActive(Mutant::kForbidWalkMoves)) {
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

}  // namespace corral
