// What this host can enforce, probed cheaply and cached per process.
//
// ProbeHost never creates a namespace or walks the filesystem: it asks the
// kernel for its Landlock ABI (one syscall), reads a few sysctls, and checks
// that seccomp filters are available. Whether user namespaces really work is
// only known by creating one, which `corral check` does (ProbeSandbox) and
// every run does anyway (a failure there fails closed).
#pragma once

#include <string>

#include "kernel/cgroup.h"

namespace corral {

struct HostSupport {
  int landlock_abi = 0;            // 0: no Landlock
  bool user_namespaces = false;    // nothing visible forbids them
  std::string user_namespaces_detail;
  // Ubuntu's kernel.apparmor_restrict_unprivileged_userns is 1 and corral
  // runs unconfined by AppArmor: a user namespace is created, but without
  // capabilities inside (docs/hosts.md; `corral setup apparmor` is the fix).
  bool apparmor_restricts_userns = false;
  std::string apparmor_label;      // /proc/self/attr/current, "" when AppArmor is off
  bool seccomp = false;
  // Inside a container (Docker, Podman, Kubernetes): what it is, else "".
  std::string container;
  // corral itself already runs under a seccomp filter (/proc/self/status
  // Seccomp: 2), as a container's default profile puts it.
  bool outer_seccomp_filter = false;
  bool cgroup2 = false;            // a cgroup v2 hierarchy is mounted
  std::string cgroup_detail;
  // What it gives one run (kernel/cgroup.h): a cgroup with pids.max and
  // memory.max, or nothing, and why.
  CgroupOffer cgroup_offer;
  std::string kernel_release;
};

// Cached after the first call.
const HostSupport& ProbeHost();

}  // namespace corral
