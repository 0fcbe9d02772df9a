#include "exec/child.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "base/cpu_relax.h"
#include "base/mutant.h"
#include "exec/descriptor_message.h"
#include "exec/view_devices.h"
#include "exec/warm_protocol.h"
#include "kernel/hardening.h"
#include "kernel/kernel_abi.h"
#include "kernel/seccomp.h"

namespace corral {
namespace {

[[noreturn]] void ChildFail(const ChildContext& ctx, ChildStage stage, int err, int index = -1) {
  ChildReport report;
  report.stage = stage;
  report.error = err;
  report.index = index;
  ssize_t ignored = ::write(ctx.report_fd, &report, sizeof report);
  (void)ignored;
  ::_exit(kChildFailureExit);
}

// Closes every descriptor >= 3 except those in `keep` (sorted ascending).
void CloseAllExcept(const int* keep, size_t count) {
  unsigned first = 3;
  for (size_t i = 0; i < count; ++i) {
    if (keep[i] < 3) continue;
    unsigned fd = static_cast<unsigned>(keep[i]);
    if (fd > first) ::syscall(SYS_close_range, first, fd - 1, 0);
    if (fd + 1 > first) first = fd + 1;
  }
  ::syscall(SYS_close_range, first, ~0u, 0);
}

// The command's own pty (when asked for): opened at /dev/ptmx, which in a
// mount view is the sandbox's private devpts instance; the slave is opened
// from the master (TIOCGPTPEER, no path to race), gets the caller's modes
// and window size, and replaces each descriptor 0-2 that was the caller's
// terminal, so that nothing here holds that terminal any more. The master
// goes to corral, which relays it; no copy of it stays in the sandbox.
int OpenPtyChild(const ChildContext& ctx) {
  if (ctx.pty_socket_fd < 0) return 0;
  int master = ::open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return errno;
  int err = 0;
  int unlock = 0;
  int slave = -1;
  if (::ioctl(master, TIOCSPTLCK, &unlock) != 0) err = errno;
  if (err == 0 && (slave = ::ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0) err = errno;
  if (err == 0 && ::tcsetattr(slave, TCSANOW, &ctx.pty_modes) != 0) err = errno;
  if (err == 0 && ::ioctl(slave, TIOCSWINSZ, &ctx.pty_size) != 0) err = errno;
  if (err == 0) err = DescriptorMessage::Send(ctx.pty_socket_fd, master);
  ::close(master);
  ::close(ctx.pty_socket_fd);
  for (int fd = 0; err == 0 && fd <= 2; ++fd) {
    if ((ctx.pty_descriptors & (1u << fd)) == 0) continue;
    if (fd > 0 && MutantActive(Mutant::kPtyStdio)) continue;
    if (::dup2(slave, fd) < 0) err = errno;
  }
  if (slave >= 0) ::close(slave);
  return err;
}

// The sockets of corral's services on the sandbox's lo (the name server,
// the egress proxy's listeners), bound here and served by corral outside.
int PassServiceSocketsChild(const ChildContext& ctx) {
  if (ctx.services_socket_fd < 0) return 0;
  int fds[kSandboxServiceSockets];
  int err = BindSandboxServicesChild(ctx.services, fds);
  for (int i = 0; i < kSandboxServiceSockets && err == 0; ++i) {
    if (fds[i] >= 0) err = DescriptorMessage::Send(ctx.services_socket_fd, fds[i]);
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
  return err;
}

// The go for the command, once corral serves the egress proxy's listeners
// it passed out (a proxy that failed to start stops the run before the
// command exists). The name server alone needs no go: corral serves it
// after Spawn returns, and the command's queries wait in its sockets.
int AwaitServicesGoChild(const ChildContext& ctx) {
  if (ctx.services_socket_fd < 0) return 0;
  char go = 0;
  ssize_t n = 1;
  if (ctx.services.Forwards() && !MutantActive(Mutant::kServicesGo)) {
    do {
      n = ::read(ctx.services_socket_fd, &go, 1);
    } while (n < 0 && errno == EINTR);
  }
  int err = n == 1 ? 0 : n < 0 ? errno : ECONNRESET;
  ::close(ctx.services_socket_fd);
  return err;
}

// The command leads a session of its own with its pty (already on stdin)
// as the controlling terminal, and so the terminal's foreground group: a
// shell gets job control, ^C and ^Z reach it through the pty.
int TakeTerminalChild() {
  if (::setsid() < 0) return errno;
  return ::ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0 ? errno : 0;
}

// execvp without allocation: tries each PATH entry in turn. Returns the
// errno to report (exec returns only on failure).
int ExecSearch(const ChildContext& ctx) {
  const char* file = ctx.argv[0];
  if (ctx.program_fd >= 0) {
    ::syscall(SYS_execveat, ctx.program_fd, "", ctx.argv, ctx.envp, AT_EMPTY_PATH);
    return errno;
  }
  if (::strchr(file, '/') != nullptr) {
    ::execve(file, ctx.argv, ctx.envp);
    return errno;
  }
  size_t file_length = ::strlen(file);
  int result = ENOENT;
  const char* p = ctx.path_env;
  char buffer[PATH_MAX];
  for (;;) {
    const char* end = ::strchrnul(p, ':');
    size_t dir_length = static_cast<size_t>(end - p);
    if (dir_length + file_length + 2 <= sizeof buffer) {
      if (dir_length == 0) {
        buffer[0] = '.';
        dir_length = 1;
      } else {
        ::memcpy(buffer, p, dir_length);
      }
      buffer[dir_length] = '/';
      ::memcpy(buffer + dir_length + 1, file, file_length + 1);
      ::execve(buffer, ctx.argv, ctx.envp);
      // Keep the most telling error: a permission problem beats "not found".
      if (errno == EACCES || errno == EPERM) {
        result = errno;
      } else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP && result == ENOENT) {
        result = errno;
      }
    }
    if (*end == '\0') break;
    p = end + 1;
  }
  return result;
}

// A device of the view (/dev/null, the commonest stdin of all, zero, full,
// random, urandom) given as the command's stdio is the host's node, reached
// through the caller's own mount, where its owner may chmod it: by fchmod,
// or by chmod of /proc/self/fd/0, which Landlock has no right for. For a
// root caller that owner is the command, and `chmod 0600 /proc/self/fd/0`
// under `< /dev/null` left the host a /dev/null only root could use. Each
// such descriptor is opened anew from the view's read-only bind of the same
// node (exec/view_devices.h), where a chmod fails with EROFS; 0 or an errno.
// Other files on stdio are the caller's own: their modes are put back after
// the run (exec/stdio_modes.h).
int ReopenViewDevicesChild() {
  for (int slot = STDIN_FILENO; slot <= STDERR_FILENO; ++slot) {
    struct stat given;
    if (::fstat(slot, &given) != 0 || !S_ISCHR(given.st_mode)) continue;
    const char* path = ViewDevicePath(given.st_rdev);
    if (path == nullptr) continue;
    int flags = ::fcntl(slot, F_GETFL);
    if (flags < 0) return errno;
    int fd = ::open(path, (flags & (O_ACCMODE | O_APPEND | O_NONBLOCK)) | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat opened;
    int err = ::fstat(fd, &opened) != 0                                      ? errno
              : !S_ISCHR(opened.st_mode) || opened.st_rdev != given.st_rdev ? ENODEV
              : ::dup2(fd, slot) < 0                                        ? errno
                                                                            : 0;
    ::close(fd);
    if (err != 0) return err;
  }
  return 0;
}

// The last steps of the command's process, confined or not: its signal mask
// and umask back, stderr, descriptors closed on exec, exec.
[[noreturn]] void ExecCommand(const ChildContext& ctx) {
  if (::sigprocmask(SIG_SETMASK, &ctx.original_mask, nullptr) != 0) ChildFail(ctx, ChildStage::kSignals, errno);
  ::umask(ctx.umask);
  if (ctx.stdin_fd >= 0 && ::dup2(ctx.stdin_fd, STDIN_FILENO) < 0) ChildFail(ctx, ChildStage::kExec, errno);
  if (ctx.stdout_fd >= 0 && ::dup2(ctx.stdout_fd, STDOUT_FILENO) < 0) ChildFail(ctx, ChildStage::kExec, errno);
  if (ctx.stderr_fd >= 0 && ::dup2(ctx.stderr_fd, STDERR_FILENO) < 0) ChildFail(ctx, ChildStage::kExec, errno);
  if (ctx.namespaces && !MutantActive(Mutant::kStdioDevices)) {
    if (int e = ReopenViewDevicesChild(); e != 0) ChildFail(ctx, ChildStage::kStdio, e);
  }
  // Every inherited descriptor but stdio closes at exec; the report pipe
  // closes too, which tells the parent the exec happened.
  if (MutantActive(Mutant::kFdClose)) {
    if (ctx.report_fd >= 0) ::fcntl(ctx.report_fd, F_SETFD, FD_CLOEXEC);
  } else if (::syscall(SYS_close_range, 3u, ~0u, kabi::kCloseRangeCloexec) != 0) {
    for (int fd = 3; fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
  }
  ChildFail(ctx, ChildStage::kExec, ExecSearch(ctx));
}

// The confined command: PID 2 of the sandbox, cloned by init.
int CommandMain(void* arg) {
  const ChildContext& ctx = *static_cast<const ChildContext*>(arg);
  // Its own process group (with a pty, its own session), so init can signal
  // the command's whole tree without signalling itself.
  if (ctx.pty_descriptors == 0) {
    ::setpgid(0, 0);
  } else if (int e = TakeTerminalChild(); e != 0) {
    ChildFail(ctx, ChildStage::kTerminal, e);
  }
  // Without a PID namespace (best effort) init's death does not end the
  // command by itself: tie the command to init.
  if (!ctx.namespaces && ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kLifeline, errno);
  }
  // The resource limits, the command's alone: init keeps its own.
  if (ctx.rlimits != nullptr) {
    if (int e = ApplyRlimitsChild(*ctx.rlimits); e != 0) ChildFail(ctx, ChildStage::kRlimit, e);
  }
  ExecCommand(ctx);
}

void NoopHandler(int) {}

// The forwarded signals back to SIG_DFL in a child (its own copy of the
// handlers: cloned without CLONE_SIGHAND). 0 or errno.
int DefaultForwardedSignalsChild() {
  struct sigaction action = {};
  action.sa_handler = SIG_DFL;
  for (int sig : kForwardedSignals) {
    if (::sigaction(sig, &action, nullptr) != 0) return errno;
  }
  return 0;
}

// As the PID namespace's init: kills every other process in it and reaps
// them, so that when init reports the command's status nothing of the
// sandbox runs any more, and corral need not wait for the kernel to free the
// namespaces after init exits. All of them have init's uid and no
// capabilities, so none can refuse SIGKILL; each reap is followed by another
// kill(-1) for a child forked meanwhile, and ECHILD means none is left (every
// process in the namespace descends from init). Without a PID namespace of
// its own (best effort) kill(-1) would reach the caller's other processes, so
// it does nothing there.
void EmptyNamespace() {
  if (::getpid() != 1 || MutantActive(Mutant::kInitReap)) return;
  sigset_t child;
  ::sigemptyset(&child);
  ::sigaddset(&child, SIGCHLD);
  for (;;) {
    ::kill(-1, SIGKILL);
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG | __WALL);
    if (pid > 0 || (pid < 0 && errno == EINTR)) continue;
    if (pid < 0) return;  // ECHILD: init is alone
    struct timespec tick = {0, 10 * 1000 * 1000};
    ::sigtimedwait(&child, nullptr, &tick);
  }
}

// Catches what init forwards and SIGCHLD, and keeps them blocked for
// sigwaitinfo: PID 1 drops signals it has no handler for.
int CatchSignals(sigset_t* waitset) {
  ::sigemptyset(waitset);
  for (int sig : kForwardedSignals) ::sigaddset(waitset, sig);
  ::sigaddset(waitset, SIGCHLD);
  if (::sigprocmask(SIG_BLOCK, waitset, nullptr) != 0) return errno;
  struct sigaction action = {};
  action.sa_handler = NoopHandler;
  for (int sig : kForwardedSignals) {
    if (::sigaction(sig, &action, nullptr) != 0) return errno;
  }
  if (::sigaction(SIGCHLD, &action, nullptr) != 0) return errno;
  return 0;
}

// The sandbox's PID 1: corral's trusted code, not the command. It holds
// PR_SET_PDEATHSIG, which the command cannot clear; forwards signals to the
// command's process group (the command leads one of its own); reaps orphans;
// and when the command exits, empties the namespace, reports, and exits.
// Once the command is cloned, init runs under its own allowlist filter too.
[[noreturn]] void RunInit(const ChildContext& ctx) {
  // Init is a copy of corral's memory: nothing of it may be read from inside.
  if (!MutantActive(Mutant::kInitDumpable) && ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kDumpable, errno);
  }
  sigset_t waitset;
  if (int e = CatchSignals(&waitset); e != 0) ChildFail(ctx, ChildStage::kSignals, e);

  // The command shares init's memory until it execs: no page tables copied.
  pid_t command = ::clone(CommandMain, ctx.command_stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                          const_cast<ChildContext*>(&ctx));
  if (command < 0) ChildFail(ctx, ChildStage::kFork, errno);
  // From here init only waits, forwards, reports and exits. The command has
  // exec'd (or failed) and does not inherit this filter.
  if (ctx.init_filter.len > 0 && !MutantActive(Mutant::kInitSeccomp)) {
    if (int e = InstallSeccompChild(&ctx.init_filter); e != 0) ChildFail(ctx, ChildStage::kInitSeccomp, e);
  }
  ::close(ctx.report_fd);  // the command's copy closed at exec: EOF tells corral
  if (ctx.stderr_fd >= 0) ::close(ctx.stderr_fd);
  if (ctx.stdout_fd >= 0 && ctx.stdout_fd != ctx.stderr_fd) ::close(ctx.stdout_fd);
  if (ctx.stdin_fd >= 0) ::close(ctx.stdin_fd);
  if (ctx.program_fd >= 0) ::close(ctx.program_fd);
  for (;;) {
    siginfo_t info;
    int sig = ::sigwaitinfo(&waitset, &info);
    if (sig < 0) continue;
    if (sig != SIGCHLD) {
      // The command's process group: it and its children. Each forwarded
      // signal ends a run, so it is followed by SIGCONT, as the kernel does
      // on a terminal's hangup: a command that stopped itself still gets it.
      if (!MutantActive(Mutant::kSignalForward)) {
        ::kill(-command, sig);
        if (!MutantActive(Mutant::kRepeatedSignalKill)) ::kill(-command, SIGCONT);
      }
      continue;
    }
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) break;
      if (pid == command) {
        EmptyNamespace();
        ssize_t ignored = ::write(ctx.status_fd, &status, sizeof status);
        (void)ignored;
        if (MutantActive(Mutant::kInitReap)) continue;  // the rest run on, and init with them
        ::_exit(0);
      }
    }
  }
}

