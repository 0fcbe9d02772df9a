#include "kernel/seccomp.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include "base/mutant.h"
#include "base/small_file.h"
#include "base/unique_fd.h"
#include "kernel/kernel_abi.h"

namespace corral {
namespace {

struct ContextDeleter {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Context = std::unique_ptr<void, ContextDeleter>;

// Namespace-creating clone flags. CLONE_NEWTIME shares its bit with the exit
// signal in clone(2), so it is checked for unshare(2) only.
constexpr uint64_t kCloneNewFlags[] = {
    CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET,
};
constexpr uint64_t kCloneNewTime = 0x00000080;

Error SeccompError(const std::string& what, int rc) {
  return Error::FromErrno(ErrorKind::kSeccomp, "cannot build the seccomp filter: " + what, "libseccomp", -rc);
}

// Exports the compiled filter as a BPF program.
Result<std::vector<sock_filter>> Export(const Context& ctx) {
  UniqueFd memfd(::memfd_create("corral-seccomp", MFD_CLOEXEC));
  if (!memfd) return Error::FromErrno(ErrorKind::kSeccomp, "cannot export the seccomp filter", "memfd_create", errno);
  int rc = seccomp_export_bpf(ctx.get(), memfd.get());
  if (rc < 0) return SeccompError("export", rc);
  off_t size = ::lseek(memfd.get(), 0, SEEK_END);
  if (size <= 0 || size % sizeof(sock_filter) != 0) {
    return Error(ErrorKind::kSeccomp, "the exported seccomp filter has an unexpected size");
  }
  std::vector<sock_filter> program(static_cast<size_t>(size) / sizeof(sock_filter));
  if (::pread(memfd.get(), program.data(), static_cast<size_t>(size), 0) != size) {
    return Error::FromErrno(ErrorKind::kSeccomp, "cannot read the exported seccomp filter", "pread", errno);
  }
  return program;
}

// The mount family and chroot, as DeniedSyscallNames lists them.
bool IsMountFamily(const std::string& name) {
  for (const char* call : {"mount", "umount2", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
                           "mount_setattr", "pivot_root", "chroot"}) {
    if (name == call) return true;
  }
  return false;
}

}  // namespace

bool SeccompFilterMutated() {
  for (Mutant mutant : {Mutant::kSeccompPtrace, Mutant::kSeccompKeyctl, Mutant::kSeccompSetId, Mutant::kSeccompTty,
                        Mutant::kSeccompSockets, Mutant::kSeccompArch, Mutant::kSeccompMount,
                        Mutant::kSeccompNamespaces, Mutant::kSeccompRawSockets, Mutant::kSeccompTcpOnly,
                        Mutant::kSeccompPassCred, Mutant::kSeccompUnixSockets}) {
    if (MutantActive(mutant)) return true;
  }
  return false;
}

const std::vector<std::string>& DeniedSyscallNames() {
  // Each is denied because a confined command has no business with it and it
  // widens the kernel surface an escape can use.
  static const std::vector<std::string> names = {
      // Reading or steering other processes.
      "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd",
      // The mount family, old and new API, and changing root.
      "mount", "umount2", "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
      "mount_setattr", "pivot_root", "chroot",
      // Joining other namespaces.
      "setns",
      // Kernel programmability and keyrings.
      "bpf", "keyctl", "add_key", "request_key", "perf_event_open", "userfaultfd",
      // io_uring bypasses the seccomp view of individual operations.
      "io_uring_setup", "io_uring_enter", "io_uring_register",
      // File handles bypass path-based checks.
      "open_by_handle_at", "name_to_handle_at",
      // Replacing or extending the kernel.
      "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
      // Host administration.
      "reboot", "swapon", "swapoff", "acct", "syslog", "quotactl", "quotactl_fd", "lookup_dcookie",
      "uselib", "nfsservctl", "iopl", "ioperm", "vhangup", "fanotify_init",
  };
  return names;
}

std::span<const int> DeniedSyscallNumbers() {
  static constexpr int numbers[] = {kabi::kSysOpenTreeAttr};
  return numbers;
}

Result<std::vector<sock_filter>> BuildSeccompFilter(const SeccompOptions& options) {
  Context ctx(seccomp_init(SCMP_ACT_ALLOW));
  if (!ctx) return Error(ErrorKind::kSeccomp, "cannot build the seccomp filter: seccomp_init failed");
  int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH,
                            MutantActive(Mutant::kSeccompArch) ? SCMP_ACT_ALLOW : SCMP_ACT_KILL_PROCESS);
  if (rc < 0) return SeccompError("bad-architecture action", rc);
  // corral sets no_new_privs itself, before Landlock.
  rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0);
  if (rc < 0) return SeccompError("no_new_privs attribute", rc);
  if (options.layout == SeccompLayout::kBinaryTree) {
    rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (rc < 0) return SeccompError("binary-tree layout", rc);
  }

  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  auto deny = [&](const std::string& name) -> Result<void> {
    if (MutantActive(Mutant::kSeccompPtrace) && name == "ptrace") return {};
    if (MutantActive(Mutant::kSeccompKeyctl) && (name == "keyctl" || name == "add_key" || name == "request_key")) {
      return {};
    }
    if (MutantActive(Mutant::kSeccompMount) && IsMountFamily(name)) return {};
    if (MutantActive(Mutant::kSeccompNamespaces) && name == "setns") return {};
    int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) return Error(ErrorKind::kSeccomp, "unknown syscall " + name);
    int r = seccomp_rule_add(ctx.get(), eperm, nr, 0);
    if (r < 0) return SeccompError(name, r);
    return {};
  };
  for (const std::string& name : DeniedSyscallNames()) CORRAL_TRY(deny(name));
  // The mount family, by number where libseccomp does not know the name. (The
  // read-only statmount and listmount stay allowed: they show the sandbox's
  // own mount tree, as /proc/self/mountinfo does, and another namespace's
  // only to a caller with CAP_SYS_ADMIN over it, which no process here has.)
  for (int nr : DeniedSyscallNumbers()) {
    if (MutantActive(Mutant::kSeccompMount)) break;
    rc = seccomp_rule_add(ctx.get(), eperm, nr, 0);
    if (rc < 0) return SeccompError("syscall " + std::to_string(nr), rc);
  }

  rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
  if (rc < 0) return SeccompError("clone3", rc);

  for (uint64_t flag : kCloneNewFlags) {
    if (MutantActive(Mutant::kSeccompNamespaces)) break;
    rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    if (rc < 0) return SeccompError("clone flags", rc);
    rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
    if (rc < 0) return SeccompError("unshare flags", rc);
  }
  if (!MutantActive(Mutant::kSeccompNamespaces)) {
    rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(unshare), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, kCloneNewTime, kCloneNewTime));
    if (rc < 0) return SeccompError("unshare flags", rc);
  }

  // personality: only the default persona (0) and the query (0xffffffff).
  // libseccomp ORs rules and allows one comparison per argument, so "neither
  // 0 nor all ones" is spelled as "some two adjacent bits differ", plus any
  // bit above the low 32.
  rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(personality), 1, SCMP_A0(SCMP_CMP_GT, 0xffffffffu));
  if (rc < 0) return SeccompError("personality", rc);
  for (int bit = 0; bit < 31; ++bit) {
    const uint64_t pair = 3ull << bit;
    for (uint64_t datum : {1ull << bit, 2ull << bit}) {
      rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(personality), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, pair, datum));
      if (rc < 0) return SeccompError("personality", rc);
    }
  }

  // Set-user-ID and set-group-ID bits: a file the command leaves in the
  // workspace must not run with its owner's identity when someone outside
  // runs it (for a root caller, a root-owned set-user-ID shell). Every call
  // that sets a mode is refused when the mode carries either bit. openat2
  // hides its mode in a struct seccomp cannot read, but what it creates is
  // empty, and the kernel clears both bits on the first write or truncate by
  // a process without CAP_FSETID, which no process in the sandbox has.
  struct ModeArgument {
    const char* name;
    unsigned int arg;
  };
  const ModeArgument mode_arguments[] = {
      {"chmod", 1}, {"fchmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2}, {"creat", 1},
      {"open", 2},  {"openat", 3}, {"mknod", 1},    {"mknodat", 2},
  };
  for (const ModeArgument& call : mode_arguments) {
    if (MutantActive(Mutant::kSeccompSetId)) break;
    int nr = seccomp_syscall_resolve_name(call.name);
    if (nr < 0) return Error(ErrorKind::kSeccomp, std::string("unknown syscall ") + call.name);
    for (uint64_t bit : {static_cast<uint64_t>(S_ISUID), static_cast<uint64_t>(S_ISGID)}) {
      rc = seccomp_rule_add(ctx.get(), eperm, nr, 1, scmp_arg_cmp{call.arg, SCMP_CMP_MASKED_EQ, bit, bit});
      if (rc < 0) return SeccompError(std::string("mode bits of ") + call.name, rc);
    }
  }

  // Terminal injection, and terminal state that would outlive the run on the
  // caller's terminal: the line discipline (also a kernel surface: n_gsm,
  // n_hdlc) and exclusive mode, which locks every later open out. Compared
  // on the low 32 bits as the kernel does. (termios and flow control cannot
  // be denied, shells and editors need them: corral restores them after the
  // run, see exec/terminal_state.h.)
  for (uint64_t request : {static_cast<uint64_t>(TIOCSTI), static_cast<uint64_t>(TIOCLINUX),
                           static_cast<uint64_t>(TIOCSETD), static_cast<uint64_t>(TIOCEXCL)}) {
    if (MutantActive(Mutant::kSeccompTty)) break;
    rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(ioctl), 1, SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, request));
    if (rc < 0) return SeccompError("ioctl", rc);
  }

  // Socket families: AF_UNIX always, AF_INET/AF_INET6 where a network
  // namespace bounds them (SeccompOptions).
  const bool inet = options.inet != InetSockets::kNone;
  for (int syscall : {SCMP_SYS(socket), SCMP_SYS(socketpair)}) {
    if (MutantActive(Mutant::kSeccompSockets)) break;
    rc = seccomp_rule_add(ctx.get(), eperm, syscall, 1, SCMP_A0(SCMP_CMP_GT, AF_INET6));
    if (rc < 0) return SeccompError("socket families", rc);
    for (int family = 0; family <= AF_INET6; ++family) {
      bool allowed = family == AF_UNIX || (inet && (family == AF_INET || family == AF_INET6));
      if (allowed) continue;
      rc = seccomp_rule_add(ctx.get(), eperm, syscall, 1,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<uint64_t>(family)));
      if (rc < 0) return SeccompError("socket families", rc);
    }
    // An allowed INET socket is a stream or a datagram one: raw sockets (a
    // kernel surface, and packets of any protocol on the namespace's links)
    // and SOCK_PACKET (which the kernel turns into AF_PACKET) are refused.
    // The type is the argument's low four bits (SOCK_TYPE_MASK; the flags
    // above them are SOCK_NONBLOCK and SOCK_CLOEXEC): 0, 3, 4-7 and 8-15.
    if (!inet || MutantActive(Mutant::kSeccompRawSockets)) continue;
    struct TypeMask {
      uint64_t mask, datum;
    };
    // TCP alone refuses SOCK_DGRAM (2) too: 2 and 3 are one mask.
    const bool tcp_only = options.inet == InetSockets::kTcpOnly && !MutantActive(Mutant::kSeccompTcpOnly);
    const TypeMask refused[] = {TypeMask{0xf, 0}, tcp_only ? TypeMask{0xe, 0x2} : TypeMask{0xf, SOCK_RAW},
                                TypeMask{0xc, 0x4}, TypeMask{0x8, 0x8}};
    for (int family : {AF_INET, AF_INET6}) {
      for (TypeMask type : refused) {
        rc = seccomp_rule_add(ctx.get(), eperm, syscall, 2,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<uint64_t>(family)),
                              SCMP_A1(SCMP_CMP_MASKED_EQ, type.mask, type.datum));
        if (rc < 0) return SeccompError("socket types", rc);
      }
      if (!tcp_only || syscall != SCMP_SYS(socket)) continue;
      // A stream socket of protocol 0 or IPPROTO_TCP: MPTCP (262) and SCTP
      // (132) are stream sockets Landlock's TCP rules do not see. Above 6 is
      // compared on all 64 bits, which only ever refuses more.
      rc = seccomp_rule_add(ctx.get(), eperm, syscall, 2,
                            SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<uint64_t>(family)),
                            SCMP_A2(SCMP_CMP_GT, IPPROTO_TCP));
      if (rc < 0) return SeccompError("socket protocols", rc);
      for (uint64_t protocol = 1; protocol < IPPROTO_TCP; ++protocol) {
        rc = seccomp_rule_add(ctx.get(), eperm, syscall, 2,
                              SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<uint64_t>(family)),
                              SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, protocol));
        if (rc < 0) return SeccompError("socket protocols", rc);
      }
    }
  }
  // Without a mount view: unix sockets only as connected pairs.
  if (options.unix_sockets == UnixSockets::kPairsOnly && !MutantActive(Mutant::kSeccompUnixSockets)) {
    rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(socket), 1,
                          SCMP_A0(SCMP_CMP_MASKED_EQ, 0xffffffffu, static_cast<uint64_t>(AF_UNIX)));
    if (rc < 0) return SeccompError("unix sockets", rc);
  }
  // In the host's network with TCP ports open: no server of any kind (a TCP
  // socket listens on an ephemeral port without a bind Landlock could
  // refuse, and listen(2) cannot tell a unix socket from it), no name of
  // the host's network taken (bind(2): Landlock already denies every TCP
  // bind, and an abstract unix name bound here is the host's too, which
  // Landlock's scope does not cover: a host daemon's name squatted, its
  // clients' datagrams received inside), and no connect hidden in a send
  // (MSG_FASTOPEN).
  if (options.inet == InetSockets::kTcpOnly && !MutantActive(Mutant::kSeccompTcpOnly)) {
    rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(listen), 0);
    if (rc < 0) return SeccompError("listen", rc);
    rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(bind), 0);
    if (rc < 0) return SeccompError("bind", rc);
    struct Send {
      int syscall;
      unsigned flags_argument;
    };
    for (Send send : {Send{SCMP_SYS(sendto), 3}, Send{SCMP_SYS(sendmsg), 2}, Send{SCMP_SYS(sendmmsg), 3}}) {
      rc = seccomp_rule_add(ctx.get(), eperm, send.syscall, 1,
                            scmp_arg_cmp{send.flags_argument, SCMP_CMP_MASKED_EQ, MSG_FASTOPEN, MSG_FASTOPEN});
      if (rc < 0) return SeccompError("MSG_FASTOPEN", rc);
    }
    // An unbound unix socket that passes credentials (SO_PASSCRED) or a
    // pidfd (SO_PASSPIDFD) is given an abstract name by the kernel at its
    // first connect or send (autobind): a name of the host's network, listed
    // in the host's /proc/net/unix, to which any process of the host can
    // send. With bind(2) refused, these two options are the only way to get
    // one; they are refused on every socket (the filter cannot see the
    // family), compared on the low 32 bits as the kernel reads an int.
    for (uint64_t option : {uint64_t{SO_PASSCRED}, uint64_t{kabi::kSoPassPidfd}}) {
      if (MutantActive(Mutant::kSeccompPassCred)) break;
      rc = seccomp_rule_add(ctx.get(), eperm, SCMP_SYS(setsockopt), 2,
                            SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, uint64_t{SOL_SOCKET}),
                            SCMP_A2(SCMP_CMP_MASKED_EQ, 0xffffffffu, option));
      if (rc < 0) return SeccompError("SO_PASSCRED", rc);
    }
  }

  return Export(ctx);
}

