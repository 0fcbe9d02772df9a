// Reading the git files that protected-path discovery parses: a `.git`
// pointer, `commondir`, a config and what it includes.
//
// These files sit in the user's tree, where an earlier run may have put a
// FIFO (an open would block every later run), a link to /dev/zero or
// /dev/tty (a read would never end, or eat the user's keystrokes), or a
// huge file. So ReadGitFile opens only a canonical path, with
// RESOLVE_NO_SYMLINKS, O_NOFOLLOW and O_NONBLOCK, accepts a regular file
// only, and reads at most kMaxGitFileBytes. It never fails the run: what it
// cannot use is reported in `problem`, and discovery goes on without it.
//
//   GitFileText file = ReadGitFile("/ws/.git/config");
//   GitConfigRefs refs = ParseGitConfigRefs(file.text);
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace corral {

inline constexpr size_t kMaxGitFileBytes = 1 << 20;

struct GitFileText {
  bool found = false;   // the file exists and was read
  std::string text;
  std::string problem;  // set when the file exists but was not used
};

// `path` must be canonical (no symlink in it).
GitFileText ReadGitFile(const std::string& path);

// The first line, without trailing spaces or CR.
std::string FirstLine(const std::string& text);

// What corral needs from a git config file: `core.hooksPath` and the files
// `include.path` / `includeIf.<cond>.path` pull in (a small INI reader for
// git's syntax; values may be quoted).
struct GitConfigRefs {
  std::string hooks_path;
  std::vector<std::string> includes;
};

GitConfigRefs ParseGitConfigRefs(const std::string& text);

}  // namespace corral