// ---- A warm sandbox's init (SpawnMode::kWarm, exec/warm_sandbox.h). It has
// set up the namespaces, the mount view and lo, dropped its capabilities,
// set no_new_privs and installed the command's seccomp filter (once: each
// call inherits it, and installing it per call cost more than the rest of
// the call), and holds the Landlock ruleset unenforced. It has no signal
// handler:
// SIGCHLD is blocked and read from a signalfd, so a signal a call sends it
// can only wake it (and under Landlock's signal scoping, ABI 6, none
// arrives); as PID 1 of the namespace it gets no other signal from inside.

// One call: the context its process reads (argv, envp, cwd and descriptors
// point into init's buffers) and the ruleset its fresh domain comes from.
struct WarmCall {
  ChildContext ctx;
  int ruleset = -1;
};

// A call's process, cloned by init (sharing its memory until exec): a
// session and process group of its own, a fresh Landlock domain from the
// ruleset, the working directory inside the view, exec. It inherits from
// init no capability, no_new_privs and the seccomp filter (exactly init's
// one: a filter or a Landlock layer call N adds dies with call N, and call
// N+1 is a fork of init again); every descriptor >= 3 (the control
// channel, the ruleset) closes at exec.
int WarmCallMain(void* arg) {
  const WarmCall& call = *static_cast<const WarmCall*>(arg);
  const ChildContext& ctx = call.ctx;
  if (::setsid() < 0) ChildFail(ctx, ChildStage::kSetsid, errno);
  // The signals a call can be sent start at their defaults, as a cold
  // command's do (its init catches them, and exec resets what was caught):
  // an ignore inherited from the harness would make an interrupt do nothing.
  if (int e = DefaultForwardedSignalsChild(); e != 0) ChildFail(ctx, ChildStage::kSignals, e);
  if (call.ruleset >= 0 && !MutantActive(Mutant::kWarmLandlock)) {
    if (int e = LandlockRestrictSelfChild(call.ruleset); e != 0) ChildFail(ctx, ChildStage::kLandlock, e);
  }
  if (::chdir(ctx.cwd) != 0) ChildFail(ctx, ChildStage::kChdir, errno);
  // The plan's resource limits, the call's alone, as a cold command's
  // (CommandMain): init keeps its own, so every call starts from them.
  if (ctx.rlimits != nullptr) {
    if (int e = ApplyRlimitsChild(*ctx.rlimits); e != 0) ChildFail(ctx, ChildStage::kRlimit, e);
  }
  ExecCommand(ctx);
}

