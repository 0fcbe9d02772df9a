// Compiles a Policy into the ordered list of mount operations the sandbox
// child applies (linux/mounts.h), together with each mount's Landlock rights.
//
// The view holds: the grants (read-only unless writable), the system trees and
// their symlinks, masks over /etc secrets, read-only binds over protected paths
// and rename-proof binds over their parent directories, a minimal /dev
// (null, zero, full, random, urandom, tty, a private devpts and /dev/shm), a
// fresh /proc with /proc/sys and friends read-only, a private /tmp and an
// empty $HOME.
//
// Exec has two layers. Every bind whose grant gives no exec is mounted
// noexec (no execve, no PROT_EXEC mapping of its files: a shared library in
// a read grant does not load). And since Landlock unions rights down the
// path, the private /tmp and $HOME carry an exec right only when no grant
// without exec lies below them.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "kernel/landlock.h"
#include "kernel/mounts.h"
#include "policy/access.h"
#include "policy/policy.h"

namespace corral {

// The /etc/resolv.conf a --network none sandbox sees (MountKind::kFileOver):
// the sandbox's own name server, one attempt, a second's patience.
inline constexpr const char* kSandboxResolvConf = "nameserver 127.0.0.1\noptions attempts:1 timeout:1\n";

// The Landlock filesystem rights a grant of `access` gives, limited to what
// `rights` handles and, for a non-directory, to the rights a file can carry.
uint64_t LandlockFsAccess(const LandlockRights& rights, Access access, bool is_dir);

class MountPlan {
 public:
  MountPlan() = default;
  MountPlan(MountPlan&&) = default;
  MountPlan& operator=(MountPlan&&) = default;
  MountPlan(const MountPlan&) = delete;
  MountPlan& operator=(const MountPlan&) = delete;

  std::vector<MountOp> ops;    // sorted by target, parents first
  uint64_t root_landlock = 0;  // rights on "/" itself

  // A short description of op `index`, for error messages.
  std::string Describe(long index) const;

  // Adds a mask over `mask` (confine/etc_view.h adds /etc's when it cannot
  // idmap it), keeping `ops` sorted.
  void AddMask(const MaskedPath& mask);
  // Adds a read-only file holding `text` over the regular file at `target`
  // (MountKind::kFileOver), keeping `ops` sorted.
  void AddFileOver(std::string target, std::string text);
  // Shows the protected regular file `target` (still `pin`) as a symlink
  // (MountKind::kSymlinkOver) to `view_dir`/<its name>, and binds the host
  // directory `stage` (which holds the run's private copy of it) writable,
  // noexec, at `view_dir` with `landlock`: a tool that replaces the file by
  // renaming a lock file onto it (git config) does so beside the copy
  // (repair/git_config_stage.h). Replaces target's read-only bind; false
  // when the plan has no bind of `target` to replace (nothing changes).
  bool AddStagedFile(const std::string& target, FileIdentity pin, const PinnedPath& stage, const std::string& view_dir,
                     uint64_t landlock);
  // --overlay: the bind of `workspace` becomes an overlayfs whose upper and
  // work directories are in `overlay_dir` (MountKind::kOverlay). The
  // writable binds of the real tree below it (the rename-proof anchors of
  // protected paths: the command cannot rename in the real tree any more)
  // are dropped; a writable grant nested inside the workspace is refused,
  // as it would write the real tree beside the overlay. The read-only binds
  // over protected paths stay.
  Result<void> OverlayWorkspace(const std::string& workspace, const std::string& overlay_dir);
  // The same for an --overlay-root: the writable grant bound at `root`
  // (outside the workspace) becomes an overlayfs over it.
  Result<void> OverlayRoot(const std::string& root, const std::string& overlay_dir);
  // The copied-snapshot fallback (overlay/snapshot.h) of the two: the
  // writable bind of the tree (the workspace, or an --overlay-root) binds the
  // copy `copy` (pinned) instead, with the same anchors dropped and nested
  // grants refused; each pinned mask inside the tree lands on its placeholder
  // in the copy (`pins`, by the mask's absolute path), and a mask with no
  // placeholder fails closed in the child (its pin does not match).
  Result<void> SnapshotWorkspace(const std::string& workspace, const PinnedPath& copy,
                                 const std::map<std::string, FileIdentity>& pins);
  Result<void> SnapshotRoot(const std::string& root, const PinnedPath& copy,
                            const std::map<std::string, FileIdentity>& pins);
  // Without a mount view (the no-userns rung) a mask hides nothing and
  // Landlock unions rights down the path: replaces each bind whose source
  // holds one of `masks` by binds of its entries, one by one, each pinned
  // to the (dev, inode) seen now, leaving out the masked paths and symlinks
  // (a symlink needs no rule: its target's is checked). No rule then covers
  // a masked path, and Landlock refuses it (EACCES). The directories on the
  // way lose their own rule: nothing can be made or removed directly in them.
  // Returns how many directories were split so.
  Result<size_t> LeaveOutOfRules(const std::vector<MaskedPath>& masks);
  // The masked-proc rung (confine/rung.h): the fresh /proc becomes an empty
  // tmpfs, sealed read-only, keeping /proc's Landlock rights.
  void MaskProc();
  // Keeps `fd` open as long as the plan: a kPrepared op's tree.
  void Own(UniqueFd fd) { owned_.push_back(std::move(fd)); }

 private:
  friend MountPlan BuildMountPlan(const Policy&, const LandlockRights&);
  const char* Intern(std::string text);
  MountOp MaskOp(const MaskedPath& mask);
  enum class OverlayTree { kWorkspace, kRoot };
  Result<void> Overlay(const std::string& tree, const std::string& overlay_dir, OverlayTree what,
                       const PinnedPath* copy = nullptr, const std::map<std::string, FileIdentity>* pins = nullptr);
  Result<void> SplitAround(const MountOp& op, const std::string& source, const std::string& target,
                           const std::vector<std::string>& masks, std::vector<MountOp>& out, size_t& split);
  std::deque<std::string> strings_;
  std::vector<UniqueFd> owned_;
};

MountPlan BuildMountPlan(const Policy& policy, const LandlockRights& rights);

// The working directory inside the sandbox: the caller's, when the view shows
// it; otherwise the workspace; otherwise "/".
std::string SandboxWorkingDirectory(const Policy& policy);

}  // namespace corral
