// A git repository the run created where there was none (`git init`,
// `cargo init`): whether it may stay in the user's tree, and the copy of it
// that does.
//
// The sweep moves a `.git` directory the run created into corral's own
// quarantine first (repair/sweep.h), where no sandbox can reach it by name,
// and only then looks at it, through descriptors, never following a symlink
// (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, O_NOFOLLOW). It is admitted
// only when nothing in it can make a host git run code later:
//   - its top level holds only what git itself makes: HEAD, config,
//     description, index, packed-refs, COMMIT_EDITMSG, ORIG_HEAD,
//     FETCH_HEAD, hooks/, info/, branches/, objects/, refs/, logs/ (no
//     commondir, config.worktree, modules/, worktrees/, rebase or
//     sequencer state, ...), and HEAD, objects/ and refs/ are there;
//   - hooks/ holds only regular files named *.sample (git's samples, which
//     never run), info/ only `exclude`, branches/ nothing;
//   - objects/, refs/ and logs/ hold only directories and regular files
//     (no symlink, FIFO or device), at most kMaxFreshEntries in all, and no
//     objects/info/alternates or http-alternates;
//   - every key in config is on the safe list (policy/git_config_check.h).
// Anything else, or anything that cannot be read, is unsafe, and `unsafe`
// names it.
//
// What goes back is not the directory the run made (a process of another
// run could hold a descriptor to it, or to its hooks/, and add to them after
// the check) but a new one corral builds: a fresh directory, the checked
// config and info/exclude written anew from the very bytes that were
// checked, an empty branches/, and HEAD, objects/, refs/, logs/ and the
// other data entries moved into it, each checked to be the very file or
// directory the check saw (a directory that another run's descriptor can
// still add to holds data only: objects, refs and reflogs). The run's hooks/ (its samples) and its
// original config stay in the quarantine.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/file_identity.h"

namespace corral {

inline constexpr size_t kMaxFreshEntries = 20000;

struct FreshRepository {
  std::string unsafe;  // why it may not stay; "" when it may
  std::string config;  // the checked bytes, when has_config
  bool has_config = false;
  std::string exclude;  // info/exclude's checked bytes, when has_exclude
  bool has_exclude = false;
  struct Carried {
    std::string name;
    FileIdentity id;  // what the check saw there
  };
  std::vector<Carried> carried;  // top-level data entries, moved as they are
};

// `gitdir`: the repository's directory, opened O_RDONLY | O_DIRECTORY.
FreshRepository CheckFreshRepository(int gitdir);

// Builds `name` in `dir` from `gitdir` as checked (see above). Returns "" on
// success, otherwise what failed; the new directory may then be incomplete.
std::string RebuildFreshRepository(int gitdir, const FreshRepository& fresh, int dir, const std::string& name);

}  // namespace corral