// EOF on the control channel (corral closed it, or died): the sandbox ends,
// and the kernel kills every process of the namespace with its init.
[[noreturn]] void EndWarmInit() { ::_exit(0); }

void CloseFds(const int* fds, int count) {
  for (int i = 0; i < count; ++i) ::close(fds[i]);
}

// One request and the descriptors it carries (close-on-exec). 1: a whole
// request; -1: a malformed one (its descriptors closed); EOF or a broken
// channel end the sandbox.
int ReceiveWarmRequest(int channel, WarmRequest* request, int* fds, int* count) {
  alignas(struct cmsghdr) char control[CMSG_SPACE(sizeof(int) * kWarmCallFds)];
  struct iovec data = {request, sizeof *request};
  struct msghdr message = {};
  message.msg_iov = &data;
  message.msg_iovlen = 1;
  message.msg_control = control;
  message.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(channel, &message, MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n <= 0) EndWarmInit();
  *count = 0;
  for (struct cmsghdr* header = CMSG_FIRSTHDR(&message); header != nullptr;
       header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) continue;
    size_t carried = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < carried; ++i) {
      int fd = -1;
      ::memcpy(&fd, CMSG_DATA(header) + i * sizeof(int), sizeof fd);
      if (*count < kWarmCallFds) {
        fds[(*count)++] = fd;
      } else {
        ::close(fd);
      }
    }
  }
  if (n != static_cast<ssize_t>(sizeof *request) || (message.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0) {
    CloseFds(fds, *count);
    *count = 0;
    return -1;
  }
  return 1;
}

