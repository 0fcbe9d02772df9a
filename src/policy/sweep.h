// The sweep: after every process of a sandbox has exited, whatever the run
// left at a protected path that was missing (or in place of a protected
// symlink) is taken out of the tree, and the symlink is put back.
//
// Where it goes, in this order:
//   1. `quarantine_dir`/<path> (corral's state directory);
//   2. when that fails (another filesystem: EXDEV), <root>/.corral-quarantine/
//      <run>/<name>, on the path's own filesystem (<root>/.corral-quarantine-
//      <run>/<name> if the run left something unusable at .corral-quarantine).
//      <name> is the path below the root with '%', '/' and a leading '.'
//      escaped ("%2Egit%2Fhooks"), so no tool takes it for a `.git`, an
//      `.envrc` or a `.vscode`;
//   3. nowhere: it is deleted;
//   4. none of these worked: it is left in place, and the finding says so
//      (kLeftInPlace). The caller must not report success: corral exits
//      kExitProtectedPathLeft.
// Nothing is ever copied: a copy writes a sparse file out in full, and a
// copy that fails halfway loses the evidence.
//
// The command chose the modes of what it created, and could change those of
// the caller's directories above it: a directory without its owner's write
// bit cannot move to another parent or lose an entry, one without the search
// bit cannot be walked. The sweep gives the created directory its owner's
// rwx (it keeps them in the quarantine), adds the owner bits it needs to the
// caller's directories on the way and puts their modes back when done. It
// works through descriptors opened with O_NOFOLLOW from the root, so a
// symlink swapped in on the way never redirects it.
#pragma once

#include <string>
#include <vector>

#include "policy/protected.h"

namespace corral {

// The directory a writable root gets when the quarantine is on another
// filesystem. Not a protected name: nothing runs what is in it.
inline constexpr char kTreeQuarantineName[] = ".corral-quarantine";

struct SweepFinding {
  enum class Outcome {
    kQuarantined,  // moved out of the way, to moved_to
    kDeleted,      // could not be moved anywhere, so it was deleted
    kLeftInPlace,  // could be neither moved nor deleted: it is still there
    kNone,         // nothing was there: the run removed a protected symlink
  };
  std::string path;
  std::string what;  // "created", "replaced" or "removed"
  Outcome outcome = Outcome::kLeftInPlace;
  std::string moved_to;  // for kQuarantined
  std::string error;     // every step that failed, and why
};

std::string_view OutcomeName(SweepFinding::Outcome outcome);  // "quarantined", "deleted", "left", "none"

// True when something the run made at a protected path is still there.
bool AnyLeftInPlace(const std::vector<SweepFinding>& findings);

// Run after every process of the sandbox has exited. `run` names this run's
// directory in <root>/.corral-quarantine. Returns one finding per path it
// acted on.
std::vector<SweepFinding> SweepProtected(const ProtectedSet& set, const std::string& quarantine_dir,
                                         const std::string& run);

}  // namespace corral
