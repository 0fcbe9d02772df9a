// The seccomp filter, built with libseccomp before clone and installed by the
// child just before exec (after installation nothing allocates).
//
// Shape (fixed, in this order):
//   1. a foreign architecture (i386 via int 0x80, ...) and x32 are killed;
//   2. clone3 returns ENOSYS, so libc falls back to clone, whose flags a
//      filter can inspect;
//   3. the calls named by DeniedSyscallNames (and DeniedSyscallNumbers, for
//      calls libseccomp cannot name) return EPERM: debugging other
//      processes, every mount-family call (open_tree_attr included),
//      changing root or namespaces, kernel keyrings, BPF, perf, userfaultfd,
//      io_uring, file handles, kexec and modules, ...;
//   4. argument checks: clone/unshare with a CLONE_NEW* flag, personality other
//      than the default, ioctl TIOCSTI/TIOCLINUX/TIOCSETD/TIOCEXCL (low 32
//      bits), socket families other than AF_UNIX, AF_INET and AF_INET6, and
//      AF_INET/AF_INET6 sockets of a type other than SOCK_STREAM and
//      SOCK_DGRAM (raw, and the old SOCK_PACKET that the kernel turns into
//      AF_PACKET) return EPERM; with InetSockets::kNone, AF_INET and AF_INET6
//      return EPERM whatever the type; with kTcpOnly (--allow-port, the
//      host's network) only SOCK_STREAM sockets of protocol 0 or TCP are
//      made (no UDP, MPTCP or SCTP, which Landlock's TCP rules do not see),
//      listen(2) returns EPERM (Landlock cannot see a TCP listen on a port
//      that was never bound), so does bind(2) (an abstract unix name bound
//      in the host's network is the host's), and so does sending with
//      MSG_FASTOPEN (a connect made by sendto or sendmsg), and setsockopt
//      SO_PASSCRED and SO_PASSPIDFD at SOL_SOCKET (an unbound unix socket
//      with either is autobound to an abstract name of the host's network at
//      its first connect or send);
//   5. everything else is allowed: the mount view and Landlock bound it.
//
// The calls are laid out as a binary tree on the syscall number (libseccomp's
// optimisation level 2): a call with argument rules (openat, ioctl, clone,
// socket, ...) reaches them after about a dozen comparisons instead of sixty.
// Every call without argument rules ends in a constant allow or deny, so the
// kernel's seccomp action cache answers it without running the filter at all
// (SeccompFilter.ActionCacheAnswersEveryCallWithoutArgumentRules checks that
// shape); what such a call still pays is the seccomp entry itself.
//
// The sandbox's init (PID 1, corral's own code) runs under the command's
// filter and, once it has cloned the command, under a second one of its own:
// an allowlist of the calls its wait loop makes (InitAllowedSyscallNames).
// Any other call, and any foreign architecture, kills init, and with it the
// whole PID namespace: a fault in init fails closed. The command never runs
// under that filter, since init installs it after the command's clone.
#pragma once

#include <linux/filter.h>

#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace corral {

// Which AF_INET and AF_INET6 sockets the command may make: none (a rung
// without a network namespace of its own); stream and datagram, when a
// network namespace bounds them (the sandbox's own, or the host's under
// --network all); TCP alone, in the host's network with Landlock's TCP
// rules naming the ports (--allow-port).
enum class InetSockets { kNone, kStreamAndDatagram, kTcpOnly };

// Which AF_UNIX sockets the command may make: any (the mount view decides
// which named sockets it can reach), or only connected pairs (socketpair(2))
// on a rung without a mount view, where every host socket by path (Docker's,
// D-Bus's, an agent's) and by abstract name would be reachable: socket(2)
// with AF_UNIX returns EPERM, so nothing can be connected to or bound.
enum class UnixSockets { kAny, kPairsOnly };

// How libseccomp lays the rules out: a binary tree on the syscall number
// (what corral installs), or one comparison after another (the same rules,
// kept for the tests, which prove both decide every call alike).
enum class SeccompLayout { kBinaryTree, kLinear };

struct SeccompOptions {
  InetSockets inet = InetSockets::kNone;
  UnixSockets unix_sockets = UnixSockets::kAny;
  SeccompLayout layout = SeccompLayout::kBinaryTree;
};

// The filters compiled by libseccomp when corral was built (tools/seccomp_gen.cc),
// laid out as a binary tree whatever options.layout says; what a spawn installs. Equal to BuildSeccompFilter's output, which the unit
// tests check.
std::span<const sock_filter> EmbeddedSeccompFilter(const SeccompOptions& options);

// Init's allowlist filter, compiled when corral was built; equal to
// BuildInitSeccompFilter's output, which the unit tests check.
std::span<const sock_filter> EmbeddedInitSeccompFilter();

// What init may call after it has cloned the command, by name: reaping
// (wait4), forwarding signals and emptying the namespace (kill, getpid),
// waiting for signals (rt_sigtimedwait, rt_sigreturn, restart_syscall),
// closing its copies of the command's descriptors (close), reporting (write)
// and exiting (exit_group, exit).
const std::vector<std::string>& InitAllowedSyscallNames();

// Compiles init's filter with libseccomp.
Result<std::vector<sock_filter>> BuildInitSeccompFilter();

// Syscalls denied with EPERM whatever their arguments, by name.
const std::vector<std::string>& DeniedSyscallNames();

// Syscalls denied with EPERM whatever their arguments, by number: those newer
// than the libseccomp corral builds with (kernel/kernel_abi.h).
std::span<const int> DeniedSyscallNumbers();

// Compiles the filter with libseccomp, ready for SECCOMP_SET_MODE_FILTER.
Result<std::vector<sock_filter>> BuildSeccompFilter(const SeccompOptions& options);

// Whether a mutant (base/mutant.h) removes one of the filter's rules, so
// that a spawn must install BuildSeccompFilter's output instead of the
// embedded filter. Always false outside a mutant build.
bool SeccompFilterMutated();

// Child side: installs `program`. Requires no_new_privs. Returns 0 or an errno.
int InstallSeccompChild(const sock_fprog* program);

// Whether this kernel accepts seccomp filters (PR_GET_SECCOMP works and the
// actions corral uses are available).
bool SeccompAvailable();

}  // namespace corral
