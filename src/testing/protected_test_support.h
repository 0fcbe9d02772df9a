// Test support (header only, never in the library): looking up what
// DiscoverProtected found.
#pragma once

#include <string>

#include "policy/protected.h"

namespace corral::testing {

inline const ProtectedPath* FindProtected(const ProtectedSet& set, const std::string& path) {
  for (const ProtectedPath& entry : set.paths) {
    if (entry.path == path) return &entry;
  }
  return nullptr;
}

// "missing", "dir", "file", "symlink", or "absent" when not in the set.
inline std::string StateOf(const ProtectedSet& set, const std::string& path) {
  const ProtectedPath* entry = FindProtected(set, path);
  if (entry == nullptr) return "absent";
  switch (entry->state) {
    case ProtectedPath::State::kMissing: return "missing";
    case ProtectedPath::State::kDirectory: return "dir";
    case ProtectedPath::State::kFile: return "file";
    case ProtectedPath::State::kSymlink: return "symlink";
  }
  return "?";
}

}  // namespace corral::testing
