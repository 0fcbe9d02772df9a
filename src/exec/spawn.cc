#include "exec/spawn.h"

#include <fcntl.h>
#include <linux/filter.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "kernel/child_report.h"
#include "kernel/hardening.h"
#include "kernel/kernel_abi.h"
#include "base/mutant.h"
#include "kernel/landlock.h"
#include "kernel/mounts.h"
#include "kernel/namespaces.h"
#include "kernel/seccomp.h"
#include "exec/env.h"

namespace corral {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kChildFailureExit = 125;
constexpr size_t kChildStackSize = 256 * 1024;

// Everything the children read. Built in the parent; init gets a copy of
// it, and the command shares init's copy until it execs.
struct ChildContext {
  const Plan* plan = nullptr;  // null: unconfined
  MountOp* ops = nullptr;
  size_t op_count = 0;
  sock_fprog filter = {};
  char* const* argv = nullptr;
  char* const* envp = nullptr;
  const char* cwd = nullptr;
  const char* fallback_cwd = nullptr;
  const char* path_env = nullptr;
  int program_fd = -1;
  int stderr_fd = -1;
  int report_fd = -1;
  int status_fd = -1;     // init writes the command's wait status here
  int lifeline_fd = -1;
  char* command_stack = nullptr;  // top of the stack the command's clone runs on
  sigset_t original_mask = {};
  mode_t umask = 022;
  bool probe_only = false;
};

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
    first = std::max(first, fd + 1);
  }
  ::syscall(SYS_close_range, first, ~0u, 0);
}

// execvp without allocation: tries each PATH entry in turn.
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

[[noreturn]] void RunCommand(const ChildContext& ctx) {
  if (::sigprocmask(SIG_SETMASK, &ctx.original_mask, nullptr) != 0) ChildFail(ctx, ChildStage::kSignals, errno);
  ::umask(ctx.umask);
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

// danger-full-access: its own session, nothing else.
[[noreturn]] void RunUnconfined(const ChildContext& ctx);
int UnconfinedMain(void* arg) { RunUnconfined(*static_cast<const ChildContext*>(arg)); }

[[noreturn]] void RunUnconfined(const ChildContext& ctx) {
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) ChildFail(ctx, ChildStage::kLifeline, errno);
  if (::setsid() < 0) ChildFail(ctx, ChildStage::kSetsid, errno);
  if (::chdir(ctx.cwd) != 0) ChildFail(ctx, ChildStage::kChdir, errno);
  RunCommand(ctx);
}

[[noreturn]] void RunInit(const ChildContext& ctx);

[[noreturn]] void RunSandboxed(ChildContext& ctx) {
  const Plan& plan = *ctx.plan;
  const Mechanisms& m = plan.mechanisms();
  if (!MutantActive(Mutant::kLifeline) && ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kLifeline, errno);
  }
  struct pollfd lifeline = {ctx.lifeline_fd, POLLIN, 0};
  if (::poll(&lifeline, 1, 0) != 0) ::_exit(kChildFailureExit);  // corral is already gone
  int keep[] = {ctx.report_fd, ctx.status_fd, ctx.program_fd, ctx.stderr_fd};
  std::sort(std::begin(keep), std::end(keep));
  if (!MutantActive(Mutant::kFdClose)) CloseAllExcept(keep, 4);
  ::umask(0);

  if (m.namespaces) {
    if (int err = WriteIdMapsChild(plan.id_maps()); err != 0) ChildFail(ctx, ChildStage::kUserns, err);
    if (::sethostname("corral", 6) != 0) ChildFail(ctx, ChildStage::kHostname, errno);
  }
  int ruleset = -1;
  if (m.landlock_abi > 0) {
    ruleset = LandlockCreateRulesetChild(plan.landlock());
    if (ruleset < 0) ChildFail(ctx, ChildStage::kLandlock, -ruleset);
  }
  ChildReport report;
  int err = m.namespaces
                ? ApplyMountsChild(ctx.ops, ctx.op_count, ruleset, plan.mounts().root_landlock, &report)
                : AddHostRulesChild(ctx.ops, ctx.op_count, ruleset, &report);
  if (err != 0) ChildFail(ctx, report.stage, report.error, report.index);

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
  if (m.seccomp && !MutantActive(Mutant::kSeccomp)) {
    if (int e = InstallSeccompChild(&ctx.filter); e != 0) ChildFail(ctx, ChildStage::kSeccomp, e);
  }
  if (ctx.probe_only) ::_exit(0);
  RunInit(ctx);
}

int CommandMain(void* arg) {
  const ChildContext& ctx = *static_cast<const ChildContext*>(arg);
  // Its own process group, so init can signal the command's whole tree
  // without signalling itself.
  ::setpgid(0, 0);
  // Without a PID namespace (best effort) init's death does not end the
  // command by itself: tie the command to init.
  if (!ctx.plan->mechanisms().namespaces && ::prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kLifeline, errno);
  }
  RunCommand(ctx);
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

