#include "exec/spawn.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <utility>

#include "exec/child.h"
#include "exec/descriptor_message.h"
#include "exec/nursery.h"
#include "exec/warm_protocol.h"
#include "confine/env.h"
#include "confine/host.h"
#include "kernel/kernel_abi.h"

namespace corral {
namespace {

constexpr size_t kChildStackSize = 256 * 1024;

// A stack for a clone that shares memory (the command's, or the unconfined
// child's), with a guard page below it.
class ChildStack {
 public:
  ChildStack() = default;
  ChildStack(const ChildStack&) = delete;
  ChildStack& operator=(const ChildStack&) = delete;
  ~ChildStack() { Unmap(); }

  Result<void> Map() {
    void* base = ::mmap(nullptr, kChildStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                        -1, 0);
    if (base == MAP_FAILED) return Error::FromErrno(ErrorKind::kInternal, "cannot map a stack", "mmap", errno);
    ::mprotect(base, 4096, PROT_NONE);
    base_ = base;
    return {};
  }
  char* top() const { return static_cast<char*>(base_) + kChildStackSize; }
  // Once the clone returned: init has its own copy, and an unconfined
  // child has exec'd.
  void Unmap() {
    if (base_ != nullptr) ::munmap(base_, kChildStackSize);
    base_ = nullptr;
  }

 private:
  void* base_ = nullptr;
};

struct Pipe {
  UniqueFd read, write;
};

// The lifeline (exec/child.h): a stream socketpair; `write` is corral's
// end, `read` init's.
Result<Pipe> OpenLifeline() {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot create the sandbox's lifeline", "socketpair", errno);
  }
  return Pipe{UniqueFd(fds[1]), UniqueFd(fds[0])};
}

Result<Pipe> OpenPipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno);
  }
  return Pipe{UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// The command's half of the context: argv and envp arrays (which point into
// `command`, and must live until the clone returns), its descriptors, umask
// and signal mask.
void PrepareCommand(Command& command, ChildContext& ctx, std::vector<char*>& argv, std::vector<char*>& envp) {
  for (std::string& arg : command.argv) argv.push_back(arg.data());
  argv.push_back(nullptr);
  ctx.path_env = kDefaultPath;
  for (std::string& entry : command.env) {
    envp.push_back(entry.data());
    if (entry.starts_with("PATH=")) ctx.path_env = entry.c_str() + 5;
  }
  envp.push_back(nullptr);
  ctx.argv = argv.data();
  ctx.envp = envp.data();
  ctx.program_fd = command.program.get();
  ctx.stdin_fd = command.stdin_fd;
  ctx.stdout_fd = command.stdout_fd;
  ctx.stderr_fd = command.stderr_fd;
  mode_t mask = ::umask(022);
  ::umask(mask);
  ctx.umask = mask;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &ctx.original_mask);
  for (int sig : kForwardedSignals) ::sigdelset(&ctx.original_mask, sig);
  ::sigdelset(&ctx.original_mask, SIGCHLD);
  ::sigdelset(&ctx.original_mask, SIGWINCH);
  ::sigdelset(&ctx.original_mask, SIGPIPE);
}

// The channel the child sends the pty's master over, when the command gets
// one: the child's end goes into `ctx`, the parent keeps the other.
Result<UniqueFd> OpenPtyChannel(const Command& command, ChildContext& ctx, UniqueFd& child_end) {
  if (!command.pty) return UniqueFd();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot create a socket for the pty", "socketpair", errno);
  }
  child_end.Reset(fds[1]);
  ctx.pty_socket_fd = fds[1];
  ctx.pty_descriptors = command.pty->descriptors;
  ctx.pty_modes = command.pty->modes;
  ctx.pty_size = command.pty->size;
  return UniqueFd(fds[0]);
}