void SendWarmReply(int channel, const WarmReply& reply) {
  ssize_t n;
  do {
    n = ::send(channel, &reply, sizeof reply, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof reply)) EndWarmInit();
}

// Reads a call's `payload` bytes into init's buffer and points argv, envp
// and cwd into it. False when they are not argc + envc + 1 NUL-terminated
// strings.
bool ReceiveWarmPayload(int channel, const WarmRequest& request, const ChildContext& ctx, WarmCall* call) {
  if (request.payload > kWarmPayloadMax) EndWarmInit();  // corral never sends one: a broken channel
  size_t got = 0;
  while (got < request.payload) {
    size_t want = request.payload - got;
    if (want > kWarmChunk) want = kWarmChunk;
    ssize_t n = ::recv(channel, ctx.warm_payload + got, want, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) EndWarmInit();
    got += static_cast<size_t>(n);
  }
  ctx.warm_payload[got] = '\0';
  size_t strings = static_cast<size_t>(request.argc) + request.envc + 1;
  if (request.argc == 0 || strings + 2 > kWarmStringSlots) return false;
  char** slot = ctx.warm_strings;
  char* p = ctx.warm_payload;
  char* end = ctx.warm_payload + got;
  call->ctx.path_env = ctx.path_env;
  for (size_t i = 0; i < strings; ++i) {
    if (p >= end) return false;
    char* text = p;
    p += ::strlen(p) + 1;
    if (p > end) return false;
    if (i < request.argc) {
      *slot++ = text;
      if (i + 1 == request.argc) *slot++ = nullptr;
    } else if (i < request.argc + request.envc) {
      *slot++ = text;
      if (::strncmp(text, "PATH=", 5) == 0) call->ctx.path_env = text + 5;
      if (i + 1 == request.argc + request.envc) *slot++ = nullptr;
    } else {
      call->ctx.cwd = text;
    }
  }
  if (request.envc == 0) *slot++ = nullptr;
  if (p != end) return false;
  call->ctx.argv = ctx.warm_strings;
  call->ctx.envp = ctx.warm_strings + request.argc + 1;
  return true;
}

