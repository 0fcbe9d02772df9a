// RunProbeCommand: runs a short helper program (a backend's probe) with no
// input and no output but its stderr, under a deadline, and reports how it
// ended. Used by backend detection; never for the confined command itself.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "base/result.h"

namespace corral {

struct ProbeCommandResult {
  int exit_code = -1;  // -1 when a signal ended it (or the deadline did)
  bool timed_out = false;
  std::string stderr_text;  // at most the first 4 KiB
};

// `argv[0]` must be an absolute path. The environment is `env` ("NAME=value").
// After `deadline` the program is killed with SIGKILL.
Result<ProbeCommandResult> RunProbeCommand(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                           std::chrono::milliseconds deadline);

}  // namespace corral
