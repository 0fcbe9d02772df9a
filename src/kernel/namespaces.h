// Namespaces: which ones a sandbox gets, and the child-side id mapping.
//
// corral always creates a new user namespace, even for root, and maps the
// caller's uid and gid onto themselves, so files keep their owners. It also
// creates mount, PID, IPC, UTS and cgroup namespaces, and a network
// namespace (with only lo) unless the network is granted.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace corral {

// Whether the sandbox gets a network namespace of its own (only lo) or shares
// the host's (the network is granted).
enum class NetworkNamespace { kNew, kHost };

// clone(2) flags for the sandbox. NetworkNamespace::kNew adds CLONE_NEWNET.
uint64_t SandboxCloneFlags(NetworkNamespace network);

// The sandbox's hostname, in its own UTS namespace.
inline constexpr char kSandboxHostname[] = "corral";

// Prepared in the parent: the exact bytes to write to the map files.
struct IdMaps {
  char uid_map[48] = {};
  char gid_map[48] = {};
};
IdMaps MakeIdMaps(uid_t uid, gid_t gid);

// Child side: writes setgroups=deny, uid_map and gid_map for the calling
// process. Returns 0 or an errno.
int WriteIdMapsChild(const IdMaps& maps);

// The AppArmor label corral runs under ("unconfined", "corral", ...), without
// its mode; "" when AppArmor is not enabled.
std::string AppArmorLabel();

// Ubuntu's kernel.apparmor_restrict_unprivileged_userns is 1 and no profile
// confines corral: a user namespace it creates has no capabilities inside.
bool AppArmorRestrictsUserNamespaces();

// What the host says about unprivileged user namespaces, without creating one:
// true when nothing visible forbids them; `detail` explains a refusal.
bool UserNamespacesExpected(std::string* detail);

}  // namespace corral
