// Lexical checks for paths written in profiles and config files.
//
// These run before anything touches the filesystem, so a value that could
// never be pinned is refused where it was typed, with its file and line.
// BuildPolicy still pins every path (existence, symlinks) later; the checks
// here only make sure that comparisons such as "is this grant inside the
// workspace" are made on canonical text: a path with "." or ".." components
// could otherwise look like it lies inside a tree that it escapes.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

// Expands a leading "~" or "~/" to `home`. "~user" is refused: corral does not
// look up other users' homes. Other text is returned unchanged.
Result<std::string> ExpandHome(std::string_view text, std::string_view home);

// The same for corral's own "~" and "~/rest" paths (the credential stores,
// the home's allowlist), which can never be "~user": the path in `home`,
// slashes collapsed, and never an error (an unknown home gives "/rest").
std::string HomePath(std::string_view tilde_path, std::string_view home);

// An absolute path in canonical text form: repeated and trailing slashes are
// collapsed; a relative path, an empty one, "." or ".." components and
// control characters (including NUL) are refused. The error message is the
// bare reason ("must be an absolute path"); callers prefix where it came from.
Result<std::string> CanonicalAbsolutePath(std::string_view text);

}  // namespace corral
