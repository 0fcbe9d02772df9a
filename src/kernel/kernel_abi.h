// Kernel ABI constants corral needs beyond what Debian 12's headers carry.
//
// This is the only place such constants live. Debian 12's <linux/landlock.h>
// stops at Landlock ABI 2; the kernel corral targets speaks ABI 7. Values are
// from the upstream UAPI headers (include/uapi/linux/landlock.h, mount.h,
// openat2.h). Names carry a kabi:: prefix so they never collide with a system
// header that defines the same macro.
#pragma once

#include <sys/syscall.h>

#include <cstdint>

namespace corral::kabi {

// ---- syscall numbers (x86-64 values; all present since Linux 5.13) ----
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
// A mount-family call newer than Debian 12's headers and its libseccomp
// (2.5.4): the seccomp filter denies it by number, the same on x86-64 and in
// the generic table (aarch64, riscv64).
inline constexpr int kSysOpenTreeAttr = 467;  // open_tree_attr, Linux 6.15

// ---- socket options ----
// SO_PASSPIDFD (Linux 6.5, asm-generic/socket.h; x86-64 uses the generic
// value): like SO_PASSCRED, it makes an unbound unix socket autobind.
inline constexpr int kSoPassPidfd = 76;

// ---- Landlock ----
inline constexpr uint32_t kCreateRulesetVersion = 1u << 0;

inline constexpr uint32_t kRulePathBeneath = 1;
inline constexpr uint32_t kRuleNetPort = 2;

// Filesystem rights, with the ABI that introduced them.
inline constexpr uint64_t kFsExecute = 1ull << 0;      // ABI 1
inline constexpr uint64_t kFsWriteFile = 1ull << 1;    // ABI 1
inline constexpr uint64_t kFsReadFile = 1ull << 2;     // ABI 1
inline constexpr uint64_t kFsReadDir = 1ull << 3;      // ABI 1
inline constexpr uint64_t kFsRemoveDir = 1ull << 4;    // ABI 1
inline constexpr uint64_t kFsRemoveFile = 1ull << 5;   // ABI 1
inline constexpr uint64_t kFsMakeChar = 1ull << 6;     // ABI 1
inline constexpr uint64_t kFsMakeDir = 1ull << 7;      // ABI 1
inline constexpr uint64_t kFsMakeReg = 1ull << 8;      // ABI 1
inline constexpr uint64_t kFsMakeSock = 1ull << 9;     // ABI 1
inline constexpr uint64_t kFsMakeFifo = 1ull << 10;    // ABI 1
inline constexpr uint64_t kFsMakeBlock = 1ull << 11;   // ABI 1
inline constexpr uint64_t kFsMakeSym = 1ull << 12;     // ABI 1
inline constexpr uint64_t kFsRefer = 1ull << 13;       // ABI 2
inline constexpr uint64_t kFsTruncate = 1ull << 14;    // ABI 3
inline constexpr uint64_t kFsIoctlDev = 1ull << 15;    // ABI 5

// Network rights (ABI 4).
inline constexpr uint64_t kNetBindTcp = 1ull << 0;
inline constexpr uint64_t kNetConnectTcp = 1ull << 1;

// Scopes (ABI 6).
inline constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0;
inline constexpr uint64_t kScopeSignal = 1ull << 1;

// landlock_restrict_self() flags (ABI 7): audit logging controls.
inline constexpr uint32_t kRestrictSelfLogSameExecOff = 1u << 0;
inline constexpr uint32_t kRestrictSelfLogNewExecOn = 1u << 1;
inline constexpr uint32_t kRestrictSelfLogSubdomainsOff = 1u << 2;

// Rights that apply to a non-directory inode (a rule on a file may hold only these).
inline constexpr uint64_t kFsFileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;

struct LandlockRulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;  // ABI 4
  uint64_t scoped;              // ABI 6
};

struct __attribute__((packed)) LandlockPathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

struct LandlockNetPortAttr {
  uint64_t allowed_access;
  uint64_t port;
};

// The newest Landlock ABI this build knows. A newer kernel is treated as this.
inline constexpr int kLandlockAbiKnown = 7;

// ---- new mount API (Linux 5.2 / 5.12) ----
inline constexpr unsigned kOpenTreeClone = 1;
inline constexpr unsigned kOpenTreeCloexec = 02000000;  // O_CLOEXEC
inline constexpr unsigned kMoveMountFEmptyPath = 0x00000004;
inline constexpr unsigned kMoveMountTEmptyPath = 0x00000040;
inline constexpr uint64_t kMountAttrRdonly = 0x00000001;
inline constexpr uint64_t kMountAttrNosuid = 0x00000002;
inline constexpr uint64_t kMountAttrNodev = 0x00000004;
inline constexpr uint64_t kMountAttrNoexec = 0x00000008;
inline constexpr uint64_t kMountAttrIdmap = 0x00100000;  // Linux 5.12
// fsopen(2) / fsconfig(2) / fsmount(2) (Linux 5.2), for the overlay of --overlay.
inline constexpr unsigned kFsopenCloexec = 0x00000001;
inline constexpr unsigned kFsconfigSetFlag = 0;
inline constexpr unsigned kFsconfigSetString = 1;
inline constexpr unsigned kFsconfigCmdCreate = 6;
inline constexpr unsigned kFsmountCloexec = 0x00000001;

struct MountAttr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

// ---- clone / close_range ----
inline constexpr uint64_t kClonePidfd = 0x00001000;
// clone3(2) (Linux 5.3), and CLONE_INTO_CGROUP (5.7): the child starts in
// the cgroup whose directory `cgroup` is a descriptor of.
inline constexpr uint64_t kCloneIntoCgroup = 0x200000000ULL;
struct CloneArgs {
  uint64_t flags;
  uint64_t pidfd;
  uint64_t child_tid;
  uint64_t parent_tid;
  uint64_t exit_signal;
  uint64_t stack;
  uint64_t stack_size;
  uint64_t tls;
  uint64_t set_tid;
  uint64_t set_tid_size;
  uint64_t cgroup;
};
inline constexpr unsigned kCloseRangeCloexec = 1u << 2;

// ---- securebits (linux/securebits.h) ----
inline constexpr unsigned long kSecbitNoroot = 1ul << 0;
inline constexpr unsigned long kSecbitNorootLocked = 1ul << 1;
inline constexpr unsigned long kSecbitNoSetuidFixup = 1ul << 2;
inline constexpr unsigned long kSecbitNoSetuidFixupLocked = 1ul << 3;
inline constexpr unsigned long kSecbitKeepCapsLocked = 1ul << 5;
inline constexpr unsigned long kSecbitNoCapAmbientRaise = 1ul << 6;
inline constexpr unsigned long kSecbitNoCapAmbientRaiseLocked = 1ul << 7;

}  // namespace corral::kabi