// Runs one call to its end: clone, the reply, then signals and kills from
// corral until the call's process exits; then the namespace is emptied and
// the status written.
void RunWarmCall(const ChildContext& ctx, int ruleset, int reaper, const WarmRequest& request, int* fds,
                 int count) {
  const int channel = ctx.warm_control_fd;
  const bool pinned = (static_cast<uint32_t>(request.flags) & static_cast<uint32_t>(WarmCallFlags::kPinnedProgram)) != 0;
  WarmReply reply;
  reply.sequence = request.sequence;
  WarmCall call;
  call.ctx = ctx;
  call.ruleset = ruleset;
  bool whole = count == (pinned ? 5 : 4);
  whole = ReceiveWarmPayload(channel, request, ctx, &call) && whole;
  if (!whole) {
    CloseFds(fds, count);
    reply.report.stage = ChildStage::kExec;
    reply.report.error = EINVAL;
    SendWarmReply(channel, reply);
    return;
  }
  call.ctx.stdin_fd = fds[0];
  call.ctx.stdout_fd = fds[1];
  call.ctx.stderr_fd = fds[2];
  const int status_fd = fds[3];
  call.ctx.program_fd = pinned ? fds[4] : -1;
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    reply.report.stage = ChildStage::kFork;
    reply.report.error = errno;
    CloseFds(fds, count);
    SendWarmReply(channel, reply);
    return;
  }
  call.ctx.report_fd = report[1];
  pid_t pid = ::clone(WarmCallMain, ctx.command_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &call);
  int clone_errno = errno;
  ::close(report[1]);
  ::close(fds[0]);
  ::close(fds[1]);
  ::close(fds[2]);
  if (pinned) ::close(fds[4]);
  ChildReport failed;
  ssize_t n = pid < 0 ? 0 : ::read(report[0], &failed, sizeof failed);
  ::close(report[0]);
  if (pid < 0 || n == static_cast<ssize_t>(sizeof failed)) {
    if (pid < 0) {
      failed.stage = ChildStage::kFork;
      failed.error = clone_errno;
    }
    EmptyNamespace();
    ::close(status_fd);
    reply.report = failed;
    SendWarmReply(channel, reply);
    return;
  }
  reply.started = 1;
  SendWarmReply(channel, reply);
  for (;;) {
    struct pollfd watch[2] = {{channel, POLLIN, 0}, {reaper, POLLIN, 0}};
    if (::poll(watch, 2, -1) < 0) continue;
    if (watch[0].revents != 0) {
      WarmRequest control;
      int carried[kWarmCallFds];
      int carried_count = 0;
      int got = ReceiveWarmRequest(channel, &control, carried, &carried_count);
      CloseFds(carried, carried_count);
      if (got > 0 && control.sequence == request.sequence) {
        if (control.kind == WarmRequestKind::kSignal && control.signal > 0 && control.signal < NSIG) {
          ::kill(-pid, control.signal);
          ::kill(-pid, SIGCONT);
        } else if (control.kind == WarmRequestKind::kKill) {
          ::kill(-1, SIGKILL);  // every process but init: the call's whole tree
        }
      }
    }
    if (watch[1].revents != 0) {
      struct signalfd_siginfo info;
      while (::read(reaper, &info, sizeof info) > 0) {
      }
      for (;;) {
        int status = 0;
        pid_t done = ::waitpid(-1, &status, WNOHANG | __WALL);
        if (done <= 0) break;
        if (done != pid) continue;
        EmptyNamespace();
        ssize_t ignored = ::write(status_fd, &status, sizeof status);
        (void)ignored;
        ::close(status_fd);
        return;
      }
    }
  }
}

