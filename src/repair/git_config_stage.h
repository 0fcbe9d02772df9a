// A repository's config that a confined run may change: `git config
// user.name bob` and `git remote add` work inside, and only the changes of
// safe keys reach the real `.git/config` after the run.
//
// Why a copy: `.git/config` is a protected path (policy/protected.h), bound
// read-only, and git writes it by renaming `config.lock` onto it, which a
// mount point refuses (EBUSY). So before the run corral copies each
// repository's config (a regular file at <dir>/.git/config, with one link,
// that the strict reader of policy/git_config_check.h reads) into a
// directory of its own, <state>/git-config/<run>/<n>/config, and the view
// shows the real `.git/config` as a symlink to that copy (the directory is
// bound writable at /.corral-git/<n>: confine/plan.h StageFile). git resolves
// the symlink before it locks, so its lock file and its rename land beside
// the copy; the real file is never reachable from inside.
//
// After every process of the sandbox is gone (and after the sweep), corral
// lands the run's changes, outside the sandbox and with the user's authority,
// so with care:
//   - the copy is opened from the state directory's descriptor, beneath it,
//     no symlink followed (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS,
//     O_NOFOLLOW, O_NONBLOCK): a symlink, a FIFO, a file larger than
//     kMaxGitFileBytes or one the strict reader refuses is one error, and
//     nothing lands;
//   - it is compared with the bytes staged, key by key (a key's values in
//     order); a changed key that is not on the safe list
//     (UnsafeGitConfigEntry: core.hooksPath, core.fsmonitor, `!` aliases,
//     include.path, filters, credential helpers, ...) never lands and is
//     named in `refused`; so is a change to what makes the repository what
//     it is (core.repositoryformatversion, core.bare,
//     extensions.objectformat), safe in a fresh repository only;
//   - the real config is reached from its gitdir, opened by path with no
//     symlink on the way and checked to be the directory staged, then
//     `config` beneath it with no symlink, the very file staged (same device
//     and inode), one link. corral takes git's own lock (`config.lock`,
//     O_CREAT | O_EXCL) so a host git or another run's landing waits;
//   - a safe key lands only where its value in the real config is still the
//     one staged (another run, or the user, may have changed it meanwhile:
//     then it is named in `conflicts` and does not land); when nothing else
//     changed, the run's copy lands as it is;
//   - the new text is read back with the strict reader and must hold exactly
//     the intended values; it is written to the lock file and fsynced, then
//     written over the real config in place (the inode stays: the sweeps and
//     the read-only binds of runs still going keep seeing the original, not
//     a new file) and fsynced, then the lock is removed. A crash between the
//     two leaves `config.lock` holding the whole new text, which git refuses
//     to overwrite until the user looks.
// When something was refused, conflicted or could not be read, the run's
// copy goes to the quarantine as <state>/quarantine/<run>/<path of the
// config> (`corral quarantine show|restore`), when it is a regular file (a
// symlink restored over the real config would point the host's git at the
// command's file). What else the command left in the staged directory is
// removed, on descriptors, never following a symlink, and the directory
// with it. `config.worktree` and the configs of linked worktrees and
// submodules are not staged: they stay read-only.
#pragma once

#include <string>
#include <vector>

#include "base/file_identity.h"
#include "policy/protected.h"
#include "state/state_dir.h"

namespace corral {

// Where the sandbox sees the staged directories: /.corral-git/<n>.
inline constexpr char kGitConfigViewDir[] = "/.corral-git";
// At most this many repositories' configs are staged in one run; the rest
// stay read-only.
inline constexpr size_t kMaxStagedGitConfigs = 16;

struct StagedGitConfig {
  std::string path;      // the real config: <gitdir>/config, absolute
  std::string gitdir;
  FileIdentity gitdir_id;
  FileIdentity config_id;
  std::string base;      // its bytes when staged
  PinnedPath stage;      // the host directory holding the run's copy (<state>/git-config/<run>/<n>)
  std::string stage_relative;  // the same, below the state directory
  std::string view_dir;  // where the sandbox sees `stage`
};

// Stages every repository config among `set`'s protected files. A config
// that cannot be staged (not a regular file with one link, unreadable, one
// the strict reader refuses) stays read-only, and `notes` says why.
std::vector<StagedGitConfig> StageGitConfigs(const ProtectedSet& set, const StateDir& state, const std::string& run,
                                             std::vector<std::string>* notes);

struct GitConfigLanding {
  std::string path;                    // the real config
  std::vector<std::string> landed;     // keys written to it
  std::vector<std::string> refused;    // unsafe keys the run changed, with why
  std::vector<std::string> conflicts;  // safe keys changed meanwhile outside this run
  std::string error;                   // why nothing landed, when nothing could
  std::string quarantined;             // where the run's copy went, when it went
};

// Lands what each run's copy changed (see above). A copy the run left as it
// was staged gives no landing.
std::vector<GitConfigLanding> LandGitConfigs(const std::vector<StagedGitConfig>& staged, const StateDir& state,
                                             const std::string& run);

// The new text of `current` with `changes` applied (exposed for the unit
// test): each change is a key name and its new values in order, `bare` for a
// `key` with no `=`. A key whose count of values is unchanged is rewritten in
// place; otherwise its lines go and its values are appended in a new section.
struct GitConfigValue {
  std::string value;
  bool bare = false;
  bool operator==(const GitConfigValue&) const = default;
};
struct GitConfigChange {
  std::string section, subsection, key;
  std::vector<GitConfigValue> values;
};
Result<std::string> ApplyGitConfigChanges(const std::string& current, const std::vector<GitConfigChange>& changes);

}  // namespace corral
