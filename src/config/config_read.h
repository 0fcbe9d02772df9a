// Reading a config or profile file safely.
//
// A missing file is not an error (the caller falls back to defaults), but a
// file that exists and cannot be used is: unreadable, not a regular file,
// larger than kMaxConfigBytes, a dangling symlink, or writable by group or
// others (anyone who can write the file can open the sandbox; the message
// names the chmod that fixes it). With OwnerRule::kCallerOrRoot the file must
// also belong to the caller or root.
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

enum class OwnerRule {
  kAnyOwner,      // the project file: it can only narrow
  kCallerOrRoot,  // the user file, and profiles
};

inline constexpr size_t kMaxConfigBytes = 1 << 20;

// The file's text, or nullopt when there is no such file.
Result<std::optional<std::string>> ReadConfigFile(const std::string& path, OwnerRule owner_rule, uid_t caller);

}  // namespace corral
