// The messages on a warm sandbox's control channel (exec/warm_sandbox.h):
// a SOCK_SEQPACKET socketpair, close-on-exec, whose one end corral holds and
// whose other only the sandbox's init holds (never a call: every descriptor
// >= 3 closes at a call's exec). Fixed-size structs, so init, which
// allocates nothing, reads them into its own memory.
//
//   corral -> init  WarmRequest{kCall} with SCM_RIGHTS: the call's stdin,
//                   stdout, stderr, its status pipe's write end and, with
//                   kPinnedProgram, the program to exec by descriptor;
//                   then `payload` bytes in messages of at most
//                   kWarmChunk: argv, env and the working directory, each
//                   NUL-terminated, in that order.
//   init -> corral  WarmReply: the call runs (`started`), or the
//                   ChildReport of the step that failed before its exec.
//   corral -> init  WarmRequest{kSignal, kKill} for the running call (its
//                   `sequence`; any other is stale and ignored).
//   init -> status  when the call's process ends: every other process of
//                   the PID namespace killed and reaped, then the wait
//                   status (an int) on the call's status pipe, closed.
//
// EOF on the channel ends the sandbox: init kills everything and exits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel/child_report.h"

namespace corral {

// The most argv + env + cwd bytes one call carries, and the most strings.
inline constexpr size_t kWarmPayloadMax = 1 << 20;
inline constexpr size_t kWarmStringSlots = 1 << 15;
inline constexpr size_t kWarmChunk = 1 << 16;
// Descriptors of a call: stdin, stdout, stderr, status, program.
inline constexpr int kWarmCallFds = 5;

enum class WarmRequestKind : uint32_t { kCall = 1, kSignal = 2, kKill = 3 };
enum class WarmCallFlags : uint32_t { kNone = 0, kPinnedProgram = 1 };

struct WarmRequest {
  WarmRequestKind kind = WarmRequestKind::kCall;
  uint32_t sequence = 0;
  int32_t signal = 0;       // kSignal
  uint32_t argc = 0;        // kCall
  uint32_t envc = 0;
  uint32_t payload = 0;
  WarmCallFlags flags = WarmCallFlags::kNone;
};

struct WarmReply {
  uint32_t sequence = 0;
  uint32_t started = 0;  // 1: exec'd; 0: `report` says what failed
  ChildReport report;
};

}  // namespace corral
