// ResourceLimits: the caps on what the command may consume, as the policy
// asked for them (--max-procs, --max-memory, --max-cpu-seconds,
// --max-file-size, --max-open-files, --max-cpus; the [sandbox] keys of the
// same names).
//
// Each unset field is no limit. What enforces each one is the plan's
// business (confine/plan.h, docs/limits.md): an rlimit of the command
// (kernel/rlimits.h) always, and for processes and memory a cgroup v2 limit
// of the whole sandbox where the host gives corral one (confine/cgroup.h).
// --max-cpus has no rlimit: only cpu.max of such a cgroup holds it, so the
// plan refuses it without one unless the policy is best-effort.
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
  std::optional<uint64_t> milli_cpus;    // the whole sandbox's CPU share, in thousandths of a CPU (500: half a core)

  bool any() const { return procs || memory_bytes || cpu_seconds || file_size_bytes || open_files || milli_cpus; }
  // "processes 64, memory 512m, cpu 10s, cpus 0.5", or "none".
  std::string Describe() const;
  bool operator==(const ResourceLimits&) const = default;
};

// Thousandths of a CPU as a number of CPUs: 500 "0.5", 2000 "2", 1250 "1.25".
std::string MilliCpusText(uint64_t milli_cpus);

}  // namespace corral
