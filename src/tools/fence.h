// Fence: the in-process file tools' boundary, the same one the spawned
// sandbox draws.
//
// A Fence is made from a Policy. It opens every directory grant once, as an
// O_PATH descriptor checked against the grant's pinned (dev, inode), and
// resolves each path the agent names from the deepest grant that holds it:
//
//   openat2(root, rest, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)
//
// so a `..`, an absolute symlink or a directory swapped during the call can
// never lead out of that root (the kernel refuses with EXDEV). What it
// reached is then named by the kernel (the descriptor's /proc/self/fd link)
// and asked about with ViewOf (policy/filesystem_view.h), the function the
// mount plan uses: a hidden path (mask, forbid_read, no grant) is denied even
// for reading, a read-only or protected path for writing.
//
// Writes never follow the last component: a new file is written to an
// O_EXCL temporary beside it and renamed over the name, both on the pinned
// parent descriptor, so a symlink planted at the name is replaced, never
// written through. The fence is stricter than the mount view in one way:
// it never writes inside a `.git` or `.hg` directory at any depth (their
// hooks and config run outside the sandbox later), whether or not discovery
// found that repository.
//
// Every refusal is ErrorKind::kDenied with the reason; anything else (no such
// file, not a directory) is the operation's own failure.
//
//   CORRAL_ASSIGN_OR_RETURN(Fence fence, Fence::Open(policy));
//   CORRAL_ASSIGN_OR_RETURN(FencedFile file, fence.OpenRead("src/main.cc"));
//
// Security: only directory grants are roots; a file grant is denied to the
// tools (the spawned sandbox still shows it). A path is resolved once, and
// the operation uses the descriptor it resolved to, never the string again.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "policy/filesystem_view.h"
#include "policy/policy.h"

namespace corral::tools {

// An open file or directory and the host path the kernel names it by.
struct FencedFile {
  UniqueFd fd;
  std::string path;
  PathView view = PathView::kHidden;
};

// A parent directory held open, and the name a write replaces in it.
struct FencedName {
  UniqueFd parent;
  std::string name;
  std::string path;  // parent's host path + "/" + name
};

class Fence {
 public:
  static Result<Fence> Open(const Policy& policy);

  const Policy& policy() const { return *policy_; }

  // The absolute, lexically tidied form of `path` (relative: to the working
  // directory the sandbox starts in). Refuses an empty path and a NUL byte.
  Result<std::string> Absolute(std::string_view path) const;

  // A regular file, for reading (opened O_RDONLY | O_NONBLOCK: a FIFO never
  // blocks the server). Denied when hidden.
  Result<FencedFile> OpenRead(std::string_view path) const;
  // A directory, for listing. Denied when hidden.
  Result<FencedFile> OpenDirectory(std::string_view path) const;
  // The parent of `path` and its last component, for a write that creates or
  // replaces it. Denied unless the name is writable (not read-only, hidden,
  // protected or inside a .git or .hg).
  Result<FencedName> OpenForWrite(std::string_view path) const;

  // Whether an entry `name` of the directory at host path `dir` is shown
  // (a walk skips hidden entries: they do not exist in the sandbox).
  bool Shows(const std::string& dir, const std::string& name) const;

 private:
  struct Root {
    std::string path;
    UniqueFd fd;
  };
  explicit Fence(const Policy& policy) : policy_(&policy) {}
  // The deepest root holding `absolute`, and the rest of the path below it.
  Result<std::pair<const Root*, std::string>> RootOf(const std::string& absolute) const;
  Result<FencedFile> Resolve(std::string_view path, int flags) const;

  const Policy* policy_;
  std::vector<Root> roots_;
};

// True when a component of `path` is `.git` or `.hg`.
bool InsideRepositoryMetadata(std::string_view path);

// Writes `contents` to the name, through an O_EXCL temporary renamed over it;
// an existing file keeps its permission bits.
Result<void> ReplaceContents(const FencedName& target, std::string_view contents);

}  // namespace corral::tools
