// The resource limits of the command's process: one step, applied between
// clone and exec by whatever starts a confined command (exec/child.cc's
// command process; a warm supervisor's fork alike), so every way a command
// starts passes the same limits.
//
//   RlimitSet limits;
//   limits.Add(RLIMIT_NPROC, 65);
//   if (int e = ApplyRlimitsChild(limits); e != 0) fail(e);
//
// Each limit sets the soft and the hard value, so the command cannot raise
// it past the hard one; a value above the hard limit the process already
// has keeps that one (the step only ever lowers). RLIMIT_CPU's hard value is
// a second above its soft one: at the soft limit the kernel sends SIGXCPU
// (which names the limit in the exit record), at the hard one SIGKILL. Child side: raw syscalls only, no
// allocation, 0 or an errno.
//
// Security: global root is exempt from RLIMIT_NPROC (the kernel checks it
// for any other user), and each limit but NPROC is per process: a tree of
// processes together may use more. Processes and memory of the whole sandbox
// need a cgroup (confine/cgroup.h).
#pragma once

#include <sys/resource.h>

#include <cstddef>

namespace corral {

struct RlimitSet {
  struct Entry {
    int resource = 0;  // RLIMIT_*
    rlim_t soft = 0;
    rlim_t hard = 0;
  };
  Entry entries[8] = {};
  size_t count = 0;

  // Parent side: adds one limit (at most 8); `hard` >= `soft`.
  void Add(int resource, rlim_t soft, rlim_t hard);
  void Add(int resource, rlim_t value) { Add(resource, value, value); }
  bool empty() const { return count == 0; }
};

// Child side: lowers each limit of the calling process to its values.
int ApplyRlimitsChild(const RlimitSet& limits);

}  // namespace corral
