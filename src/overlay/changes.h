// What an overlay run changed: the upper layer read against the real tree.
//
//   CORRAL_ASSIGN_OR_RETURN(UniqueFd upper, run.Upper());
//   CORRAL_ASSIGN_OR_RETURN(UniqueFd root, run.OpenRoot());
//   CORRAL_ASSIGN_OR_RETURN(ChangeSet changes, ScanChanges(upper.get(), root.get(), started));
//   std::fputs(RenderSummary(run.id(), changes).c_str(), stderr);
//
// The upper is as overlayfs in a user namespace writes it (userxattr): a
// file or directory the command made or changed, a whiteout (a character
// device 0:0) where it deleted something, and a directory marked opaque
// (user.overlay.opaque = "y") where it replaced a real one whole. The walk
// opens every name with O_NOFOLLOW from pinned directory fds, on both sides
// (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS in the real tree), and
// never climbs: the command chose every name and type in the upper.
//
// A change to a special file (a FIFO, a socket, a device other than a
// whiteout) or to a file with a set-user-ID or set-group-ID bit is listed
// with its refusal and never applied. A file the command only copied up
// (touched, or opened for writing and left equal) is not a change.
//
// The baseline is what each changed path was in the real tree when the run
// ended (type, mode, size, mtime, inode, and a SHA-256 up to 1 MiB); apply
// compares the tree with it, and a path whose real file changed (ctime)
// after the run started is a conflict from the start: the user edited it
// while the command ran. It covers what the run changed at any depth:
//   - `above`: each real directory the upper passes through without
//     changing it (a/ and a/b/ for a changed a/b/c.txt): one removed,
//     replaced (another inode), or re-moded since, or made after the run
//     started (its birth time, where the filesystem keeps one), holds back
//     every change below it;
//   - `trees`: every real entry below a directory the run deleted or
//     replaced whole (type, mode, inode, size, mtime, ctime): one changed,
//     added or removed since (or changed while the run ran) holds the
//     deletion back, so apply never throws away an edit it did not see.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"

namespace corral {

enum class ChangeKind {
  kAdded,     // absent in the real tree
  kModified,  // a file or symlink with other contents
  kMode,      // the same contents, another mode
  kDeleted,   // a whiteout over a real file or directory tree
  kReplaced,  // another type, or an opaque directory over a real one (its old entries go)
};

struct Change {
  std::string path;  // relative to the workspace, the bytes as they are
  ChangeKind kind = ChangeKind::kAdded;
  mode_t before = 0;  // st_mode in the real tree (0: absent)
  mode_t after = 0;   // st_mode in the upper (0: deleted)
  uint64_t size_before = 0;
  uint64_t size_after = 0;
  std::string refusal;       // why apply never lands it ("" : it may)
  std::string renamed_from;  // an added file equal to a deleted one (the summary's rename)
  bool renamed_away = false;  // this deletion is the other half of a rename
};

struct Baseline {
  bool exists = false;
  mode_t mode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t ino = 0;
  int64_t ctime_ns = 0;         // compared for `trees` entries (0: not recorded)
  std::string sha256;           // regular files up to 1 MiB
  bool changed_in_run = false;  // its ctime (`above`: its birth time) is after the run started
  bool tree = false;            // a directory deleted or replaced whole: its entries are in `trees`
};

struct ChangeSet {
  std::vector<Change> changes;     // sorted, each directory before what is in it
  std::vector<Baseline> baseline;  // one per change, same order
  std::map<std::string, Baseline> above;  // directories the upper passes through, by path
  std::map<std::string, Baseline> trees;  // the real entries below a deleted or replaced directory
  uint64_t upper_bytes = 0;        // the regular files' bytes in the upper
};

// Whether a change removes a real directory with what is in it (so its
// `trees` entries are compared at apply).
bool RemovesRealDirectory(const Change& change);

// Reads the upper against the real tree. `started_ns`: when the run
// started (CLOCK_REALTIME, ns); 0 skips the changed-in-run check.
Result<ChangeSet> ScanChanges(int upper, int real_root, int64_t started_ns);

// The baseline file's text, and back (the path is the key). Attaching
// replaces each change's record, and the `trees` entries below it, by the
// text's where it has one (a stacked run keeps its run's); `above` entries
// likewise.
std::string SerializeBaseline(const ChangeSet& changes);
Result<void> AttachBaseline(const std::string& text, ChangeSet& changes);

// The one-screen summary printed after an overlay run.
std::string RenderSummary(const std::string& run_id, const ChangeSet& changes);
// `corral diff --stat`: one line a change and a total.
std::string RenderStat(const ChangeSet& changes);
// `corral diff --json` and `corral changes --json`: the changes as JSON text
// (a path that is not UTF-8 becomes {"bytes_hex": ...}, base/json_bytes.h).
std::string RenderJson(const std::string& run_id, const ChangeSet& changes);

std::string_view ChangeKindName(ChangeKind kind);

// Opens `relative` below `root` (a pinned directory fd) with openat2
// RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS and
// O_NOFOLLOW, so neither a symlink nor ".." on the way is ever followed.
// "" opens `root` itself. Returns the fd or -errno.
int OpenBeneath(int root, const std::string& relative, int flags);

}  // namespace corral
