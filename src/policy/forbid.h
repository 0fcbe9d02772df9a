// forbid_read: paths hidden from the sandbox even inside granted trees.
//
// A pattern is one of:
//   /abs/path        that path;
//   ~/path           relative to the caller's home;
//   rel/path         relative to each user root (the workspace and the
//                    --allow-* grants, not the system trees);
// and may use glob syntax in any segment: `*`, `?`, `[...]` within one
// segment (they match dot files too), and `**` for any number of segments,
// e.g. `**/.env` or `~/.ssh`.
//
// ExpandForbidden resolves patterns to the paths that exist now inside a
// granted tree; the sandbox masks each one (an empty, unreadable file or
// directory mounted over it). The walk goes only where a pattern can still
// match, with a budget: a walk that exceeds it is an error, never a silent
// partial mask. A directory the walk cannot read, where a pattern could
// match below, is hidden whole (and a note says so).
//
// The walk works on pinned directory fds (openat relative to the parent,
// never following a symlink, each directory checked to be the inode its
// parent listed) and watches every directory it lists for entries renamed
// into or out of it and directories created in it. A walk during which a
// relevant entry moved is thrown away and done again; after
// `walk_attempts` such walks the expansion is refused. Every mask records
// the (dev, inode) the walk saw: the sandbox's child mounts the mask on
// exactly that file, or refuses to run the command.
//
// What this does not cover: a process that renames or links a matching
// file to a name no pattern matches (the patterns name paths, not contents).
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "policy/roots.h"

namespace corral {

// Rejects empty patterns and ".." segments, drops "." segments and extra
// slashes (a pattern that names nothing then, like ".", is refused), and
// expands "~/" to the home, quoted (QuoteLiteral in policy/forbid_walk.h)
// so that the home's own name is never read as a wildcard.
Result<std::string> NormalizeForbidPattern(const std::string& pattern, const std::string& home);

// True when `path` (absolute) matches the normalized absolute pattern.
bool MatchesForbidPattern(const std::string& pattern, const std::string& path);

struct ForbidScope {
  std::vector<std::string> user_roots;     // where relative patterns apply
  std::vector<std::string> visible_roots;  // every granted tree
  size_t walk_budget = 200000;             // directory entries per expansion
  int walk_attempts = 5;                   // walks thrown away because the tree moved, then refusal
};

struct ForbidExpansion {
  std::vector<MaskedPath> masks;   // sorted by path, each pinned
  std::vector<std::string> notes;  // directories hidden whole, for explain
};

// Masks for every existing path that matches, inside `visible_roots`.
Result<ForbidExpansion> ExpandForbidden(const std::vector<std::string>& patterns, const std::string& home,
                                        const ForbidScope& scope);

}  // namespace corral
