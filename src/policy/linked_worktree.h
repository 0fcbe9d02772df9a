// A workspace that is a linked worktree (`git worktree add`): its `.git` is
// a file, `gitdir: <repo>/.git/worktrees/NAME`, and git inside needs that
// gitdir and the repository it shares objects and refs with (its "common
// dir", `<repo>/.git`). LinkedWorktreeRepository finds that common dir, so
// the policy can grant it beside the workspace; the main worktree's files
// (`<repo>` itself) are not granted.
//
// The common dir is granted only when every link agrees, read on the host
// without following a symlink into the tree:
//   - the workspace's `.git` is a regular file whose first line is
//     `gitdir: G` (absolute, or relative to the workspace);
//   - G, canonical, is a directory named `worktrees/NAME` inside a
//     directory C, and G's `commondir` names C (relative to G, or absolute);
//   - G's `gitdir` file points back at this workspace's `.git`: the
//     repository itself claims this worktree, so a `.git` file copied or
//     planted into a tree cannot reach another repository's gitdir;
//   - C is a directory the caller owns holding `HEAD`, `objects/` and
//     `refs/`, and is not `/` or the home.
// Anything else gives no grant and a note saying why (git inside then says
// "not a git repository"; the run still goes ahead). Protected-path
// discovery then protects C's hooks, config, config.worktree and commondir,
// and every gitdir under C/worktrees and C/modules, as for any repository
// inside a writable root.
//
//   std::string note;
//   std::optional<std::string> common = LinkedWorktreeRepository("/src/app-fix", host, &note);
//   // "/src/app/.git"
#pragma once

#include <optional>
#include <string>

#include "policy/roots.h"

namespace corral {

// nullopt, and `note` empty, when `workspace` is not a linked worktree.
std::optional<std::string> LinkedWorktreeRepository(const std::string& workspace, const HostContext& host,
                                                    std::string* note);

}  // namespace corral