// The sandbox's PID 1: corral's trusted code, not the command. It holds
// PR_SET_PDEATHSIG, which the command cannot clear; forwards signals to the
// command's process group (the command leads one of its own); reaps orphans;
// and when the command exits, empties the namespace, reports, and exits.
[[noreturn]] void RunInit(const ChildContext& ctx) {
  // Init is a copy of corral's memory: nothing of it may be read from inside.
  if (!MutantActive(Mutant::kInitDumpable) && ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
    ChildFail(ctx, ChildStage::kCaps, errno);
  }
  // PID 1 drops signals it has no handler for: catch what it forwards, and
  // keep it blocked for sigwaitinfo.
  sigset_t waitset;
  ::sigemptyset(&waitset);
  for (int sig : kForwarded) ::sigaddset(&waitset, sig);
  ::sigaddset(&waitset, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &waitset, nullptr);
  struct sigaction action = {};
  action.sa_handler = NoopHandler;
  for (int sig : kForwarded) ::sigaction(sig, &action, nullptr);
  ::sigaction(SIGCHLD, &action, nullptr);

  // The command shares init's memory until it execs: no page tables copied.
  pid_t command = ::clone(CommandMain, ctx.command_stack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                          const_cast<ChildContext*>(&ctx));
  if (command < 0) ChildFail(ctx, ChildStage::kFork, errno);
  ::close(ctx.report_fd);  // the command's copy closed at exec: EOF tells corral
  if (ctx.stderr_fd >= 0) ::close(ctx.stderr_fd);
  if (ctx.program_fd >= 0) ::close(ctx.program_fd);
  for (;;) {
    siginfo_t info;
    int sig = ::sigwaitinfo(&waitset, &info);
    if (sig < 0) continue;
    if (sig != SIGCHLD) {
      // The command's process group: it and its children.
      if (!MutantActive(Mutant::kSignalForward)) ::kill(-command, sig);
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

Error TranslateReport(const Plan& plan, const ChildReport& report) {
  std::string where = plan.mounts().Describe(report.index);
  std::string stage = ChildStageName(report.stage);
  auto err = [&](ErrorKind kind, std::string message) {
    return Error(kind, std::move(message), stage, report.error);
  };
  switch (report.stage) {
    case ChildStage::kUserns:
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
    case ChildStage::kProc:
      return err(ErrorKind::kMount,
                 "mount view: cannot mount a fresh /proc (inside a container this usually means the outer /proc "
                 "is partly masked); the command was not run");
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
      return err(ErrorKind::kSeccomp, "seccomp: the kernel refused the filter; the command was not run (see `corral "
                                      "check`)");
    case ChildStage::kChdir:
      return err(ErrorKind::kInternal, "cannot enter a working directory inside the sandbox");
    case ChildStage::kFork:
      return err(ErrorKind::kInternal, "cannot fork the command inside the sandbox");
    case ChildStage::kExec:
      if (report.error == ENOENT) return Error(ErrorKind::kNotFound, "not found inside the sandbox");
      return err(ErrorKind::kExec, "cannot execute the command inside the sandbox");
    case ChildStage::kNone:
      break;
  }
  return err(ErrorKind::kInternal, "the sandbox child failed at an unknown stage");
}

}  // namespace

// Prepares the child's context and runs the one clone.
class Spawner {
 public:
  static Result<SandboxProcess> Run(const Plan* plan, Command& command, bool probe_only) {
    if (command.argv.empty() || command.argv[0].empty()) return Error(ErrorKind::kUsage, "empty command");
    ChildContext ctx;
    ctx.plan = plan;
    ctx.probe_only = probe_only;
    std::vector<MountOp> ops;
    if (plan != nullptr) {
      const Policy& policy = plan->policy();
      ops = plan->mounts().ops;  // the child records the fds it opens here
      ctx.ops = ops.data();
      ctx.op_count = ops.size();
      if (plan->mechanisms().seccomp) {
        SeccompOptions options{policy.network() == NetworkMode::kAll};
        std::span<const sock_filter> filter = EmbeddedSeccompFilter(options);
        if (SeccompFilterMutated()) {
          // The embedded filter is always whole: a mutant's is compiled now.
          static std::vector<sock_filter> mutant;
          CORRAL_ASSIGN_OR_RETURN(mutant, BuildSeccompFilter(options));
          filter = mutant;
        }
        ctx.filter.len = static_cast<unsigned short>(filter.size());
        ctx.filter.filter = const_cast<sock_filter*>(filter.data());
      }
      ctx.fallback_cwd = policy.workspace() ? policy.workspace()->path.c_str() : "/";
    }
    std::vector<char*> argv;
    for (std::string& arg : command.argv) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    ctx.path_env = kDefaultPath;
    for (std::string& entry : command.env) {
      envp.push_back(entry.data());
      if (entry.starts_with("PATH=")) ctx.path_env = entry.c_str() + 5;
    }
    envp.push_back(nullptr);
    ctx.argv = argv.data();
    ctx.envp = envp.data();
    ctx.cwd = command.cwd.c_str();
    ctx.program_fd = command.program.get();
    ctx.stderr_fd = command.stderr_fd;
    mode_t mask = ::umask(022);
    ::umask(mask);
    ctx.umask = mask;
    ::pthread_sigmask(SIG_SETMASK, nullptr, &ctx.original_mask);
    for (int sig : kForwarded) ::sigdelset(&ctx.original_mask, sig);
    ::sigdelset(&ctx.original_mask, SIGCHLD);

    int report[2], status[2], lifeline[2];
    if (::pipe2(report, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0) {
      return Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno);
    }
    UniqueFd report_read(report[0]), report_write(report[1]);
    UniqueFd status_read(status[0]), status_write(status[1]);
    if (::pipe2(lifeline, O_CLOEXEC) != 0) {
      return Error::FromErrno(ErrorKind::kInternal, "cannot create a pipe", "pipe2", errno);
    }
    UniqueFd lifeline_read(lifeline[0]), lifeline_write(lifeline[1]);
    ctx.report_fd = report_write.get();
    ctx.status_fd = status_write.get();
    ctx.lifeline_fd = lifeline_read.get();

    // A stack for the clone that shares memory (the command's, or the
    // unconfined child's), with a guard page below it.
    void* stack = ::mmap(nullptr, kChildStackSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK,
                         -1, 0);
    if (stack == MAP_FAILED) return Error::FromErrno(ErrorKind::kInternal, "cannot map a stack", "mmap", errno);
    ::mprotect(stack, 4096, PROT_NONE);
    ctx.command_stack = static_cast<char*>(stack) + kChildStackSize;

    int pidfd = -1;
    pid_t pid;
    if (plan == nullptr) {
      // Unconfined: the command itself, sharing corral's memory until it execs.
      pid = ::clone(UnconfinedMain, ctx.command_stack, CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD, &ctx, &pidfd);
    } else {
      // The sandbox's init: a copy of corral in the new namespaces.
      uint64_t flags = SIGCHLD | kabi::kClonePidfd;
      if (plan->mechanisms().namespaces) {
        flags |= SandboxCloneFlags(plan->policy().network() == NetworkMode::kNone);
      }
      pid = static_cast<pid_t>(::syscall(SYS_clone, flags, 0, &pidfd, 0, 0));
      if (pid == 0) RunSandboxed(ctx);
    }
    int clone_errno = errno;
    ::munmap(stack, kChildStackSize);  // init has its own copy
    if (pid < 0) {
      if (plan == nullptr) return Error::FromErrno(ErrorKind::kInternal, "cannot start the command", "clone", clone_errno);
      return Error(ErrorKind::kNamespace,
                   "namespaces: the kernel refused to create the sandbox's namespaces (unprivileged user namespaces "
                   "may be disabled or exhausted, or corral runs inside another sandbox: see `corral check`); the "
                   "command was not run. --best-effort runs it without namespaces, and says what that drops",
                   "clone", clone_errno);
    }
    status_write.Reset();
    SandboxProcess process;
    process.unconfined_ = plan == nullptr;
    process.own_pid_namespace_ = plan != nullptr && plan->mechanisms().namespaces;
    process.pid_ = pid;
    process.pidfd_.Reset(pidfd);
    if (plan != nullptr) process.status_ = std::move(status_read);
    report_write.Reset();

    ChildReport child_report;
    ssize_t n;
    do {
      n = ::read(report_read.get(), &child_report, sizeof child_report);
    } while (n < 0 && errno == EINTR);
    if (n == 0) {
      if (probe_only) {
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
    if (plan == nullptr) {
      if (child_report.stage == ChildStage::kExec && child_report.error == ENOENT) {
        return Error(ErrorKind::kNotFound, "not found");
      }
      return Error(ErrorKind::kExec, "cannot execute the command", ChildStageName(child_report.stage),
                   child_report.error);
    }
    return TranslateReport(*plan, child_report);
  }
};

sigset_t ForwardedSignals() {
  sigset_t set;
  ::sigemptyset(&set);
  for (int sig : kForwarded) ::sigaddset(&set, sig);
  return set;
}

sigset_t BlockForwardedSignals() {
  sigset_t set = ForwardedSignals();
  ::sigaddset(&set, SIGCHLD);
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
    status_ = std::move(other.status_);
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

Result<void> SandboxProcess::Forward(int signal) {
  if (reaped_) return {};
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
  while (::waitpid(pid_, &wait_status_, __WALL) < 0 && errno == EINTR) {
  }
  reaped_ = true;
}

Result<SandboxProcess> Spawn(const Plan& plan, Command& command, bool probe_only) {
  return Spawner::Run(&plan, command, probe_only);
}

Result<SandboxProcess> SpawnUnconfined(Command& command) { return Spawner::Run(nullptr, command, false); }

}  // namespace corral
