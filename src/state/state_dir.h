// corral's state directory: $XDG_STATE_HOME/corral, else
// <home>/.local/state/corral. The quarantine, the sweep journal and the
// session logs live there, and corral trusts what it reads back (the journal
// names the paths the next run sweeps), so a sandboxed command must never
// reach it, not even through a symlink planted on the way.
//
//   Result<StateDir> state = StateDir::Open(home, StateDir::Create::kYes);
//   Result<UniqueFd> pending = state->Subdir("pending", StateDir::Create::kYes);
//
// It is opened one component at a time from "/", each with O_NOFOLLOW, and
// every later use goes through the descriptor (openat, renameat), never
// through the path again:
// - a directory above `corral` must be owned by root (or the overflow uid,
//   which is how root's directories show in a user namespace) or the
//   caller, and when group or others may write it, be sticky (/tmp);
// - `corral` and everything corral makes below it are the caller's and
//   writable by no one else; what corral creates is 0700.
// Anything else (a symlink anywhere on the way, a foreign owner, a writable
// mode) is refused with code "state_dir_unsafe": the caller starts no
// process. A state directory that cannot be made (a read-only or missing
// home) is "state_dir_unavailable": a run goes on without the journal, and
// the sweep uses the quarantine beside the tree.
#pragma once

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace corral {

inline constexpr char kStateDirUnsafe[] = "state_dir_unsafe";
inline constexpr char kStateDirUnavailable[] = "state_dir_unavailable";

class StateDir {
 public:
  enum class Create { kNo, kYes };

  // The base ($XDG_STATE_HOME when absolute, else <home>/.local/state),
  // then `corral` below it.
  static std::string BaseFor(const std::string& home);
  static Result<StateDir> Open(const std::string& home, Create create);
  // `base`/corral, with `base` given (tests, and RunOptions::state_home).
  static Result<StateDir> OpenBelow(const std::string& base, Create create);

  // A directory below this one (one or more components), checked like
  // `corral` itself and created 0700 when missing and `create` says so.
  Result<UniqueFd> Subdir(const std::string& relative, Create create) const;

  // Another descriptor of this directory, for a caller that opened it once
  // and hands it on instead of walking from "/" again: `corral` itself is
  // checked again as Open checks it (the directories above it were checked
  // by that Open; the descriptor no longer depends on them). A directory
  // removed since it was opened is "state_dir_unavailable": open it again.
  Result<StateDir> Duplicate() const;

  int fd() const { return fd_.get(); }
  const std::string& path() const { return path_; }
  bool valid() const { return fd_.valid(); }

 private:
  UniqueFd fd_;
  std::string path_;
};

// An absolute directory reached like the state directory, one component at
// a time from "/" with O_NOFOLLOW, each above the last checked like the
// directories above `corral` (missing ones made 0700 when `create` says so).
// The last is the caller's to check (the session logs have their own rule).
// An O_PATH descriptor; errors carry the codes above.
Result<UniqueFd> OpenDirectoryWithoutSymlinks(const std::string& path, StateDir::Create create);

}  // namespace corral
