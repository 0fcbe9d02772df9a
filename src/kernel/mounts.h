// The mount view: a fresh root that holds only what the policy grants.
//
// The parent compiles a policy into a list of MountOps (confine/mount_plan.h);
// the child applies them between clone and exec with ApplyMountsChild:
//
//   1. make every mount private, so nothing propagates back to the host;
//   2. open each bind source without following symlinks and compare its
//      (dev, inode) with the pin taken when the policy was built (an
//      overlay's lower layer likewise, then its upper and work directories,
//      and make the overlayfs, detached);
//   3. mount a tmpfs over /tmp (private to this mount namespace) and build the
//      new root in it, op by op, parents before children;
//   4. make the tmpfs mounts that only hold mount points read-only;
//   5. pivot_root into it and detach the old root, so nothing outside the
//      grants is even visible.
//
// Each mount that grants access also gets a Landlock rule with the same rights,
// added from the same file descriptor, so the two layers agree on every path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel/child_report.h"
#include "base/file_identity.h"

namespace corral {

enum class MountKind : uint8_t {
  kBind,        // bind `source` (a host path) at `target`, recursively
  kTmpfs,       // a fresh tmpfs at `target` with `options`
  kSymlink,     // a symlink at `target` whose text is `source`
  kMask,        // an empty, unreadable file or directory over `target`
  kProc,        // a fresh procfs for the sandbox's PID namespace
  kDevpts,      // a private devpts instance
  kFile,        // a new regular file at `target` (inside a tmpfs of the view) holding `source`'s text
  kFileOver,    // a new read-only file holding `source`'s text, bound over the regular file at `target`
                // (skipped when `target` is absent or not a regular file)
  kSymlinkOver, // a symlink whose text is `source`, mounted over the regular file at `target`, which must
                // still be `pin` (a run's staged copy of a file that tools replace by rename: the
                // rename lands beside the copy, repair/git_config_stage.h)
  kOverlay,     // an overlayfs at `target`: `source` (a host directory, pinned) is its one read-only lower
                // layer; `options` names the run's overlay directory (a host path), whose `upper` and `work`
                // take every write. Mounted with userxattr (whiteouts and opaque directories as the
                // unprivileged overlay writes them), never following a symlink to any layer.
};

// What a MountOp does beyond its kind, as a set of bits (combine with |).
enum class MountFlag : uint16_t {
  kNone = 0,
  kDir = 1 << 0,       // the target is a directory, else a file
  kReadOnly = 1 << 1,  // bind read-only (recursively)
  kNoexec = 1 << 2,    // bind without exec (recursively): no execve, no PROT_EXEC mapping
  kDevices = 1 << 3,   // keep device nodes usable (no MS_NODEV)
  kOptional = 1 << 4,  // skip silently when the source does not exist
  kSeal = 1 << 5,      // tmpfs: made read-only once everything under it is mounted
  kPinned = 1 << 6,    // the source's (dev, inode) must equal `pin` when the child opens it
  kMaskRootOnly = 1 << 7,  // kProc: mask each top-level entry others may not use (base/hidden_from_others.h)
  kPrepared = 1 << 8,  // kBind: `fd` is a detached tree the parent made, with its attributes set (kernel/idmapped_tree.h)
  kInOverlay = 1 << 9,  // a pinned kMask below a kOverlay: the file is seen through overlayfs, which shows
                        // the lower file's inode under its own device, so the inode and type are compared
                        // (an overlay that renumbers inodes makes the mask fail closed)
};

constexpr MountFlag operator|(MountFlag a, MountFlag b) {
  return static_cast<MountFlag>(static_cast<uint16_t>(a) | static_cast<uint16_t>(b));
}
constexpr MountFlag operator&(MountFlag a, MountFlag b) {
  return static_cast<MountFlag>(static_cast<uint16_t>(a) & static_cast<uint16_t>(b));
}
constexpr MountFlag operator~(MountFlag a) { return static_cast<MountFlag>(~static_cast<uint16_t>(a)); }
constexpr MountFlag& operator|=(MountFlag& a, MountFlag b) { return a = a | b; }
constexpr MountFlag& operator&=(MountFlag& a, MountFlag b) { return a = a & b; }

struct MountOp {
  MountKind kind = MountKind::kBind;
  MountFlag flags = MountFlag::kDir;
  constexpr bool Has(MountFlag flag) const { return (flags & flag) == flag; }
  FileIdentity pin;
  uint64_t landlock = 0;   // rights for this mount's root; 0 adds no rule
  const char* source = nullptr;
  const char* target = nullptr;  // absolute path inside the sandbox
  const char* options = nullptr;
  int fd = -1;             // child: the opened source (kPrepared: the parent's tree, which the plan owns)
};

// Child side. Applies `ops` (sorted by target), adding Landlock rules to
// `ruleset_fd` when it is >= 0, and pivots into the new root with
// `root_landlock` on "/". On failure fills `report` and returns its errno.
int ApplyMountsChild(MountOp* ops, size_t count, int ruleset_fd, uint64_t root_landlock, ChildReport* report);

// Child side, without a mount namespace (best effort): opens each bind source
// in place and adds its Landlock rule. No view is built.
int AddHostRulesChild(MountOp* ops, size_t count, int ruleset_fd, ChildReport* report);

}  // namespace corral