// Init's own rlimits, which every call inherits before it applies the
// policy's. A call may lower them (prlimit on PID 1 asks only for the same
// uid, no capability), and init cannot raise them back: a sandbox whose
// limits changed ends after that call, so no later call inherits limits a
// call before it chose.
struct InitLimits {
  struct rlimit limit[RLIM_NLIMITS];
};

void ReadInitLimits(InitLimits* limits) {
  for (int resource = 0; resource < RLIM_NLIMITS; ++resource) {
    if (::getrlimit(static_cast<__rlimit_resource>(resource), &limits->limit[resource]) != 0) {
      limits->limit[resource] = {0, 0};
    }
  }
}

bool InitLimitsChanged(const InitLimits& start) {
  InitLimits now;
  ReadInitLimits(&now);
  for (int resource = 0; resource < RLIM_NLIMITS; ++resource) {
    if (now.limit[resource].rlim_cur != start.limit[resource].rlim_cur ||
        now.limit[resource].rlim_max != start.limit[resource].rlim_max) {
      return true;
    }
  }
  return false;
}

// The warm init's loop: one call at a time, until the channel closes.
[[noreturn]] void RunWarmInit(const ChildContext& ctx, int ruleset) {
  if (!MutantActive(Mutant::kInitDumpable) && ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kDumpable, errno);
  }
  sigset_t child;
  ::sigemptyset(&child);
  ::sigaddset(&child, SIGCHLD);
  if (::sigprocmask(SIG_BLOCK, &child, nullptr) != 0) ChildFail(ctx, ChildStage::kSignals, errno);
  int reaper = ::signalfd(-1, &child, SFD_CLOEXEC | SFD_NONBLOCK);
  if (reaper < 0) ChildFail(ctx, ChildStage::kSignals, errno);
  if (::chdir("/") != 0) ChildFail(ctx, ChildStage::kChdir, errno);
  // The command's filter, which every call inherits: the loop below makes
  // only calls a command may make too.
  if (ctx.filter.len > 0 && !MutantActive(Mutant::kWarmSeccomp)) {
    if (int e = InstallSeccompChild(&ctx.filter); e != 0) ChildFail(ctx, ChildStage::kSeccomp, e);
  }
  InitLimits limits;
  ReadInitLimits(&limits);
  // Set up: EOF on the report pipe tells corral the sandbox takes calls.
  ::close(ctx.status_fd);
  ::close(ctx.report_fd);
  for (;;) {
    WarmRequest request;
    int fds[kWarmCallFds];
    int count = 0;
    if (ReceiveWarmRequest(ctx.warm_control_fd, &request, fds, &count) < 0) continue;
    if (request.kind != WarmRequestKind::kCall) {  // a stale signal or kill for a call that has ended
      CloseFds(fds, count);
      continue;
    }
    RunWarmCall(ctx, ruleset, reaper, request, fds, count);
    if (InitLimitsChanged(limits) && !MutantActive(Mutant::kWarmRlimits)) EndWarmInit();
  }
}

