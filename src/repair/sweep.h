// The sweep: after every process of a sandbox has exited, whatever is at a
// protected path that was not there when the run started is taken out of the
// tree: something made at a path that was missing, anything in place of a
// protected symlink (which is put back), and a different file or directory
// at a path that existed (another run in the same workspace may have moved
// the original away meanwhile, and this run made a new one in its place).
// A path that holds the very object it held at the start (same device,
// inode and, where the filesystem records it, birth time) is never touched.
// When a directory between the root and an existing protected path was
// replaced (`.git` itself), that directory is taken out whole.
//
// Where it goes, in this order:
//   1. <state>/quarantine/<run>/<path> (corral's state directory, through
//      its descriptor: state/state_dir.h), and <path> noted in
//      <state>/quarantine/<run>.moved for `corral quarantine`;
//   2. when that fails (another filesystem: EXDEV), <root>/.corral-quarantine/
//      <run>/<name>, on the path's own filesystem (<root>/.corral-quarantine-
//      <run>/<name> if the run left something unusable at .corral-quarantine).
//      <name> is the path below the root with '%', '/' and a leading '.'
//      escaped ("%2Egit%2Fhooks"), so no tool takes it for a `.git`, an
//      `.envrc` or a `.vscode`;
//   3. renamed in its own directory to "corral-quarantined-<run>-<name>"
//      (the same directory: never another filesystem);
//   4. none of these worked: it is left in place, and the finding says so
//      (kLeftInPlace). The caller must not report success: corral exits
//      kExitProtectedPathLeft.
// A `.git` directory the run created where a missing one was recorded is
// moved to 1. and checked there; when nothing in it can make a host git run
// code, a copy built from what was checked goes back in its place
// (kAdmitted, repair/fresh_repository.h), and what the check named stays
// in the finding's `detail` otherwise. Without 1. it is never admitted.
// Nothing is ever deleted or copied: a concurrent rename can make a
// deletion walk into a directory it never meant to touch, a copy writes a
// sparse file out in full, and a copy that fails halfway loses the evidence.
//
// Another corral run in the same workspace may still be running and keep
// renaming what it made while this sweep acts. Every step works from the
// root's descriptor, one component at a time with O_NOFOLLOW, never through
// "..", and before each move the path is resolved again from the root: when
// the directory that holds the entry, or the entry itself, is no longer the
// one the sweep found, it stops and leaves the path in place ("the tree
// moved during the sweep"): a refusal, never a guess. Whatever it moves
// stays inside the run's writable roots or goes to corral's own quarantine.
//
// The command chose the modes of what it created, and could change those of
// the caller's directories above it: a directory without its owner's write
// bit cannot move to another parent or lose an entry, one without the search
// bit cannot be walked. The sweep gives the created directory its owner's
// rwx (it keeps them in the quarantine), adds the owner bits it needs to the
// caller's directories on the way and puts their modes back when done.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "policy/protected.h"

namespace corral {

// The directory a writable root gets when the quarantine is on another
// filesystem. Not a protected name: nothing runs what is in it.
inline constexpr char kTreeQuarantineName[] = ".corral-quarantine";
// <state>/quarantine/<run><this>: the paths step 1 moved there, in order.
inline constexpr char kQuarantineListSuffix[] = ".moved";

struct SweepFinding {
  enum class Outcome {
    kQuarantined,  // moved out of the way, to moved_to
    kLeftInPlace,  // could not be moved (or the tree moved meanwhile): it is still there
    kNone,         // nothing was there: the run removed a protected symlink
    kAdmitted,     // a repository the run created, checked and put back (repair/fresh_repository.h)
  };
  std::string path;
  // "created" (at a missing path), "replaced" or "removed" (a symlink),
  // "recreated" (a new object at a path that existed), "unchecked" (a
  // directory on the way kept moving: what is there is unknown), or
  // "unreachable" (`path` is a writable root the sweep could not open:
  // nothing in it was checked; `detail` names its protected paths)
  std::string what;
  Outcome outcome = Outcome::kLeftInPlace;
  std::string moved_to;  // for kQuarantined
  std::string error;     // every step that failed, and why
  // For a repository the run created: why it was not admitted, or (when
  // kAdmitted) what of it stayed in the quarantine, at moved_to.
  std::string detail;
};

std::string_view OutcomeName(SweepFinding::Outcome outcome);  // "quarantined", "left", "none", "admitted"

// True when something the run made at a protected path is still there.
bool AnyLeftInPlace(const std::vector<SweepFinding>& findings);

// corral's state directory, opened by the caller (state/state_dir.h); the
// sweep makes quarantine/<run>/ below it when it needs it. dir -1: there is
// none, and step 1 is skipped.
struct QuarantineHome {
  int dir = -1;
  std::string path;
};

// The writable roots the sweep works in, each opened by its path with no
// symlink on the way (openat2 RESOLVE_NO_SYMLINKS) and checked to be the
// directory discovery found there (`set.roots`; a root without a recorded
// identity is only opened). Opened before the command runs, they stay the
// run's own directories wherever another run moves them meanwhile: the sweep
// never looks at a path again from "/". A root that cannot be opened so
// (gone, moved, now through a symlink) is one "unreachable" finding, with
// every path under it unchecked (kLeftInPlace, exit 79).
struct SweepRoots {
  std::map<std::string, UniqueFd> fds;        // root path -> its directory (O_PATH)
  std::map<std::string, std::string> errors;  // root path -> why it was not opened
};
SweepRoots OpenSweepRoots(const ProtectedSet& set);

// Where a test stands in for another run renaming the tree while the sweep
// acts: called with the path the sweep located (kLocated), and again each
// time it has resolved that path from the root once more, just before a move
// (kChecked). Empty, the default, outside tests.
enum class SweepStep { kLocated, kChecked };
using SweepRacer = std::function<void(SweepStep step, const std::string& path)>;

// Run after every process of the sandbox has exited. `run` names this run's
// quarantine directories. Returns one finding per path it acted on.
std::vector<SweepFinding> SweepProtected(const ProtectedSet& set, const SweepRoots& roots, const QuarantineHome& home,
                                         const std::string& run, const SweepRacer& racer = {});

}  // namespace corral
