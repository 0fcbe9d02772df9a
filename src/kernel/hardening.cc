#include "kernel/hardening.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "kernel/kernel_abi.h"

namespace corral {

int NewSessionChild() { return ::setsid() < 0 ? errno : 0; }

int DisableCoreDumpsChild() {
  struct rlimit limit = {0, 0};
  return ::setrlimit(RLIMIT_CORE, &limit) == 0 ? 0 : errno;
}

int DropCapabilitiesChild() {
  using namespace kabi;
  // Lock uid-0 semantics off first: exec must never grant capabilities again.
  unsigned long bits = kSecbitNoroot | kSecbitNorootLocked | kSecbitNoSetuidFixup | kSecbitNoSetuidFixupLocked |
                       kSecbitKeepCapsLocked | kSecbitNoCapAmbientRaise | kSecbitNoCapAmbientRaiseLocked;
  // Without CAP_SETPCAP (an unprivileged caller with no user namespace of
  // its own: best effort) neither the securebits nor the bounding set can
  // change. Every other set can always be emptied, and no_new_privs, set
  // next, keeps exec from granting anything through set-user-ID bits or file
  // capabilities, so the bounding set then bounds nothing.
  bool privileged = ::prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) == 0;
  if (!privileged && errno != EPERM) return errno;
  // Capability numbers are contiguous: the first EINVAL is past the
  // kernel's last one, and every number above it is too.
  for (int cap = 0; privileged && cap < 64; ++cap) {
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
    if (errno != EINVAL) return errno;
    break;
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capset, &header, data) != 0) return errno;
  // Verified, not assumed.
  if (::syscall(SYS_capget, &header, data) != 0) return errno;
  for (const auto& set : data) {
    if (set.effective != 0 || set.permitted != 0 || set.inheritable != 0) return EPERM;
  }
  return 0;
}

int SetNoNewPrivsChild() { return ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 ? 0 : errno; }

}  // namespace corral
