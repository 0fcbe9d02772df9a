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
// directory mounted over it). Globs walk the trees they can match in, with a
// budget: a walk that exceeds it is an error, never a silent partial mask.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "policy/roots.h"

namespace corral {

// Rejects empty patterns and ".." segments; expands "~/".
Result<std::string> NormalizeForbidPattern(const std::string& pattern, const std::string& home);

// True when `path` (absolute) matches the normalized absolute pattern.
bool MatchesForbidPattern(const std::string& pattern, const std::string& path);

struct ForbidScope {
  std::vector<std::string> user_roots;     // where relative patterns apply
  std::vector<std::string> visible_roots;  // every granted tree
  size_t walk_budget = 200000;             // directory entries per expansion
};

// Masks for every existing path that matches, inside `visible_roots`.
Result<std::vector<MaskedPath>> ExpandForbidden(const std::vector<std::string>& patterns, const std::string& home,
                                                const ForbidScope& scope);

}  // namespace corral