// The channel the child sends the sockets of corral's services over, when
// the plan brings up the sandbox's own lo.
Result<UniqueFd> OpenServicesChannel(const Plan& plan, ChildContext& ctx, UniqueFd& child_end) {
  if (plan.loopback() != Loopback::kBringUp) return UniqueFd();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot create a socket for the sandbox's services", "socketpair",
                            errno);
  }
  child_end.Reset(fds[1]);
  ctx.services_socket_fd = fds[1];
  ctx.services = plan.services();
  return UniqueFd(fds[0]);
}

// The services' sockets, in the order kernel/loopback.h gives, which the
// child sends before the rest of its set-up and then waits for the go: the
// proxy's listeners are served (Command::serve_egress) before the command
// can run. A child that failed first closed its end: the error is then its
// report's.
Result<void> ReceiveServiceSockets(int channel, const SandboxServices& services, Command& command,
                                   std::shared_ptr<DnsStub>& dns) {
  auto next = [channel] { return UniqueFd(DescriptorMessage::Receive(channel, ReceiveWait::kWait)); };
  UniqueFd udp = next();
  UniqueFd tcp = next();
  bool whole = udp && tcp;
  EgressListeners listeners;
  if (services.proxy == ProxyListeners::kHttpAndSocks) {
    listeners.http = next();
    listeners.socks = next();
    whole = whole && listeners.http && listeners.socks;
  }
  for (int i = 0; i < services.local_count; ++i) {
    UniqueFd fd = next();
    whole = whole && fd;
    listeners.local.push_back({services.local_ports[i], std::move(fd)});
  }
  for (int i = 0; i < services.captured_count; ++i) {
    UniqueFd fd = next();
    whole = whole && fd;
    listeners.captured.push_back({services.captured_ports[i], std::move(fd)});
  }
  if (!whole) {
    return Error(ErrorKind::kInternal, "the sandbox did not pass out its services' sockets; the run was stopped");
  }
  dns = std::make_unique<DnsStub>(std::move(udp), std::move(tcp), command.synthetic_names);
  if (!services.Forwards()) return {};  // the child waits for no go (exec/child.h)
  if (command.serve_egress) CORRAL_TRY(command.serve_egress(std::move(listeners)));
  const char go = 1;
  if (::send(channel, &go, 1, MSG_NOSIGNAL) != 1) {
    return Error(ErrorKind::kInternal, "the sandbox did not take its go; the run was stopped");
  }
  return {};
}

// The pty's master, which the child sent before the command's exec (so it is
// queued once the report pipe is at EOF).
Result<UniqueFd> ReceivePtyMaster(int channel) {
  UniqueFd master(DescriptorMessage::Receive(channel));
  if (!master) return Error(ErrorKind::kInternal, "the sandbox did not pass out the command's pty; the run was stopped");
  return master;
}

sock_fprog Program(std::span<const sock_filter> filter) {
  sock_fprog program = {};
  program.len = static_cast<unsigned short>(filter.size());
  program.filter = const_cast<sock_filter*>(filter.data());
  return program;
}

// Reads the child's report: 0 at EOF (the command was exec'd), the size read
// otherwise.
ssize_t ReadReport(int fd, ChildReport* report) {
  ssize_t n;
  do {
    n = ::read(fd, report, sizeof *report);
  } while (n < 0 && errno == EINTR);
  return n;
}

}  // namespace

bool ProcMountRefused(const Error& error) {
  return error.kind() == ErrorKind::kMount && error.syscall() == ChildStageName(ChildStage::kProc);
}

bool OverlayRefused(const Error& error) {
  return error.kind() == ErrorKind::kUnsupported && error.syscall() == ChildStageName(ChildStage::kOverlay);
}

