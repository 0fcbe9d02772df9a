// RunHostProgram: runs a short program of the host, outside any sandbox (a
// backend's probe, getent), and reports how it ended. Never for the confined
// command.
//
// Contract:
//   - `argv[0]` is an absolute path; the environment is exactly `env`
//     ("NAME=value"); stdin is /dev/null, no signal is blocked in it.
//   - One of its output streams is captured (at most `limit` bytes kept; the
//     rest is read and dropped), the other goes to /dev/null.
//   - After `deadline` it is killed with SIGKILL (timed_out).
//   - It is waited for once. Where it cannot be (the caller ignores SIGCHLD,
//     or another thread reaped it), `waited` is false and exit_code -1: the
//     output alone says what happened.
//   - An Error only when it could not be started (ErrorKind::kExec).
//
//   Result<HostProgramResult> run = RunHostProgram({"/usr/bin/getent", "passwd", "1000"}, {},
//                                                  CapturedStream::kStdout, 64 * 1024, 10s);
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "base/result.h"

namespace corral {

enum class CapturedStream { kStdout, kStderr };

struct HostProgramResult {
  int exit_code = -1;  // -1 when a signal ended it (the deadline's too), or it was not waited for
  bool timed_out = false;
  bool waited = false;
  std::string output;  // the captured stream
};

Result<HostProgramResult> RunHostProgram(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                                         CapturedStream captured, size_t limit, std::chrono::milliseconds deadline);

}  // namespace corral
