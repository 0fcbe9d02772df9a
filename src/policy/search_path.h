// The command's PATH, outside the sandbox and inside: where a name resolves
// differently, for `corral run`'s one warning line and `corral explain`.
//
// Inside, a host file is there only where a grant covers it; it runs only
// where that grant has exec (the workspace, the system trees, --allow-exec,
// --allow-toolchain). A PATH entry anywhere else (an ungranted part of the
// home, /opt) is empty inside, so a name found there outside resolves
// further down PATH inside, to another program (pyenv's python3 falls back
// to /usr/bin/python3), or not at all. ComparePath says so before the run:
//
//   PathComparison path = ComparePath(policy, "python3");
//   if (path.warning) PrintError("warning: " + *path.warning);
//   // python3 is ~/.pyenv/shims/python3 outside but /usr/bin/python3 inside;
//   // --allow-toolchain pyenv would fix it
//
// The warning is one line, and only for what changes what runs: the program
// itself (another binary, none, or a toolchain only half granted, such as
// ~/.cargo without ~/.rustup), else the names a hidden entry shadows. An
// entry that is merely hidden (its programs would fail loudly as "not
// found") is listed by `explain` alone, so an everyday run stays quiet.
// Each directory is compared once however often PATH names it, and a PATH
// past 256 directories, or past 4096 names in hidden ones, or past 32,768
// names listed in all (no directory is read past them), is judged no
// further (a careless PATH must not slow every start). A directory's names
// come from the listing cache while it is unchanged (a listing of /usr/bin
// was most of a run's start-up time on a PATH with pyenv's shims); each name
// compared is still looked up live.
// Visibility is judged from the policy's grants and the host's files; a
// danger-full-access run (no sandbox) compares nothing.
#pragma once

#include <time.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace corral {

// The entries of a PATH value, in order; an empty entry stays "".
std::vector<std::string> SplitSearchPath(std::string_view value);

struct PathComparison {
  std::optional<std::string> warning;  // the one line, without "corral: warning: "
  // Every PATH entry that exists outside but shows nothing runnable inside,
  // with the grant that would show it: "~/.cargo/bin (--allow-toolchain rustup)".
  std::vector<std::string> hidden;
};

// How far a comparison goes: past these it judges no further.
struct PathComparisonLimits {
  size_t entries = 256;        // PATH directories
  size_t hidden_names = 4096;  // names in hidden ones, each judged
  // Names listed in all: no directory is read past them (one that would
  // take more is asked name by name), and once they are spent the hidden
  // entries' names are judged no further (a PATH of a hundred directories
  // of a hundred thousand names each took seconds).
  size_t listed = 32768;
};

// `program` as the command line names it (argv[0]), looked up on the
// caller's PATH (policy.host().path_env) when it has no '/'. The PATH
// directories are listed through the listing cache in place, if any
// (policy/listing_cache.h); `began` is the moment the comparison began (the
// realtime clock), before which a directory's ctime must lie by
// kListingSettle for its listing to be remembered.
PathComparison ComparePath(const Policy& policy, const std::string& program, const struct timespec& began,
                           const PathComparisonLimits& limits = {});
PathComparison ComparePath(const Policy& policy, const std::string& program);

}  // namespace corral
