#include "confine/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include "kernel/landlock.h"
#include "kernel/namespaces.h"
#include "kernel/seccomp.h"

namespace corral {

const HostSupport& ProbeHost() {
  static const HostSupport support = [] {
    HostSupport host;
    host.landlock_abi = LandlockAbi();
    host.user_namespaces = UserNamespacesExpected(&host.user_namespaces_detail);
    host.seccomp = SeccompAvailable();
    host.cgroup2 = ::access("/sys/fs/cgroup/cgroup.controllers", R_OK) == 0 ||
                   ::access("/sys/fs/cgroup/unified/cgroup.controllers", R_OK) == 0;
    host.cgroup_detail = host.cgroup2 ? "cgroup v2 mounted; corral sets rlimits only and does not use cgroups yet"
                                      : "no cgroup v2 hierarchy; corral sets rlimits only";
    struct utsname name;
    if (::uname(&name) == 0) host.kernel_release = name.release;
    return host;
  }();
  return support;
}

}  // namespace corral
