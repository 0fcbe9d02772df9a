// Canonical, pinned paths.
//
// Every path a policy grants is checked once, when the policy is built: it must
// be absolute, free of "." and ".." components and of symlinks, and it must
// exist. corral does not silently resolve a symlink in a grant, because the
// grant would then cover something other than what the user typed; the error
// names the resolved path to pass instead.
//
// The path is pinned by (device, inode). The sandbox re-opens it without
// following symlinks just before mounting it and refuses the run if the
// identity changed: a path swapped between the check and the spawn is refused.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/file_identity.h"
#include "base/result.h"

namespace corral {

enum class FileType { kDirectory, kRegular, kOther };

struct PinnedPath {
  std::string path;  // absolute and canonical
  FileIdentity id;
  FileType type = FileType::kOther;
  bool is_dir() const { return type == FileType::kDirectory; }
};

// The names in an absolute path, empty ones (from "//" or a trailing "/")
// skipped: "/a//b/" -> {"a", "b"}.
std::vector<std::string> PathSegments(const std::string& path);

// Collapses repeated slashes and drops a trailing slash ("/a//b/" -> "/a/b").
// Keeps "." and ".." so callers can reject them.
std::string CollapseSlashes(std::string_view path);

// Where an existing path leads (realpath: every symlink resolved), or ""
// when it does not resolve.
std::string ResolvedOrEmpty(const std::string& path);

// True when `path` equals `root` or lies beneath it, comparing whole components.
bool IsWithin(std::string_view path, std::string_view root);

// Validates and pins a user-supplied path. `what` names its origin in errors,
// for example "--allow-read" or "--workspace".
Result<PinnedPath> PinPath(std::string_view given, std::string_view what);

// Pins a path that corral itself derived (already canonical), such as the
// working directory. Symlinks are still refused.
Result<PinnedPath> PinDerivedPath(std::string_view path, std::string_view what);

}  // namespace corral
