// cgroup v2: what the host lets corral do, and one run's own cgroup.
//
// A run asked for --max-procs, --max-memory or --max-cpus gets a child cgroup
// of the one corral runs in, with pids.max, memory.max (and memory.swap.max
// 0) and cpu.max ("QUOTA 100000": microseconds per 100ms period) set
// before the sandbox's init starts in it (clone3 CLONE_INTO_CGROUP, through
// Command::cgroup_fd in exec/spawn.h), so no process of the sandbox ever
// runs outside it. After the run the cgroup's events say which limit hit,
// then every process left in it is killed (cgroup.kill) and it is removed.
//
//   CgroupOffer offer = ProbeCgroupOffer("/sys/fs/cgroup", self_cgroup_text);
//   if (offer.pids) {
//     CORRAL_ASSIGN_OR_RETURN(RunCgroup cgroup, RunCgroup::Create(offer.parent, {.pids_max = 65}));
//     command.cgroup_fd = cgroup.fd();
//   }
//
// Where corral can make one: the cgroup it runs in must offer the controller
// to its children, that is list it in cgroup.subtree_control (a delegated
// subtree, or corral's own parent set up so), or be the hierarchy's root
// (root only), where corral enables it; and the directory must be writable.
// corral never moves itself to another cgroup. A v1 or hybrid host whose v2
// hierarchy has no controllers offers nothing: the plan then refuses a limit
// that needs a cgroup (confine/plan.h), unless --best-effort.
//
// Every file of the run's cgroup is opened relative to its directory
// descriptor with O_NOFOLLOW: the sandbox cannot write the cgroup (it is
// not in its mount view), but a name made by another run is never followed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace corral {

// What the host's cgroup v2 hierarchy gives one run.
struct CgroupOffer {
  std::string parent;    // the directory a run's cgroup is made in ("" when none)
  bool pids = false;     // pids.max can be set in it
  bool memory = false;   // memory.max likewise
  bool cpu = false;      // cpu.max likewise
  bool enable = false;   // the parent is the hierarchy's root: corral writes its subtree_control first
  std::string detail;    // what was found, or why nothing is offered, for `explain` and `check`
};

// The cgroup v2 mount point from /proc/self/mountinfo's text ("" if none).
std::string CgroupMountPoint(std::string_view mountinfo);

// `mount_point`: where cgroup2 is mounted; `self_cgroup`: the text of
// /proc/self/cgroup. Reads the files of the cgroup named by its "0::" line.
CgroupOffer ProbeCgroupOffer(const std::string& mount_point, std::string_view self_cgroup);

// The host's offer (the mount from /proc/self/mountinfo, the cgroup from
// /proc/self/cgroup).
CgroupOffer ProbeHostCgroupOffer();

struct CgroupLimits {
  std::optional<uint64_t> pids_max;
  std::optional<uint64_t> memory_max;  // bytes; memory.swap.max is 0 with it
  std::optional<uint64_t> cpu_milli;   // thousandths of a CPU, written as cpu.max
};

// cpu.max's period, microseconds: the kernel's default.
inline constexpr uint64_t kCpuMaxPeriodMicros = 100000;

// The text written to cpu.max for a share of `milli_cpus` thousandths of a
// CPU: "QUOTA PERIOD" (500: "50000 100000", 2000: "200000 100000").
std::string CpuMaxText(uint64_t milli_cpus);

// Which of a cgroup's limits were hit during the run (its pids.events
// "max" and memory.events "oom_kill" counters).
struct CgroupEvents {
  uint64_t pids_max = 0;   // forks refused at pids.max
  uint64_t oom_kills = 0;  // processes the OOM killer ended at memory.max
};

class RunCgroup {
 public:
  // Makes a fresh child of `parent` (an unguessable name) and writes the
  // limits. With `enable`, first adds the controllers the limits need to
  // the parent's cgroup.subtree_control.
  static Result<RunCgroup> Create(const std::string& parent, const CgroupLimits& limits, bool enable = false);

  RunCgroup() = default;
  RunCgroup(RunCgroup&&) noexcept = default;
  RunCgroup& operator=(RunCgroup&& other) noexcept;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  // Remove() when still there.
  ~RunCgroup();

  // The cgroup's directory, for clone3's CLONE_INTO_CGROUP.
  int fd() const { return dir_.get(); }
  const std::string& path() const { return path_; }
  CgroupEvents Events() const;
  // Kills whatever is left in it (cgroup.kill; without one, SIGKILL to each
  // of cgroup.procs until it is empty) and removes it. Idempotent.
  Result<void> Remove();

 private:
  UniqueFd parent_;
  UniqueFd dir_;
  std::string name_;
  std::string path_;
};

}  // namespace corral
