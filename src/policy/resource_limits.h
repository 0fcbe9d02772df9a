// ResourceLimits: the caps on what the command may consume, as the policy
// asked for them (--max-procs, --max-memory, --max-cpu-seconds,
// --max-file-size, --max-open-files; the [sandbox] keys of the same names).
//
// Each unset field is no limit. What enforces each one is the plan's
// business (confine/plan.h, docs/limits.md): an rlimit of the command
// (kernel/rlimits.h) always, and for processes and memory a cgroup v2 limit
// of the whole sandbox where the host gives corral one (confine/cgroup.h).
// Security: global root is exempt from RLIMIT_NPROC, so as root a process
// limit holds only through a cgroup, and the plan refuses it without one
// unless the policy is best-effort.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace corral {

struct ResourceLimits {
  std::optional<uint64_t> procs;         // processes and threads
  std::optional<uint64_t> memory_bytes;  // address space of each process; the whole sandbox with a cgroup
  std::optional<uint64_t> cpu_seconds;   // CPU time of each process
  std::optional<uint64_t> file_size_bytes;  // the largest file a process may write
  std::optional<uint64_t> open_files;    // descriptors of each process

  bool any() const { return procs || memory_bytes || cpu_seconds || file_size_bytes || open_files; }
  // "procs 64, memory 512m, cpu 10s", or "none".
  std::string Describe() const;
  bool operator==(const ResourceLimits&) const = default;
};

}  // namespace corral
