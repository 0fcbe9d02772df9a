// Roots the policy derives from the host, and the rules that guard them.
//
// - HostContext: the caller's working directory, home and ids, captured once.
// - VetWorkspace: a workspace gets read, write and exec, so it may not be "/",
//   $HOME, a directory that holds home directories, a system tree, or a shared
//   scratch directory. The refusal names the flags to use instead.
// - System trees: the read-only (and, except /etc, executable) trees every
//   command needs. On merged-/usr hosts /bin and friends are symlinks, and the
//   sandbox recreates them as symlinks.
// - /etc secrets: files masked inside the granted /etc (shadow, sudoers, host
//   keys, ...; for root, everything others may not read). Masked paths read
//   as "permission denied".
#pragma once

#include <sys/types.h>
#include <time.h>

#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/access.h"
#include "policy/listing_cache.h"
#include "policy/path.h"

namespace corral {

struct HostContext {
  std::string cwd;   // physical working directory
  std::string home;  // the caller's home directory ($HOME, else the passwd entry)
  uid_t uid = 0;
  gid_t gid = 0;
  std::string passwd_home;  // the passwd entry's home, which $HOME may hide
  // The caller's $PATH, and the variables that move a toolchain's
  // directories (CARGO_HOME, PYENV_ROOT, ...: policy/toolchains.h) as set.
  std::string path_env;
  std::map<std::string, std::string> toolchain_env;
  bool operator==(const HostContext&) const = default;

  // corral's own state: the config, the session logs and quarantine, the
  // compiled policies. A sandbox must never be able to change them.
  std::vector<std::string> OwnStateDirs() const;
};

// Reads the working directory, $HOME (or the passwd entry) and the ids.
Result<HostContext> CaptureHostContext();

enum class WorkspaceSource { kDerived, kExplicit };

// Refuses a workspace that would grant far more than one project.
Result<void> VetWorkspace(const std::string& path, const HostContext& host, WorkspaceSource source);

struct SystemTree {
  PinnedPath path;
  Access access = Access::kRead;
};

struct SystemSymlink {
  std::string path;    // e.g. /bin
  std::string target;  // e.g. usr/bin, exactly as the host has it
};

struct SystemRoots {
  std::vector<SystemTree> trees;
  std::vector<SystemSymlink> symlinks;
};

// The default system trees that exist on this host.
SystemRoots DiscoverSystemRoots();

struct MaskedPath {
  std::string path;
  bool is_dir = false;
  // Set when the mask must land on exactly this (dev, inode): the child
  // opens the target without following symlinks and refuses to run when
  // another file is there.
  bool pinned = false;
  FileIdentity id = {};
};

// What inside /etc must be masked for a sandbox running as `caller`.
//
// For a regular user: the well-known secrets (shadow, sudoers, private keys,
// VPN and Wi-Fi credentials, ...) that exist and the caller can read, e.g.
// through a group such as ssl-cert. For root (uid 0): every file and
// directory under /etc that others may not read, found by a bounded walk
// (sandboxed root has no capabilities, yet owns root's 0600 files). An /etc
// too large or too deep to vet is an error, never a partial list.
// For root, the walk lists each directory through the process's listing
// cache when one is installed (policy/listing_cache.h).
Result<std::vector<MaskedPath>> DiscoverEtcSecrets(uid_t caller);

// The root walk itself, of any `tree` (DiscoverEtcSecrets: /etc, the
// installed cache, now): `began` is when the walk began, for the cache's
// settle rule. Exposed for tests.
Result<std::vector<MaskedPath>> DiscoverRootOnly(const std::string& tree, ListingCache* cache,
                                                 const struct timespec& began);

// For root (`caller` 0), the top-level /proc files and directories others
// may not read (slabinfo, timer_list, kpageflags, ...); nothing otherwise.
// Read from the host's /proc, whose listing holds every process of the
// host: for a backend that needs the names (bubblewrap). The native sandbox
// masks them in its own procfs (Policy::masks_root_only_proc).
Result<std::vector<MaskedPath>> DiscoverProcSecrets(uid_t caller);

}  // namespace corral
