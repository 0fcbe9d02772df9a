// What this host can enforce, probed cheaply and cached per process.
//
// ProbeHost never creates a namespace or walks the filesystem: it asks the
// kernel for its Landlock ABI (one syscall), reads a few sysctls, and checks
// that seccomp filters are available. Whether user namespaces really work is
// only known by creating one, which `corral check` does (ProbeSandbox) and
// every run does anyway (a failure there fails closed).
#pragma once

#include <string>

namespace corral {

struct HostSupport {
  int landlock_abi = 0;            // 0: no Landlock
  bool user_namespaces = false;    // nothing visible forbids them
  std::string user_namespaces_detail;
  bool seccomp = false;
  bool cgroup2 = false;            // a cgroup v2 hierarchy is mounted
  std::string cgroup_detail;
  std::string kernel_release;
};

// Cached after the first call.
const HostSupport& ProbeHost();

}  // namespace corral
