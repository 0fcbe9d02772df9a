// What the sweep put in corral's quarantine (repair/sweep.h, step 1:
// <state>/quarantine/<run>/<path>, noted in <state>/quarantine/<run>.moved),
// looked at and brought back on purpose: `corral quarantine list | show RUN
// PATH | restore RUN PATH`.
//
//   Result<StateDir> state = StateDir::Open(home, StateDir::Create::kNo);
//   for (const QuarantinedEntry& entry : *ListQuarantine(*state)) ...
//   Status back = RestoreQuarantined(*state, run, "/ws/.git/hooks/pre-commit", Overwrite::kRefuse);
//
// Every name in the quarantine is opened from the state directory's
// descriptor one component at a time with O_NOFOLLOW. A restore opens the
// destination's directory by its path with no symlink anywhere on the way
// (openat2 RESOLVE_NO_SYMLINKS), so a link a confined command planted in the
// workspace is refused, never followed, and moves the entry there with one
// renameat2 between the two descriptors: with Overwrite::kRefuse
// (RENAME_NOREPLACE) an existing file at the path is never replaced, even one
// another run creates at the same moment. RUN must be one name and PATH
// absolute with no "." or ".." component; a refusal is one ErrorKind::kUsage
// (bad input, nothing quarantined there, something at the path) or kIo
// error naming what failed. What the sweep put beside a tree
// (.corral-quarantine, another filesystem) is not listed: it is in the tree.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "state/state_dir.h"

namespace corral {

struct QuarantinedEntry {
  std::string run;
  std::string path;  // where it was, absolute
  std::string kind;  // "file", "directory", "symlink" or "other"
};

// Every entry still in the quarantine, by run (name order), then in the
// order the sweep moved them. No quarantine yet: an empty list.
Result<std::vector<QuarantinedEntry>> ListQuarantine(const StateDir& state);

// The quarantined entry's descriptor (O_PATH, not followed) and its lstat.
struct QuarantinedItem {
  UniqueFd parent;  // the directory holding it in the quarantine
  std::string name;
  struct stat st;
};
Result<QuarantinedItem> OpenQuarantined(const StateDir& state, const std::string& run, const std::string& path);

// RUN is one name, PATH absolute with no "." or ".." (a kUsage error otherwise).
Status CheckQuarantineArguments(const std::string& run, const std::string& path);

enum class Overwrite { kRefuse, kReplace };
Status RestoreQuarantined(const StateDir& state, const std::string& run, const std::string& path, Overwrite overwrite);

}  // namespace corral