Error CloneRefused(int clone_errno, const HostSupport& host) {
  if (clone_errno == EMFILE || clone_errno == ENFILE) {
    return Error(ErrorKind::kIo,
                 "cannot start the sandbox: no file descriptor is left for its process handle (too many open "
                 "files: see `ulimit -n`); the command was not run",
                 "clone", clone_errno);
  }
  if (clone_errno == EAGAIN) {
    return Error(ErrorKind::kIo,
                 "cannot start the sandbox: no process can be made (the user's process limit, `ulimit -u`, or the "
                 "kernel's); the command was not run",
                 "clone", clone_errno);
  }
  std::string where = !host.container.empty()
                          ? "corral runs in a " + host.container +
                                " container whose seccomp profile or missing capability forbids them: give it "
                                "user namespaces (docs/hosts.md: a seccomp profile that allows unshare and clone "
                                "with CLONE_NEWUSER, or a Kubernetes pod with hostUsers: false)"
                      : host.outer_seccomp_filter
                          ? "corral runs under another sandbox's seccomp filter, which forbids them"
                          : "unprivileged user namespaces may be disabled or exhausted: see `corral check`";
  return Error(ErrorKind::kNamespace,
               "namespaces: the kernel refused to create the sandbox's namespaces (" + where +
                   "); the command was not run. --best-effort runs it on the no-userns rung (docs/hosts.md), "
                   "and says what that drops, as does --accept-rung no-userns for that rung alone",
               "clone", clone_errno);
}

