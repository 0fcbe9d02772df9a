// Protected paths: files inside a writable root that run outside the sandbox
// later (git hooks and config, shell startup files, direnv, hook managers,
// package manager and editor config, MCP server lists and agent settings,
// corral's own project config).
//
// What the sandbox does with them:
// - an existing file or directory is bind-mounted read-only over itself;
// - every directory between the writable root and it (for example .git) is
//   bind-mounted over itself, so it cannot be renamed away and replaced;
// - one that is missing cannot be pinned by a mount without creating a
//   placeholder in the user's tree, which corral never does. Instead, when the
//   sandbox is gone, anything the run created at a missing protected path is
//   moved out of the tree and reported (SweepProtected, repair/sweep.h).
// - a protected symlink keeps its target pinned read-only when that target is
//   writable (or swept, when it is missing), and is restored by the sweep if
//   the run replaced it.
//
// A `.git` file (worktrees, submodules) is followed through its `gitdir:` and
// `commondir` pointers, and a `core.hooksPath` set in the repository's config
// (husky's `.husky/_`, ...) is protected like `.git/hooks`. These pointers
// are the user's: each exists before the run and is read-only to it. Their
// targets are resolved by ResolveInRoots, so a symlink a run planted on the
// way never leads corral outside the writable roots, and the files are read
// by ReadGitFile (regular files only, bounded). A pointer that names a
// writable root itself is not turned into a read-only bind of the whole root.
//
// The gitdirs under `.git/modules/` and `.git/worktrees/` are protected where
// they are (hooks, config, config.worktree, commondir), but a run can create
// new ones, so nothing in them is followed or read. A Mercurial `.hg` gets
// its hgrc, hgrc-not-shared and sharedpath protected (and the hgrc of the
// share source sharedpath names).
//
// Below the top of a root, a bounded breadth-first walk (protected.cc says
// the bounds; no symlink followed, dependency and cache trees skipped) finds
// the repositories and protected names that exist in directories near the
// top and protects them, and records a missing `.git` and `.hg` in the
// directories nearest the top, so the sweep takes out a repository the run
// creates there (one a gitlink in the top index would make a host `git
// status` enter). A repository below the top may be an earlier run's: its
// pointers are followed only inside the roots. Not covered: anything past
// the walk's bounds or in a directory the run creates, hooks paths set in
// global or system config or in a submodule's config, and more than a
// bounded number of nested gitdirs (a note says when a bound was hit).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/path.h"

namespace corral {

struct ProtectedPath {
  enum class State { kMissing, kDirectory, kFile, kSymlink };
  std::string path;  // absolute
  State state = State::kMissing;
  FileIdentity id;          // for kDirectory and kFile
  std::string link_target;  // for kSymlink
  std::string root;         // the writable root it was found under
  int64_t born = 0;         // for kDirectory and kFile: its birth time (policy/birth_time.h), 0 if unknown
};

struct ProtectedSet {
  std::vector<ProtectedPath> paths;    // sorted by path
  std::vector<PinnedPath> anchors;     // directories bound over themselves, sorted
  std::vector<PinnedPath> roots;       // the writable roots as discovery found them
  // Roots, or directories below them, that moved while discovery read them
  // (another directory took a root's place, a walked directory was gone):
  // what was found cannot be trusted, and the policy refuses to run.
  std::vector<std::string> moved_roots;
  // What discovery saw and left unprotected, one sentence each (a git file
  // that is not a regular file, a symlink to a writable root, a limit hit).
  std::vector<std::string> notes;
};

// The protected names relative to a writable root.
const std::vector<std::string>& ProtectedNames();

// Whether `relative` (a path below a writable root, '/'-separated, no "."
// or "..") is a protected path or lies inside one, at any depth: a
// component in the root names (".bashrc", ".vscode", "corral.toml", ...),
// a `.git` or `.hg` itself (a new repository or gitdir pointer), or a
// gitdir / .hg name below one (".git/hooks/x", ".git/modules/m/config",
// ".hg/hgrc"). Stricter than discovery, which looks near the top only:
// `corral apply` asks it of every path an overlay run changed.
bool IsProtectedRelative(std::string_view relative);

// Finds the protected paths under each writable root. Paths a pointer leads to
// are kept only when they lie inside one of `writable_roots`.
ProtectedSet DiscoverProtected(const std::vector<std::string>& writable_roots);

}  // namespace corral
