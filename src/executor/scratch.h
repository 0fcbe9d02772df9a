// The scratch directory of one ExecutorSet: each executor's HOME and TMPDIR.
//
// ScratchDir::Create opens the caller's scratch root once, as a descriptor
// (O_NOFOLLOW: a symlink is refused, as is a root another user owns), and
// makes the set's own directory in it, "corral-executors-<random>", mode
// 0700, with mkdirat on that descriptor; the directory is opened without
// following symlinks and checked to be the one just made (ours, 0700). With
// no scratch root the set's directory is made in /tmp the same way.
//
// MakeExecutorDirs makes "<n>/home" and "<n>/tmp" (0700) below it, again on
// descriptors, for the n-th executor; the returned paths are canonical (read
// back from the descriptor, never from the caller's text), so the policy's
// write grants name exactly these directories.
//
// Remove (and RemoveExecutor) walk the tree on descriptors
// (overlay/overlay_run.h RemoveTreeAt): never a path re-walked, never a
// symlink followed, so a symlink the confined command planted in its HOME
// (to the caller's files) is removed, not what it points at; a tree it made
// as deep as it liked is removed with a bounded number of descriptors.
//
// Security: the command writes inside HOME and TMPDIR and so controls the
// names and types below them; it cannot reach the set's directory itself
// (no grant shows it), and nothing here ever resolves a path below it.
#pragma once

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"

namespace corral::executor {

struct ExecutorDirs {
  std::string home;  // canonical
  std::string tmp;   // canonical
};

// The path a descriptor names now, as the kernel reads it back.
Result<std::string> PathOfDescriptor(int fd);

class ScratchDir {
 public:
  // `root` empty: /tmp.
  static Result<ScratchDir> Create(const std::string& root);

  ScratchDir(ScratchDir&&) = default;
  ScratchDir& operator=(ScratchDir&&) = default;

  const std::string& path() const { return path_; }
  Result<ExecutorDirs> MakeExecutorDirs(int index) const;
  // Writes `text` to a new file `name` (0600) in the set's directory; its path.
  Result<std::string> WritePrivateFile(const std::string& name, const std::string& text) const;
  // Removes executor `index`'s directory; idempotent.
  Result<void> RemoveExecutor(int index) const;
  // Removes the set's directory and everything below it; idempotent.
  Result<void> Remove();

 private:
  ScratchDir() = default;
  UniqueFd parent_;
  UniqueFd dir_;
  std::string name_;
  std::string path_;
  bool removed_ = false;
};

}  // namespace corral::executor