Error TranslateReport(const MountPlan& mounts, const ChildReport& report) {
  std::string where = mounts.Describe(report.index);
  std::string stage = ChildStageName(report.stage);
  auto err = [&](ErrorKind kind, std::string message) {
    return Error(kind, std::move(message), stage, report.error);
  };
  switch (report.stage) {
    case ChildStage::kUserns:
      if (report.error == EPERM || report.error == EACCES) {
        // The namespace exists but corral holds no capability in it: what
        // Ubuntu's AppArmor restriction does to an unconfined program.
        return err(ErrorKind::kNamespace,
                   "namespaces: a user namespace was created but corral has no capabilities inside it (its uid map "
                   "was refused), which is how kernel.apparmor_restrict_unprivileged_userns=1 (Ubuntu 23.10 and "
                   "later) treats a program no AppArmor profile allows; the command was not run. Fix: `sudo corral "
                   "setup apparmor --install` and the apparmor_parser command it prints, or set "
                   "kernel.apparmor_restrict_unprivileged_userns=0; --best-effort runs it on the no-userns rung "
                   "(docs/hosts.md), as does --accept-rung no-userns for that rung alone");
      }
      return err(ErrorKind::kNamespace, "namespaces: cannot set up the user namespace; the command was not run");
    case ChildStage::kHostname:
      return err(ErrorKind::kNamespace, "namespaces: cannot set up the user namespace; the command was not run");
    case ChildStage::kMountPrivate:
    case ChildStage::kNewRoot:
    case ChildStage::kMkdir:
    case ChildStage::kBind:
    case ChildStage::kTmpfs:
    case ChildStage::kSymlink:
    case ChildStage::kMask:
    case ChildStage::kDevpts:
    case ChildStage::kSeal:
    case ChildStage::kPivot:
      return err(ErrorKind::kMount, "mount view: cannot build the sandbox's root at " + where +
                                        "; the command was not run");
    case ChildStage::kOverlay:
      return err(ErrorKind::kUnsupported,
                 "--overlay: the kernel refused the workspace's overlay at " + where +
                     " (unprivileged overlayfs needs Linux 5.11 or later, and the state directory's filesystem "
                     "must support user extended attributes and whiteouts: ext4, xfs, btrfs, tmpfs 6.6+); the "
                     "command was not run");
    case ChildStage::kProc:
      return err(ErrorKind::kMount,
                 "mount view: cannot mount a fresh /proc (inside a container this usually means the outer /proc "
                 "is partly masked); the command was not run. Fix: Docker --security-opt systempaths=unconfined, "
                 "Kubernetes securityContext.procMount: Unmasked; --best-effort runs it on the masked-proc rung, "
                 "an empty read-only /proc (docs/hosts.md), as does --accept-rung masked-proc for that rung alone");
    case ChildStage::kOpenSource:
      return err(ErrorKind::kPolicy,
                 "policy: " + where +
                     (report.error == ENOENT || report.error == ENOTDIR
                          ? std::string(" was removed after the policy was built")
                          : report.error == ELOOP ? std::string(" now goes through a symlink")
                                                  : std::string(" can no longer be opened")) +
                     "; the command was not run");
    case ChildStage::kPinChanged:
      return Error(ErrorKind::kPolicy, "policy: " + where +
                                           " changed between the check and the spawn (another file is there now); "
                                           "the command was not run");
    case ChildStage::kMaskMoved:
      return Error(ErrorKind::kPolicy, "forbid_read: " + where +
                                           " moved after corral found it (the path to hide is gone or another file "
                                           "is there now); the command was not run");
    case ChildStage::kSetsid:
    case ChildStage::kRlimit:
    case ChildStage::kCaps:
    case ChildStage::kDumpable:
    case ChildStage::kNoNewPrivs:
    case ChildStage::kSignals:
    case ChildStage::kLifeline:
      return err(ErrorKind::kHardening, "hardening: " + stage + " failed; the command was not run");
    case ChildStage::kLandlock:
      return err(ErrorKind::kLandlock, "landlock: the kernel refused the ruleset" +
                                           (report.index >= 0 ? " for " + where : std::string()) +
                                           "; the command was not run (a Linux security module or an enclosing sandbox may forbid it: see `corral "
                                           "check`)");
    case ChildStage::kSeccomp:
    case ChildStage::kInitSeccomp:
      return err(ErrorKind::kSeccomp, "seccomp: the kernel refused the filter; the command was not run (see `corral "
                                      "check`)");
    case ChildStage::kLoopback:
      return err(ErrorKind::kNamespace,
                 "network namespace: cannot bring up lo, the sandbox's own loopback (--network none); the command "
                 "was not run");
    case ChildStage::kServiceSockets:
      return err(ErrorKind::kNamespace,
                 "network namespace: cannot bind corral's services on the sandbox's 127.0.0.1 (the name server "
                 "on port 53, the proxy of --allow-host on 3128 and 1080); the command was not run");
    case ChildStage::kChdir:
      return err(ErrorKind::kInternal, "cannot enter a working directory inside the sandbox");
    case ChildStage::kTerminal:
      return err(ErrorKind::kInternal,
                 "cannot give the command a pty of its own (stdin and stdout are a terminal); the command was "
                 "not run. With stdin or stdout a file or a pipe the command runs without one");
    case ChildStage::kFork:
      return err(ErrorKind::kInternal, "cannot fork the command inside the sandbox");
    case ChildStage::kStdio:
      return err(ErrorKind::kInternal,
                 "cannot open the sandbox's own /dev/null (or zero, full, random, urandom) for the command's stdin, "
                 "stdout or stderr, which is that device");
    case ChildStage::kExec:
      if (report.error == ENOENT) return Error(ErrorKind::kNotFound, "not found inside the sandbox");
      return err(ErrorKind::kExec, "cannot execute the command inside the sandbox");
    case ChildStage::kNone:
      break;
  }
  return err(ErrorKind::kInternal, "the sandbox child failed at an unknown stage");
}

// True when this spawn starts init in the command's nursery: it has one,
// and its plan wants exactly the nursery's namespaces, id maps and lo. A
// nursery that does not fit is dismissed here, at once.
bool TakeNurseryIfItFits(const Plan& plan, const Command& command, SpawnMode mode, const ChildContext& ctx) {
  if (command.nursery == nullptr || command.nursery->spent()) return false;
  const IdMaps& maps = command.nursery->id_maps();
  if (mode != SpawnMode::kRun || command.cgroup_fd >= 0 || ctx.userns_without_caps ||
      plan.clone_flags() != Nursery::kNamespaces || plan.loopback() != Loopback::kBringUp ||
      std::strcmp(plan.id_maps().uid_map, maps.uid_map) != 0 ||
      std::strcmp(plan.id_maps().gid_map, maps.gid_map) != 0) {
    command.nursery->Dismiss();
    return false;
  }
  return true;
}

