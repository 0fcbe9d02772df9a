// `corral diff`: an overlay run's changes as a unified diff.
//
//   WriteDiff(upper.get(), root.get(), changes, STDOUT_FILENO);
//
// Text files go through diff(1) (diffutils) as `diff -u`, given the two
// files as descriptors this process opened (/dev/fd/3 and /dev/fd/4, each
// reached with overlay/changes.h's OpenBeneath), never as paths. A file
// with a NUL byte in its first 8 KiB on either side is binary: named, not
// dumped. A mode change is written as git does ("old mode" / "new mode"),
// a directory added or deleted as one line, a symlink by its old and new
// texts. Names are shown with their control bytes escaped
// (base/terminal.h), so a file name cannot write to the reader's terminal.
#pragma once

#include <string>

#include "base/result.h"
#include "overlay/changes.h"

namespace corral {

// `shown_root`: "" for the workspace (paths shown relative), else an
// --overlay-root's path, shown before each of its paths.
Result<void> WriteDiff(int upper, int real_root, const ChangeSet& changes, int out,
                       const std::string& shown_root = "");

}  // namespace corral
