#include "confine/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "kernel/landlock.h"
#include "kernel/namespaces.h"
#include "kernel/seccomp.h"

namespace corral {
namespace {

// Which container corral runs in, by the marks each runtime leaves.
std::string ContainerKind() {
  if (const char* k8s = std::getenv("KUBERNETES_SERVICE_HOST"); k8s != nullptr && *k8s != '\0') return "kubernetes";
  if (::access("/run/.containerenv", F_OK) == 0) return "podman";
  if (::access("/.dockerenv", F_OK) == 0) return "docker";
  std::ifstream env("/proc/1/environ");
  std::string entry;
  while (std::getline(env, entry, '\0')) {
    if (entry.rfind("container=", 0) == 0) return entry.substr(10);
  }
  return "";
}

// Whether corral already runs under a seccomp filter ("Seccomp:\t2").
bool OuterSeccompFilter() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Seccomp:", 0) == 0) return line.find('2') != std::string::npos;
  }
  return false;
}

}  // namespace

const HostSupport& ProbeHost() {
  static const HostSupport support = [] {
    HostSupport host;
    host.landlock_abi = LandlockAbi();
    host.user_namespaces = UserNamespacesExpected(&host.user_namespaces_detail);
    host.apparmor_label = AppArmorLabel();
    host.apparmor_restricts_userns = ::geteuid() != 0 && AppArmorRestrictsUserNamespaces();
    host.seccomp = SeccompAvailable();
    host.container = ContainerKind();
    host.outer_seccomp_filter = OuterSeccompFilter();
    host.cgroup2 = ::access("/sys/fs/cgroup/cgroup.controllers", R_OK) == 0 ||
                   ::access("/sys/fs/cgroup/unified/cgroup.controllers", R_OK) == 0;
    host.cgroup_offer = ProbeHostCgroupOffer();
    host.cgroup_detail = host.cgroup_offer.detail;
    struct utsname name;
    if (::uname(&name) == 0) host.kernel_release = name.release;
    return host;
  }();
  return support;
}

}  // namespace corral
