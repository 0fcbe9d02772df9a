// ReplaceFileAt: a file's whole new contents put in place at once. They are
// written to a temporary file beside it, in the same directory, which is
// then renamed over it, so a reader sees the old file or the new one,
// never a part of either.
//
// Contract:
//   - `dir` is a directory the caller opened (pinned: never climbed from
//     here); `name` is one component of it, and what is at `name` is
//     replaced whatever it is (a symlink is replaced, never followed).
//   - The temporary is ".corral-new-" and 16 random hex digits (a name of
//     fixed length, so any `name` the directory allows works), made with
//     O_CREAT | O_EXCL | O_NOFOLLOW: never an existing file, never through a
//     symlink, so another run writing the same name at the same time makes
//     its own, and the last rename wins whole.
//   - The file gets exactly `mode` (set with fchmod: the umask does not
//     narrow it); Durability::kSynced syncs it to disk before the rename.
//   - On any failure the temporary is removed, `name` is left as it was,
//     and the error (ErrorKind::kIo) is `context` with the system call.
//
//   CORRAL_TRY(ReplaceFileAt(dir.get(), "root", text, 0600, Durability::kUnsynced, "overlay: cannot write root"));
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

enum class Durability { kUnsynced, kSynced };

Result<void> ReplaceFileAt(int dir, const std::string& name, std::string_view contents, mode_t mode,
                           Durability durability, const std::string& context);

// Whether `name` is one of ReplaceFileAt's temporaries: what a process
// killed between its create and its rename leaves, for a clean-up to know.
bool IsReplaceFileTemporary(std::string_view name);

}  // namespace corral
