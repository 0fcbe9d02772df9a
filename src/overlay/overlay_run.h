// One overlay run's directory in corral's state: where `corral run
// --overlay` keeps what the command wrote, until `corral apply` or
// `corral discard` settles it.
//
//   <state>/overlay/<run id>/
//     upper/     the overlayfs upper layer: every file the command wrote,
//                whiteouts (deletions) and opaque directories
//     work/      overlayfs's work directory
//     root       the real workspace's path, then its (dev, inode), one a line;
//                then the same two lines for each --overlay-root
//     baseline   what each changed path was in the real tree when the run
//                ended (overlay/changes.h): apply's conflict check
//     snapshot/  only while a copied-snapshot run (overlay/snapshot.h) lives:
//                the copy of the real tree the command writes
//     root.N/    the N-th --overlay-root's (N from 1) own upper/, work/ and
//                baseline (and snapshot/), as above for the workspace
//     lock       held (flock) by the run while it lives and by apply and
//                discard: one of them at a time per run id
//
//   Result<OverlayRun> run = OverlayRun::Create(state, trail.run_id(), workspace);
//   ... the sandbox mounts run->path() + "/upper" over the workspace ...
//   Result<OverlayRun> later = OverlayRun::Open(state, id, OverlayRun::Wait::kNo);
//
// Everything is reached from the state directory's descriptor, one component
// at a time with O_NOFOLLOW (state/state_dir.h checks each: the caller's,
// 0700, no symlink), never through the path again; the path is only for the
// overlayfs options and messages. A run id is a single plain name (letters,
// digits, '.', '-', '_', not starting with '.'): anything else is refused.
//
// Security: the upper was written by the confined command. Nothing here
// trusts a name or a type in it; overlay/apply.h reads it on pinned fds.
#pragma once

#include <string>
#include <vector>

#include "base/file_identity.h"
#include "base/result.h"
#include "base/unique_fd.h"
#include "state/state_dir.h"

namespace corral {

// One real tree a run overlays: the workspace (index 0) or an --overlay-root.
struct OverlayRoot {
  std::string path;
  FileIdentity id;
};

class OverlayRun {
 public:
  enum class Wait { kNo, kYes };

  // A new run's directory (upper, work, root, lock, and a root.N/ for each
  // of `extra_roots`), locked. Refused when `id` is not a plain name or is
  // taken.
  static Result<OverlayRun> Create(const StateDir& state, const std::string& id, const std::string& root,
                                   FileIdentity root_id, const std::vector<OverlayRoot>& extra_roots = {});
  // An existing run, locked (kNo: refused at once, code overlay_busy, when
  // a run or an apply holds it).
  static Result<OverlayRun> Open(const StateDir& state, const std::string& id, Wait wait);
  // The ids of the kept runs, sorted.
  static std::vector<std::string> List(const StateDir& state);
  // The run ids kept; the newest (by the directory's change time) is last.
  static Result<std::string> Newest(const StateDir& state);

  const std::string& id() const { return id_; }
  const std::string& path() const { return path_; }  // for the overlayfs options only
  const std::string& root() const { return roots_[0].path; }   // the real workspace
  FileIdentity root_id() const { return roots_[0].id; }
  // Every tree the run overlays: the workspace first, then each --overlay-root.
  const std::vector<OverlayRoot>& roots() const { return roots_; }
  int dir() const { return dir_.get(); }
  // The directory holding root `index`'s upper and work (for the overlayfs
  // options only).
  std::string LayerPath(size_t index) const;
  // The upper layer of root `index`, O_PATH, opened without following a symlink.
  Result<UniqueFd> Upper(size_t index = 0) const;
  // The real tree `index`, opened without following a symlink at any
  // component, and only when it is still the (dev, inode) of the run.
  Result<UniqueFd> OpenRoot(size_t index = 0) const;

  // Root `index`'s baseline file's text ("" before the run ended).
  Result<std::string> ReadBaseline(size_t index = 0) const;
  Result<void> WriteBaseline(const std::string& text, size_t index = 0) const;

  // Removes the run's directory and everything in it (the caller holds the
  // lock; the lock file goes last).
  Result<void> Remove();

  // Root `index`'s own directory (O_RDONLY, opened without following a
  // symlink): the run's for the workspace, root.N for the others.
  Result<UniqueFd> LayerDir(size_t index) const;

 private:
  std::string id_;
  std::string path_;
  std::vector<OverlayRoot> roots_;
  UniqueFd dir_;
  UniqueFd lock_;
  UniqueFd overlays_;  // <state>/overlay
};

inline constexpr char kOverlayBusy[] = "overlay_busy";
inline constexpr char kOverlayUnknown[] = "overlay_unknown";

// Whether `id` is a plain name a run id can be.
bool IsOverlayRunId(const std::string& id);

// Removes the directory tree `name` in `dir`, walking it on descriptors
// (never a path, never a symlink followed); a directory the kernel left
// unreadable (overlayfs's work/work), or a confined command made unreadable
// or unwritable, is made the caller's 0700 first (AT_SYMLINK_NOFOLLOW).
// Bounded however deep the tree: it holds at most 32 directory descriptors
// (and stack frames) at once; a directory deeper than that is renamed up
// into `name` (".corral-remove-<n>") and removed from there.
Result<void> RemoveTreeAt(int dir, const std::string& name);

}  // namespace corral