// Init cloned by the nursery, in its namespaces with the id maps and the
// hostname in place; nullopt: clone as before.
std::optional<Nursery::Born> CloneThroughNursery(const Command& command, ChildContext& ctx) {
  if (command.nursery == nullptr || command.nursery->spent()) return std::nullopt;
  sigset_t mask;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
  ctx.identity_set = true;
  std::optional<Nursery::Born> born = command.nursery->CloneInit(ctx, mask);
  ctx.identity_set = born.has_value();
  return born;
}

// Prepares the child's context and runs the one clone.
class Spawner {
 public:
  static Result<SandboxProcess> Confined(const Plan& plan, Command& command, SpawnMode mode) {
    // Compiled only to be compared (CompileOptions::warm_etc_view): its
    // /etc bind has no tree to attach.
    if (plan.use() != PlanUse::kSpawn) {
      return Error(ErrorKind::kInternal, "a plan compiled only to compare with a warm sandbox's cannot be spawned");
    }
    if (mode != SpawnMode::kWarm && (command.argv.empty() || command.argv[0].empty())) {
      return Error(ErrorKind::kUsage, "empty command");
    }
    ChildContext ctx;
    std::vector<char*> argv, envp;
    PrepareCommand(command, ctx, argv, envp);
    // A warm init's buffers for its calls, allocated here: init has its own
    // copy after the clone and allocates nothing.
    std::unique_ptr<char[]> warm_payload;
    std::unique_ptr<char*[]> warm_strings;
    if (mode == SpawnMode::kWarm) {
      warm_payload.reset(new char[kWarmPayloadMax + 1]);
      warm_strings.reset(new char*[kWarmStringSlots]);
      ctx.warm_control_fd = command.warm_control_fd;
      ctx.warm_payload = warm_payload.get();
      ctx.warm_strings = warm_strings.get();
    }
    ctx.namespaces = plan.mechanisms().namespaces;
    ctx.id_maps = &plan.id_maps();
    ctx.loopback = plan.loopback();
    ctx.landlock = plan.mechanisms().landlock_abi > 0 ? &plan.landlock() : nullptr;
    ctx.root_landlock = plan.mounts().root_landlock;
    std::vector<MountOp> ops = plan.mounts().ops;  // the child records the fds it opens here
    ctx.ops = ops.data();
    ctx.op_count = ops.size();
    ctx.filter = Program(plan.seccomp_filter());
    ctx.init_filter = Program(plan.init_filter());
    ctx.cwd = plan.cwd().c_str();
    ctx.fallback_cwd = plan.fallback_cwd().c_str();
    ctx.probe_only = mode == SpawnMode::kProbeOnly;
    ctx.rlimits = &plan.rlimits();
#if defined(CORRAL_HOST_SIMULATION) && CORRAL_HOST_SIMULATION
    const char* without_caps = std::getenv("CORRAL_TEST_USERNS_WITHOUT_CAPS");
    ctx.userns_without_caps = without_caps != nullptr && std::string_view(without_caps) == "1";
#endif
    if (TakeNurseryIfItFits(plan, command, mode, ctx)) command.nursery->Rouse();

    CORRAL_ASSIGN_OR_RETURN(Pipe report, OpenPipe());
    CORRAL_ASSIGN_OR_RETURN(Pipe status, OpenPipe());
    CORRAL_ASSIGN_OR_RETURN(Pipe lifeline, OpenLifeline());
    ctx.report_fd = report.write.get();
    ctx.status_fd = status.write.get();
    ctx.lifeline_fd = lifeline.read.get();
    ctx.lifeline_write_fd = lifeline.write.get();
    UniqueFd pty_child_end;
    CORRAL_ASSIGN_OR_RETURN(UniqueFd pty_channel, OpenPtyChannel(command, ctx, pty_child_end));
    UniqueFd services_child_end;
    CORRAL_ASSIGN_OR_RETURN(UniqueFd services_channel, OpenServicesChannel(plan, ctx, services_child_end));
    int prepared = -1;  // a tree the plan made (confine/etc_view.h); the child closes it once attached
    for (const MountOp& op : ops) {
      if (op.Has(MountFlag::kPrepared)) prepared = op.fd;
    }
    int keep[] = {ctx.report_fd,     ctx.status_fd,     ctx.program_fd,         ctx.stderr_fd, ctx.stdin_fd,
                  ctx.stdout_fd,     ctx.pty_socket_fd, ctx.services_socket_fd, prepared,      ctx.warm_control_fd};
    std::sort(std::begin(keep), std::end(keep));  // here, not in the child
    std::copy(std::begin(keep), std::end(keep), ctx.keep_fds);
    ChildStack stack;
    CORRAL_TRY(stack.Map());
    ctx.command_stack = stack.top();

    // The sandbox's init: a copy of corral in the new namespaces, cloned
    // into the nursery's when they are the ones the plan wants.
    int pidfd = -1;
    uint64_t flags = SIGCHLD | kabi::kClonePidfd | plan.clone_flags();
    pid_t pid = -1;
    std::optional<Nursery::Born> born = CloneThroughNursery(command, ctx);
    if (born) {
      pid = born->pid;
      pidfd = born->pidfd;
    } else if (command.cgroup_fd >= 0) {
      kabi::CloneArgs args = {};
      args.flags = (flags & ~uint64_t{0xff}) | kabi::kCloneIntoCgroup;
      args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
      args.exit_signal = SIGCHLD;
      args.cgroup = static_cast<uint64_t>(command.cgroup_fd);
      pid = static_cast<pid_t>(::syscall(SYS_clone3, &args, sizeof args));
    } else {
      pid = static_cast<pid_t>(::syscall(SYS_clone, flags, 0, &pidfd, 0, 0));
    }
    if (pid == 0) RunSandboxed(ctx);
    int clone_errno = errno;
    stack.Unmap();
    if (pid < 0 && command.cgroup_fd >= 0 && clone_errno == ENOSYS) {
      // A container's seccomp profile may answer clone3 with ENOSYS.
      return Error(ErrorKind::kUnsupported,
                   "limits: the sandbox cannot start inside its cgroup: clone3 is not available here (an outer "
                   "seccomp profile?); the command was not run",
                   "clone3", clone_errno);
    }
    if (pid < 0) return CloneRefused(clone_errno, ProbeHost());
    status.write.Reset();
    SandboxProcess process;
    process.own_pid_namespace_ = ctx.namespaces;
    process.pid_ = pid;
    process.pidfd_.Reset(pidfd);
    // The lifeline's start byte (exec/child.h): the nursery's helper, which
    // shared this descriptor table, is reaped by now, so corral alone holds
    // this end while the run lasts. Without it init would wait for good.
    if (::send(lifeline.write.get(), "s", 1, MSG_NOSIGNAL) != 1) {
      int send_errno = errno;
      (void)process.Kill();
      process.Reap();
      return Error::FromErrno(ErrorKind::kInternal, "cannot start the sandbox's init", "send", send_errno);
    }
    process.lifeline_ = std::move(lifeline.write);
    process.status_ = std::move(status.read);
    report.write.Reset();
    pty_child_end.Reset();
    services_child_end.Reset();

    // Before the report: the child waits for the go once its services'
    // sockets are out.
    Result<void> services = ctx.services_socket_fd >= 0
                                ? ReceiveServiceSockets(services_channel.get(), ctx.services, command, process.dns_)
                                : Result<void>();
    ChildReport child_report;
    if (!services.ok()) {
      (void)process.Kill();
      process.Reap();  // a report, if the child failed on its own, is written before its exit
    }
    ssize_t n = ReadReport(report.read.get(), &child_report);
    if (n == 0 || (!services.ok() && n != static_cast<ssize_t>(sizeof child_report))) {
      if (!services.ok()) return std::move(services).error();
      if (ctx.pty_socket_fd >= 0) {
        CORRAL_ASSIGN_OR_RETURN(process.pty_master_, ReceivePtyMaster(pty_channel.get()));
      }
      if (mode == SpawnMode::kProbeOnly) {
        process.Reap();
        if (!WIFEXITED(process.wait_status_) || WEXITSTATUS(process.wait_status_) != 0) {
          return Error(ErrorKind::kInternal, "the sandbox probe died without a report (wait status " +
                                                 std::to_string(process.wait_status_) + ")");
        }
      }
      return process;
    }
    process.Reap();
    if (n != static_cast<ssize_t>(sizeof child_report)) {
      return Error(ErrorKind::kInternal, "the sandbox child died during set-up without a report");
    }
    return TranslateReport(plan.mounts(), child_report);
  }

