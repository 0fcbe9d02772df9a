// `corral apply`: an overlay run's changes landed in the real tree, all or
// some, each whole or not at all.
//
//   CORRAL_ASSIGN_OR_RETURN(OverlayRun run, OverlayRun::Open(state, id, OverlayRun::Wait::kNo));
//   CORRAL_ASSIGN_OR_RETURN(ApplyReport report, ApplyChanges(run, ApplyOptions{}));
//
// For each change (directories before what is in them):
//   - refused: a special file, a device or a set-ID bit (ChangeSet's refusal);
//   - protected: a path IsProtectedRelative names (.git/hooks/..., .bashrc,
//     .vscode, ...), unless ApplyOptions::include_protected names it or a
//     directory above it: this closes, for overlay runs, the window in which
//     such a file sits in the tree before the post-run sweep;
//   - conflict: the real path is no longer what the baseline recorded when
//     the run ended (existence, type, mode, size, mtime, inode, and the
//     SHA-256 up to 1 MiB), or it changed while the run ran: left alone;
//   - already applied: the real path already is what the upper holds (so
//     apply can be re-run, and one interrupted halfway is finished);
//   - applied: a file or symlink is written beside its target under a
//     temporary name and renamed over it (renameat2 RENAME_NOREPLACE where
//     the baseline had nothing, so a file that appeared meanwhile is a
//     conflict, not overwritten); a deletion or a replaced directory is
//     renamed aside first, then removed; a directory is made with its mode.
//
// Security: this runs with the user's authority, outside the sandbox, on an
// upper the confined command wrote and a real tree another run may be
// changing. Both are opened once (the workspace checked against the run's
// (dev, inode)) and every name below is reached with openat2 RESOLVE_BENEATH
// | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS and O_NOFOLLOW: a symlink
// planted in either tree is a name like any other, never a way out. Types
// come from lstat; file contents are copied, never linked.
#pragma once

#include <string>
#include <vector>

#include "base/result.h"
#include "overlay/changes.h"
#include "overlay/overlay_run.h"

namespace corral {

struct ApplyOptions {
  std::vector<std::string> paths;              // relative to the workspace; empty: every change
  std::vector<std::string> include_protected;  // relative; the protected paths to apply anyway
};

enum class ApplyOutcome { kApplied, kAlreadyApplied, kConflict, kProtected, kRefused, kFailed, kNotSelected };
std::string_view ApplyOutcomeName(ApplyOutcome outcome);

struct AppliedChange {
  std::string path;
  ApplyOutcome outcome = ApplyOutcome::kApplied;
  std::string detail;  // why, for what was held back
};

struct ApplyReport {
  std::vector<AppliedChange> changes;
  // Counts of what landed (applied or already there) and what did not.
  size_t landed = 0;
  size_t held_back = 0;
};

// Root `index` of the run (0: the workspace, then each --overlay-root);
// ApplyOptions' paths are relative to that root.
Result<ApplyReport> ApplyChanges(const OverlayRun& run, size_t index, const ApplyOptions& options);

// How many of the run's changes (every root's) are not in the real tree yet
// (for `corral changes`); an error when the run cannot be read.
Result<size_t> PendingChanges(const OverlayRun& run);

// A path the user named (relative, or absolute inside `root`) as the
// relative form apply compares, or an error for one outside the workspace
// or with "." or ".." components.
Result<std::string> RelativeSelection(const std::string& root, const std::string& path);

}  // namespace corral
