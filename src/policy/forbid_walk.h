// The forbid_read mask walk: finds, in the granted trees, every path that
// matches a pattern, on pinned directory fds and watched for moves.
//
//   MaskWalk walk(patterns, budget);  // patterns as PathSegments, absolute
//   CORRAL_TRY(walk.Start());
//   for (root : roots) held = walk.WalkRoot(root)  // false: the tree moved
//   held = walk.Unmoved()                          // false: it moved since
//
// Each directory is opened relative to its parent's fd without following a
// symlink, checked to be the inode its parent listed, and watched (inotify)
// for entries renamed into or out of it and directories created in it,
// before it is listed. When the walk ends and Unmoved() holds, every listing
// still holds: together they are the tree as it is at that moment, and each
// match is recorded with its (dev, inode). A walk that did not hold must be
// thrown away (a MaskWalk is used once). The walk goes only where a pattern
// can still match. A directory it cannot read, where a pattern could match
// below, is recorded as a mask of its own (hidden whole).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "policy/path.h"
#include "policy/roots.h"

namespace corral {

using PatternSegments = std::vector<std::vector<std::string>>;

// The pattern language: `*`, `?` and `[...]` within a segment, as fnmatch(3)
// reads them without escapes (FNM_NOESCAPE: a backslash is a character like
// any other), and `**` for any number of segments. A path is put into a
// pattern with QuoteLiteral, which turns each `*`, `?` and `[` into a
// bracket of that one character (`[*]`, `[?]`, `[[]`), so a workspace or a
// home named `proj[1]` matches itself and nothing else. LiteralOf gives back
// the one string a pattern matches, when it matches only one (no wildcard,
// and every bracket a quoted character); nullopt for a real glob.
std::string QuoteLiteral(std::string_view path);
std::optional<std::string> LiteralOf(std::string_view pattern);

// The pattern positions a path has reached: position p is live when
// pattern[0..p) matches the path's segments (an NFA over the segments, `**`
// staying put or moving on; `*`, `?` and `[...]` as fnmatch within one
// segment). The path matches when the end is live; a directory can hold
// matches when some earlier position is. Each step is O(pattern length)
// whatever the pattern: backtracking would be exponential in the number of
// `**`s, and a project's corral.toml is only partly trusted. Keeps a
// pointer to `patterns`, which must outlive it.
class PatternProgress {
 public:
  explicit PatternProgress(const PatternSegments& patterns);
  PatternProgress Step(const std::string& segment) const;
  bool Matches() const;
  bool MayMatchBelow() const;

 private:
  void Close(size_t i);
  const PatternSegments* patterns_;
  std::vector<std::vector<char>> live_;
};

PatternProgress ProgressOf(const PatternSegments& patterns, const std::string& path);

// Whether any of `patterns` may match inside a directory: exactly
// ProgressOf(patterns, dir).MayMatchBelow(), but a literal pattern (every
// segment has a LiteralOf) is only a comparison of segments, with no
// matcher run. The credential stores, about a hundred literal paths, are
// asked this of every grant.
class BelowMatcher {
 public:
  explicit BelowMatcher(const PatternSegments& patterns);
  bool MayMatchBelow(const std::string& dir) const;

 private:
  PatternSegments literal_;  // each segment as LiteralOf gives it
  PatternSegments globs_;
};

class MaskWalk {
 public:
  // Keeps a pointer to `patterns`, which must outlive the walk. `budget`
  // bounds the directory entries listed; past it the walk is an error.
  MaskWalk(const PatternSegments& patterns, size_t budget);
  MaskWalk(const MaskWalk&) = delete;
  MaskWalk& operator=(const MaskWalk&) = delete;

  Result<void> Start();
  // Walks `root`, a granted directory; false when the tree moved.
  Result<bool> WalkRoot(const std::string& root);
  // True when no watched directory saw a relevant change since its listing.
  Result<bool> Unmoved();

  std::vector<MaskedPath>& found() { return found_; }              // each pinned
  const std::vector<std::string>& hidden_whole() const { return hidden_whole_; }

 private:
  enum class Visit { kListed, kHideWhole, kMoved };
  Result<Visit> VisitDir(const UniqueFd& fd, const std::string& dir, const PatternProgress& progress);
  void HideWhole(const std::string& path, const struct stat& st);

  const PatternSegments* patterns_;
  size_t budget_;
  size_t seen_ = 0;
  UniqueFd watch_;
  std::map<int, std::string> watched_;
  std::vector<MaskedPath> found_;
  std::vector<std::string> hidden_whole_;
};

}  // namespace corral