  static Result<SandboxProcess> Unconfined(Command& command) {
    if (command.argv.empty() || command.argv[0].empty()) return Error(ErrorKind::kUsage, "empty command");
    ChildContext ctx;
    std::vector<char*> argv, envp;
    PrepareCommand(command, ctx, argv, envp);
    ctx.cwd = command.cwd.c_str();
    CORRAL_ASSIGN_OR_RETURN(Pipe report, OpenPipe());
    ctx.report_fd = report.write.get();
    UniqueFd pty_child_end;
    CORRAL_ASSIGN_OR_RETURN(UniqueFd pty_channel, OpenPtyChannel(command, ctx, pty_child_end));
    ChildStack stack;
    CORRAL_TRY(stack.Map());

    // The command itself, sharing corral's memory until it execs.
    int pidfd = -1;
    pid_t pid = ::clone(UnconfinedMain, stack.top(), CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &ctx, &pidfd);
    int clone_errno = errno;
    stack.Unmap();
    if (pid < 0) return Error::FromErrno(ErrorKind::kInternal, "cannot start the command", "clone", clone_errno);
    SandboxProcess process;
    process.unconfined_ = true;
    process.pid_ = pid;
    process.pidfd_.Reset(pidfd);
    report.write.Reset();
    pty_child_end.Reset();

    ChildReport child_report;
    ssize_t n = ReadReport(report.read.get(), &child_report);
    if (n == 0 && pty_channel) {
      CORRAL_ASSIGN_OR_RETURN(process.pty_master_, ReceivePtyMaster(pty_channel.get()));
    }
    if (n == 0) return process;
    process.Reap();
    if (n != static_cast<ssize_t>(sizeof child_report)) {
      return Error(ErrorKind::kInternal, "the sandbox child died during set-up without a report");
    }
    if (child_report.stage == ChildStage::kExec && child_report.error == ENOENT) {
      return Error(ErrorKind::kNotFound, "not found");
    }
    return Error(ErrorKind::kExec, "cannot execute the command", ChildStageName(child_report.stage),
                 child_report.error);
  }
};

