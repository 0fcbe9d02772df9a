// Reading a config or profile file safely.
//
// A missing file is not an error (the caller falls back to defaults), but a
// file that exists and cannot be used is: unreadable, not a regular file,
// larger than kMaxConfigBytes, or a dangling symlink. A file that can widen
// the sandbox (WriterRule::kCallerOrRoot: the user file, profiles) must also
// belong to the caller or root and not be writable by group or others (anyone
// who can write it could open the sandbox; the message names the chmod that
// fixes it). The project file (WriterRule::kAnyone) can only narrow, and
// anyone who can write the workspace can replace it whatever its mode, so its
// owner and mode are not checked: a 0664 corral.toml under umask 002 is fine.
//
// Errors are ErrorKind::kConfig with code "config_unreadable" or
// "config_insecure", and start with the path.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>

#include "base/result.h"

namespace corral {

// Who may have written a file that is read.
enum class WriterRule {
  kAnyone,        // the project file: it can only narrow
  kCallerOrRoot,  // the user file, and profiles: owned by the caller or root, not group- or other-writable
};

inline constexpr size_t kMaxConfigBytes = 1 << 20;

// The file's text, or nullopt when there is no such file.
Result<std::optional<std::string>> ReadConfigFile(const std::string& path, WriterRule writer_rule, uid_t caller);

}  // namespace corral