const std::vector<std::string>& InitAllowedSyscallNames() {
  static const std::vector<std::string> names = {
      "wait4", "kill", "getpid", "rt_sigtimedwait", "rt_sigreturn", "restart_syscall",
      "close", "write", "exit_group", "exit",
  };
  return names;
}

Result<std::vector<sock_filter>> BuildInitSeccompFilter() {
  Context ctx(seccomp_init(SCMP_ACT_KILL_PROCESS));
  if (!ctx) return Error(ErrorKind::kSeccomp, "cannot build init's seccomp filter: seccomp_init failed");
  int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc < 0) return SeccompError("bad-architecture action", rc);
  rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_NNP, 0);
  if (rc < 0) return SeccompError("no_new_privs attribute", rc);
  for (const std::string& name : InitAllowedSyscallNames()) {
    int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr == __NR_SCMP_ERROR) return Error(ErrorKind::kSeccomp, "unknown syscall " + name);
    rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ALLOW, nr, 0);
    if (rc < 0) return SeccompError(name, rc);
  }
  return Export(ctx);
}

int InstallSeccompChild(const sock_fprog* program) {
  return ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, program) == 0 ? 0 : errno;
}

bool SeccompAvailable() {
  if (::prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) return false;
  std::string line = ReadSmallFile("/proc/sys/kernel/seccomp/actions_avail").value_or("");
  // Without the file (very old kernels) trust PR_GET_SECCOMP alone.
  return line.empty() || (line.find("kill_process") != std::string::npos && line.find("errno") != std::string::npos);
}

}  // namespace corral
