#include "confine/host.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "base/small_file.h"
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
  const std::string env = ReadSmallFile("/proc/1/environ").value_or("");
  for (size_t at = 0; at < env.size();) {
    size_t end = env.find('\0', at);
    if (end == std::string::npos) end = env.size();
    std::string_view entry = std::string_view(env).substr(at, end - at);
    if (entry.starts_with("container=")) return std::string(entry.substr(10));
    at = end + 1;
  }
  return "";
}

// Whether corral already runs under a seccomp filter ("Seccomp:\t2").
bool OuterSeccompFilter() {
  // Past thousands of supplementary groups (the Groups: line comes first).
  const std::string status = ReadSmallFile("/proc/self/status", 4 << 20).value_or("");
  size_t at = status.starts_with("Seccomp:") ? 0 : status.find("\nSeccomp:");
  if (at == std::string::npos) return false;
  at = status.find(':', at) + 1;
  std::string_view line = std::string_view(status).substr(at, status.find('\n', at) - at);
  return line.find('2') != std::string_view::npos;
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
