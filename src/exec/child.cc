#include "exec/child.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>

#include "base/mutant.h"
#include "exec/descriptor_message.h"
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

// The last steps of the command's process, confined or not: its signal mask
// and umask back, stderr, descriptors closed on exec, exec.
[[noreturn]] void ExecCommand(const ChildContext& ctx) {
  if (::sigprocmask(SIG_SETMASK, &ctx.original_mask, nullptr) != 0) ChildFail(ctx, ChildStage::kSignals, errno);
  ::umask(ctx.umask);
  if (ctx.stdin_fd >= 0 && ::dup2(ctx.stdin_fd, STDIN_FILENO) < 0) ChildFail(ctx, ChildStage::kExec, errno);
  if (ctx.stdout_fd >= 0 && ::dup2(ctx.stdout_fd, STDOUT_FILENO) < 0) ChildFail(ctx, ChildStage::kExec, errno);
  if (ctx.stderr_fd >= 0 && ::dup2(ctx.stderr_fd, STDERR_FILENO) < 0) ChildFail(ctx, ChildStage::kExec, errno);
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

}  // namespace

int UnconfinedMain(void* arg) { RunUnconfined(*static_cast<const ChildContext*>(arg)); }

[[noreturn]] void RunSandboxed(const ChildContext& ctx) {
  if (!MutantActive(Mutant::kLifeline) && ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kLifeline, errno);
  }
  struct pollfd lifeline = {ctx.lifeline_fd, POLLIN, 0};
  if (::poll(&lifeline, 1, 0) != 0) ::_exit(kChildFailureExit);  // corral is already gone
  if (!MutantActive(Mutant::kFdClose)) CloseAllExcept(ctx.keep_fds, sizeof ctx.keep_fds / sizeof ctx.keep_fds[0]);
  ::umask(0);

  if (ctx.namespaces) {
    if (ctx.userns_without_caps) {
      struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
      struct __user_cap_data_struct none[2] = {};
      if (::syscall(SYS_capset, &header, none) != 0) ChildFail(ctx, ChildStage::kUserns, errno);
    }
    if (int e = WriteIdMapsChild(*ctx.id_maps); e != 0) ChildFail(ctx, ChildStage::kUserns, e);
    if (::sethostname("corral", 6) != 0) ChildFail(ctx, ChildStage::kHostname, errno);
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
