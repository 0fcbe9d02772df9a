// The names in one directory, read through a descriptor of it.
//
// Contract: DirectoryNames(dir) opens "." beneath `dir` (any descriptor of
// the directory, O_PATH ones too) for reading, so the walk never goes by
// path, and returns every entry's name but "." and "..", sorted. A
// directory that cannot be opened or read gives what was read (possibly
// nothing): callers that must tell "empty" from "unreadable" check the
// directory themselves.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace corral {

std::vector<std::string> DirectoryNames(int dir);

// The same, but nothing (std::nullopt) once the directory holds more than
// `most` names: reading stops there, so a huge directory costs no more
// than `most` names' worth.
std::optional<std::vector<std::string>> DirectoryNamesUpTo(int dir, size_t most);

}  // namespace corral