// danger-full-access: its own session, nothing else.
[[noreturn]] void RunUnconfined(const ChildContext& ctx) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) ChildFail(ctx, ChildStage::kLifeline, errno);
  if (::setsid() < 0) ChildFail(ctx, ChildStage::kSetsid, errno);
  if (int e = OpenPtyChild(ctx); e != 0) ChildFail(ctx, ChildStage::kTerminal, e);
  if (ctx.pty_descriptors != 0 && ::ioctl(STDIN_FILENO, TIOCSCTTY, 0) != 0) {
    ChildFail(ctx, ChildStage::kTerminal, errno);
  }
  if (::chdir(ctx.cwd) != 0) ChildFail(ctx, ChildStage::kChdir, errno);
  ExecCommand(ctx);
}

// Looks for the start byte this many times (a pause between) before init
// sleeps in read: it comes some tens of microseconds after init begins
// (corral reaps the nursery's helper first), less than waking a sleeping
// CPU took here. At most about half a millisecond.
constexpr int kStartByteLooks = 1000;

// The lifeline's start byte (exec/child.h): true when corral sent it and
// still holds its end.
bool CorralStillThereChild(const ChildContext& ctx) {
  if (ctx.lifeline_fd < 0) return false;
  if (ctx.lifeline_write_fd >= 0) ::close(ctx.lifeline_write_fd);
  char start = 0;
  ssize_t n = -1;
  for (int looks = 0; looks < kStartByteLooks; ++looks) {
    n = ::recv(ctx.lifeline_fd, &start, 1, MSG_DONTWAIT);
    if (n >= 0 || (errno != EAGAIN && errno != EINTR)) break;
    CpuRelax();
  }
  while (n < 0 && (errno == EAGAIN || errno == EINTR)) n = ::read(ctx.lifeline_fd, &start, 1);
  if (n != 1) return false;  // no start byte: corral is gone
  struct pollfd lifeline = {ctx.lifeline_fd, POLLIN, 0};
  return ::poll(&lifeline, 1, 0) == 0;  // a hang-up: corral died after the go
}

}  // namespace