sigset_t ForwardedSignals() {
  sigset_t set;
  ::sigemptyset(&set);
  for (int sig : kForwardedSignals) ::sigaddset(&set, sig);
  return set;
}

sigset_t BlockForwardedSignals() {
  sigset_t set = ForwardedSignals();
  ::sigaddset(&set, SIGCHLD);
  ::sigaddset(&set, SIGWINCH);  // a window size change, for the pty relay
  // A SIGPIPE (a write of corral's own to a stderr whose reader left, or
  // another process's kill) must not end corral mid-run, before the sweep
  // and the reap of init: held, the write fails with EPIPE, and the signal
  // takes effect when the caller's mask comes back.
  ::sigaddset(&set, SIGPIPE);
  sigset_t previous;
  ::pthread_sigmask(SIG_BLOCK, &set, &previous);
  return previous;
}

SandboxProcess& SandboxProcess::operator=(SandboxProcess&& other) noexcept {
  if (this != &other) {
    if (pid_ > 0 && !reaped_) {
      (void)Kill();
      Reap();
    }
    unconfined_ = other.unconfined_;
    own_pid_namespace_ = other.own_pid_namespace_;
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::move(other.pidfd_);
    lifeline_ = std::move(other.lifeline_);
    status_ = std::move(other.status_);
    pty_master_ = std::move(other.pty_master_);
    dns_ = std::move(other.dns_);
    call_ = std::move(other.call_);
    status_taken_ = other.status_taken_;
    command_status_ = other.command_status_;
    reaped_ = std::exchange(other.reaped_, true);
    wait_status_ = other.wait_status_;
  }
  return *this;
}

