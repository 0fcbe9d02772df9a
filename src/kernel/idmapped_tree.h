// A detached copy of a directory tree on which no file belongs to the host's
// root: the view of /etc that a root caller's sandbox gets.
//
// Inside the sandbox, root keeps no capability, but it still owns root's
// files, so every 0600 key or config in /etc would be readable. Mounted
// through an idmapped mount whose user namespace maps id 0 alone (to 65534),
// every file of the tree belongs to an id that is not the caller's: the
// host's root (and every other owner) becomes an id the sandbox does not
// map, and the kernel applies the "others" permission bits to each read,
// also for a file made after the mount, and with the ACLs mapped the same
// way. Such a mount shows its files as owned by nobody, as an unprivileged
// caller's sandbox already does.
//
// Parent side, and root only: making an idmapped mount needs CAP_SYS_ADMIN
// over the filesystem's own user namespace (the host's), and a filesystem
// that allows it (ext4, xfs, btrfs, tmpfs from 6.3, overlayfs from 5.19, ...).
// The tree comes back with the mount attributes asked for (recursively: a
// filesystem mounted below it that cannot be idmapped fails the whole call)
// and close-on-exec. The sandbox child attaches it with move_mount; the
// attributes cannot be changed there (the mount belongs to the host's user
// namespace), so they are set here.
//
// Safe to call from any number of threads at once; the short-lived process
// that holds the mapping's user namespace is reaped before each call returns.
//
//   Result<UniqueFd> tree = OpenTreeSeenAsOthers("/etc", pin, kabi::kMountAttrRdonly | ...);
//   // an error: the caller falls back to masking file by file
#pragma once

#include <cstdint>

#include "base/file_identity.h"
#include "base/result.h"
#include "base/unique_fd.h"

namespace corral {

// `path` is opened without following symlinks and must be the directory
// `pin`; `attrs` are the mount attributes besides the idmap
// (kabi::kMountAttrRdonly, ...).
Result<UniqueFd> OpenTreeSeenAsOthers(const char* path, const FileIdentity& pin, uint64_t attrs);

}  // namespace corral
