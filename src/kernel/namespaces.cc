#include "kernel/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "base/mutant.h"
#include "base/small_file.h"

namespace corral {
namespace {

int WriteFile(const char* path, const char* data) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  size_t length = ::strlen(data);
  ssize_t written = ::write(fd, data, length);
  int err = written == static_cast<ssize_t>(length) ? 0 : (written < 0 ? errno : EIO);
  ::close(fd);
  return err;
}

}  // namespace

uint64_t SandboxCloneFlags(NetworkNamespace network) {
  uint64_t flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
  if (network == NetworkNamespace::kNew && !MutantActive(Mutant::kNetNamespace)) flags |= CLONE_NEWNET;
  return flags;
}

IdMaps MakeIdMaps(uid_t uid, gid_t gid) {
  IdMaps maps;
  std::snprintf(maps.uid_map, sizeof maps.uid_map, "%u %u 1\n", uid, uid);
  std::snprintf(maps.gid_map, sizeof maps.gid_map, "%u %u 1\n", gid, gid);
  return maps;
}

int WriteIdMapsChild(const IdMaps& maps) {
  if (int err = WriteFile("/proc/self/setgroups", "deny"); err != 0 && err != ENOENT) return err;
  if (int err = WriteFile("/proc/self/uid_map", maps.uid_map); err != 0) return err;
  return WriteFile("/proc/self/gid_map", maps.gid_map);
}

std::string AppArmorLabel() {
  for (const char* path : {"/proc/self/attr/apparmor/current", "/proc/self/attr/current"}) {
    std::optional<std::string> text = ReadSmallFile(path, 4096);
    if (!text || text->empty()) continue;
    std::string label = text->substr(0, text->find('\n'));
    while (!label.empty() && label.back() == '\0') label.pop_back();
    // "corral (unconfined)": the profile's name, without its mode.
    if (size_t mode = label.find(" ("); mode != std::string::npos) label.resize(mode);
    return label;
  }
  return "";
}

bool AppArmorRestrictsUserNamespaces() {
  if (ReadSmallNumber("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", 0) != 1) return false;
  // A profile with the `userns,` rule (`corral setup apparmor`) lifts it;
  // only an unconfined process gets the restricted namespace.
  std::string label = AppArmorLabel();
  return label.empty() || label == "unconfined";
}

bool UserNamespacesExpected(std::string* detail) {
  if (ReadSmallNumber("/proc/sys/user/max_user_namespaces", 1) == 0) {
    *detail = "user.max_user_namespaces is 0";
    return false;
  }
  bool root = ::geteuid() == 0;
  if (!root && ReadSmallNumber("/proc/sys/kernel/unprivileged_userns_clone", 1) == 0) {
    *detail = "kernel.unprivileged_userns_clone is 0";
    return false;
  }
  if (!root && AppArmorRestrictsUserNamespaces()) {
    *detail = "kernel.apparmor_restrict_unprivileged_userns is 1 and no AppArmor profile confines corral (label " +
              (AppArmorLabel().empty() ? std::string("none") : "\"" + AppArmorLabel() + "\"") +
              "): a user namespace would have no capabilities inside";
    return false;
  }
  *detail = "available";
  return true;
}

}  // namespace corral