SandboxProcess::~SandboxProcess() {
  if (pid_ > 0 && !reaped_) {
    (void)Kill();
    Reap();
  }
}

Result<void> SandboxProcess::Kill() {
  if (reaped_) return {};
  if (call_) return status_taken_ ? Result<void>() : call_->Kill();  // the call's tree; its warm sandbox stays
  // In its own PID namespace the tree dies with init. Without one (best
  // effort, or unconfined) the process group is all corral can name.
  if (!own_pid_namespace_ && ::kill(-pid_, SIGKILL) != 0 && errno != ESRCH) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot kill the process group", "kill", errno);
  }
  if (::syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0) != 0 && errno != ESRCH) {
    return Error::FromErrno(ErrorKind::kInternal, "cannot kill the sandbox", "pidfd_send_signal", errno);
  }
  return {};
}

Result<void> SandboxProcess::KillConcurrently() {
  if (call_) return call_->Kill();
  return Kill();
}

Result<void> SandboxProcess::Forward(int signal) {
  if (reaped_) return {};
  if (call_) return call_->Forward(signal);
  // An unconfined command: to its process group, as a terminal does. A
  // sandbox: to init, which passes it to the command's process group.
  long rc = unconfined_ ? ::kill(-pid_, signal) : ::syscall(SYS_pidfd_send_signal, pidfd_.get(), signal, nullptr, 0);
  if (rc != 0 && errno != ESRCH) return Error::FromErrno(ErrorKind::kInternal, "cannot forward a signal", "kill", errno);
  return {};
}

bool SandboxProcess::TakeStatus() {
  if (status_taken_) return command_status_.has_value();
  status_taken_ = true;
  int status = 0;
  ssize_t n;
  do {
    n = ::read(status_.get(), &status, sizeof status);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof status)) return false;
  command_status_ = status;
  return true;
}

void SandboxProcess::Release() {
  if (call_) return Reap();  // the status is taken: nothing waits
  if (emptied()) reaped_ = true;
}

std::optional<int> SandboxProcess::CommandStatus() const {
  if (command_status_) return command_status_;
  if (!reaped_) return std::nullopt;
  if (unconfined_) return wait_status_;
  if (status_taken_) return std::nullopt;
  int status = 0;
  ssize_t n;
  do {
    n = ::read(status_.get(), &status, sizeof status);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof status)) return std::nullopt;
  return status;
}

void SandboxProcess::Reap() {
  if (reaped_ || pid_ <= 0) return;
  if (call_) {
    // A warm call: its init stays; its status (or EOF, when init died) says
    // the call's tree is gone.
    TakeStatus();
    reaped_ = true;
    call_->Ended();
    return;
  }
  while (::waitpid(pid_, &wait_status_, __WALL) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

Result<SandboxProcess> Spawn(const Plan& plan, Command& command, SpawnMode mode) {
  return Spawner::Confined(plan, command, mode);
}

Result<SandboxProcess> SpawnUnconfined(Command& command) { return Spawner::Unconfined(command); }

}  // namespace corral
