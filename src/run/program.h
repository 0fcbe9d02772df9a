// Hash pinning: `--pin-sha256 HEX` names the bytes that may run, not a path.
//
// PreparePinnedProgram opens the program once, refuses a #! script (pin its
// interpreter instead) and a program outside every exec grant, hashes the
// opened file, and compares. The sandbox then execs that same descriptor
// (execveat with AT_EMPTY_PATH), so the program is never re-resolved by path.
#pragma once

#include <string>

#include "base/result.h"
#include "base/unique_fd.h"
#include "policy/policy.h"

namespace corral {

struct PinnedProgram {
  UniqueFd fd;
  std::string path;
  std::string sha256;
};

Result<PinnedProgram> PreparePinnedProgram(const Policy& policy, const std::string& program);

// `corral hash PATH`: the digest of the file at PATH, in the form
// --pin-sha256 takes.
Result<std::string> HashFile(const std::string& path);

}  // namespace corral
