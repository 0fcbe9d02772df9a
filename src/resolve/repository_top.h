// The workspace a run from inside a git repository gets: the repository's
// top level, not the subdirectory it was started in (whose git commands
// would otherwise say "not a git repository"). The working directory inside
// the sandbox stays where it was.
//
// Only the layer that would take the working directory uses this: an
// explicit --workspace, a session's cwd or the config's workspace_root win
// over it. Looking up from the working directory's parent (the working
// directory itself is its own top when it holds the `.git`), the first
// directory that holds a `.git` (a directory or a `gitdir:` file, never
// through a symlink) is the top, as git finds it: the walk stops at a
// filesystem boundary, at "/" and at the home directory, so neither "/" nor
// $HOME (a dotfiles repository) ever becomes the workspace, and nor does a
// directory the caller does not own or that VetWorkspace refuses as a
// derived workspace (a shared scratch directory, a system tree). In each of
// those cases the working directory stays the workspace, and `note` says
// why, for `corral explain`.
#pragma once

#include <optional>
#include <string>

#include "policy/roots.h"

namespace corral {

// The top of the repository `host.cwd` lies below, when it may be the
// workspace; nullopt otherwise (`note` set when a top was found and refused).
std::optional<std::string> RepositoryTop(const HostContext& host, std::string* note);

}  // namespace corral