int UnconfinedMain(void* arg) { RunUnconfined(*static_cast<const ChildContext*>(arg)); }

[[noreturn]] void RunSandboxed(const ChildContext& ctx) {
  // A warm sandbox outlives the thread that started it: its lifeline is
  // the control channel, whose EOF ends it (RunWarmInit).
  const bool warm = ctx.warm_control_fd >= 0;
  if (!warm && !MutantActive(Mutant::kLifeline) && ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kLifeline, errno);
  }
  if (!CorralStillThereChild(ctx)) ::_exit(kChildFailureExit);
  if (!MutantActive(Mutant::kFdClose)) CloseAllExcept(ctx.keep_fds, sizeof ctx.keep_fds / sizeof ctx.keep_fds[0]);
  ::umask(0);

  if (ctx.namespaces) {
    if (ctx.userns_without_caps) {
      struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
      struct __user_cap_data_struct none[2] = {};
      if (::syscall(SYS_capset, &header, none) != 0) ChildFail(ctx, ChildStage::kUserns, errno);
    }
    if (!ctx.identity_set) {
      if (int e = WriteIdMapsChild(*ctx.id_maps); e != 0) ChildFail(ctx, ChildStage::kUserns, e);
      if (::sethostname(kSandboxHostname, sizeof kSandboxHostname - 1) != 0) {
        ChildFail(ctx, ChildStage::kHostname, errno);
      }
    }
  }
  // While every capability of the user namespace is still held.
  if (ctx.loopback == Loopback::kBringUp) {
    if (int e = BringUpLoopbackChild(); e != 0) ChildFail(ctx, ChildStage::kLoopback, e);
  }
  if (int e = PassServiceSocketsChild(ctx); e != 0) ChildFail(ctx, ChildStage::kServiceSockets, e);
  int ruleset = -1;
  if (ctx.landlock != nullptr) {
    if (int e = LandlockCreateRulesetChild(*ctx.landlock, &ruleset); e != 0) ChildFail(ctx, ChildStage::kLandlock, e);
  }
  ChildReport report;
  int err = ctx.namespaces ? ApplyMountsChild(ctx.ops, ctx.op_count, ruleset, ctx.root_landlock, &report)
                           : AddHostRulesChild(ctx.ops, ctx.op_count, ruleset, &report);
  if (err != 0) ChildFail(ctx, report.stage, report.error, report.index);
  if (int e = OpenPtyChild(ctx); e != 0) ChildFail(ctx, ChildStage::kTerminal, e);

  if (int e = NewSessionChild(); e != 0) ChildFail(ctx, ChildStage::kSetsid, e);
  if (int e = DisableCoreDumpsChild(); e != 0) ChildFail(ctx, ChildStage::kRlimit, e);
  if (MutantActive(Mutant::kCapabilities)) {
    // Keep the sets; no_new_privs below still lets seccomp install.
  } else if (int e = DropCapabilitiesChild(); e != 0) {
    ChildFail(ctx, ChildStage::kCaps, e);
  }
  if (int e = SetNoNewPrivsChild(); e != 0) ChildFail(ctx, ChildStage::kNoNewPrivs, e);
  if (warm) {
    if (int e = AwaitServicesGoChild(ctx); e != 0) ChildFail(ctx, ChildStage::kServiceSockets, e);
    RunWarmInit(ctx, ruleset);
  }
  if (ruleset >= 0 && !MutantActive(Mutant::kLandlock)) {
    if (int e = LandlockRestrictSelfChild(ruleset); e != 0) ChildFail(ctx, ChildStage::kLandlock, e);
    ::close(ruleset);
  }
  if (::chdir(ctx.cwd) != 0 && ::chdir(ctx.fallback_cwd) != 0 && ::chdir("/") != 0) {
    ChildFail(ctx, ChildStage::kChdir, errno);
  }
  if (ctx.filter.len > 0 && !MutantActive(Mutant::kSeccomp)) {
    if (int e = InstallSeccompChild(&ctx.filter); e != 0) ChildFail(ctx, ChildStage::kSeccomp, e);
  }
  if (int e = AwaitServicesGoChild(ctx); e != 0) ChildFail(ctx, ChildStage::kServiceSockets, e);
  if (ctx.probe_only) ::_exit(0);
  RunInit(ctx);
}

}  // namespace corral
