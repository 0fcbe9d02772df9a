// The warm path (exec/warm_sandbox.h): one sandbox set up once, many calls.
// Each test judges from outside: /proc of the host for the processes and
// the layers of a call, canaries on the host's filesystem, a listener on
// the host. Real kernel, as root and as uid 65534 (scripts/test.sh).
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <dirent.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audit/audit.h"
#include "base/unique_fd.h"
#include "confine/host.h"
#include "confine/plan.h"
#include "exec/spawn.h"
#include "exec/supervisor.h"
#include "exec/warm_sandbox.h"
#include "gate/admit.h"
#include "harness.h"
#include "policy/policy.h"
#include "policy/policy_file.h"
#include "run/run.h"

namespace corral_it {
namespace {

class NobodyAnswers : public corral::Approver {
 public:
  corral::Result<corral::ApprovalAnswer> Request(const corral::ApprovalRequest&) override {
    return corral::Error(corral::ErrorKind::kDenied, "nobody answers here");
  }
};

struct CallResult {
  corral::SupervisedExit exit;
  std::string out;
};

// How many processes have `parent` as their parent (from the host's /proc).
int ChildrenOf(pid_t parent) {
  int count = 0;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return -1;
  while (struct dirent* entry = ::readdir(dir)) {
    pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::optional<std::string> ppid = StatusField(pid, "PPid");
    if (ppid && std::atoi(ppid->c_str()) == parent) ++count;
  }
  ::closedir(dir);
  return count;
}

int OpenDescriptors() {
  int count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

class Warm : public ::testing::Test {
 protected:
  void SetUp() override { StartWith(corral::NetworkMode::kNone); }

  // `more` adds to the policy (limits, ...).
  void StartWith(corral::NetworkMode network, const std::function<void(corral::PolicyBuilder&)>& more = {}) {
    warm_.reset();
    corral::Result<corral::HostContext> host = corral::CaptureHostContext();
    ASSERT_TRUE(host.ok()) << host.error().ToString();
    corral::PolicyBuilder builder(*host);
    builder.Workspace(workspace_.path()).AllowExec(ProbesDir()).Network(network);
    if (more) more(builder);
    corral::Result<corral::Policy> policy = builder.Build();
    ASSERT_TRUE(policy.ok()) << policy.error().ToString();
    policy_.emplace(std::move(policy).value());
    corral::Result<std::unique_ptr<corral::WarmSandbox>> warm = corral::StartWarm(*policy_);
    ASSERT_TRUE(warm.ok()) << warm.error().ToString();
    warm_ = std::move(warm).value();
  }

  // A call's command in the workspace: stdout and stderr into `out`.
  corral::Command CommandOf(const std::vector<std::string>& argv, int out,
                            std::vector<std::string> env = {"PATH=/usr/bin:/bin"}) const {
    corral::Command command;
    command.argv = argv;
    command.env = std::move(env);
    command.cwd = workspace_.path();
    command.stdout_fd = out;
    command.stderr_fd = out;
    command.stdin_fd = null_.get();
    return command;
  }

  // One call: stdout into a memory file the test reads back; stderr too.
  CallResult Call(const std::vector<std::string>& argv, std::vector<std::string> env = {"PATH=/usr/bin:/bin"},
                  std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    CallResult result;
    corral::UniqueFd out(::memfd_create("warm-out", MFD_CLOEXEC));
    corral::Command command = CommandOf(argv, out.get(), std::move(env));
    corral::Result<corral::SandboxProcess> call = warm_->Run(command);
    EXPECT_TRUE(call.ok()) << call.error().ToString();
    if (!call.ok()) return result;
    corral::SuperviseOptions options;
    options.forward_signals = false;
    options.timeout = timeout;
    corral::Result<corral::SupervisedExit> exit = corral::Supervise(*call, options);
    EXPECT_TRUE(exit.ok()) << exit.error().ToString();
    call->Reap();
    if (exit.ok()) result.exit = *exit;
    char buffer[65536];
    ssize_t n = ::pread(out.get(), buffer, sizeof buffer, 0);
    if (n > 0) result.out.assign(buffer, static_cast<size_t>(n));
    return result;
  }

  corral::RunResult RunConfined(const std::vector<std::string>& argv, const corral::Policy& policy) {
    corral::gate::AdmitRequest request;
    request.argv = argv;
    corral::Result<corral::gate::PolicyFile> file =
        corral::gate::PolicyFile::Load(corral::SerializePolicyFile(policy, argv), argv, policy.host());
    if (!file.ok()) {
      ADD_FAILURE() << file.error().ToString();
      return corral::RunResult{};
    }
    request.policy = std::move(file).value();
    corral::AuditTrail trail = corral::AuditTrail::Discard();
    request.trail = &trail;
    NobodyAnswers nobody;
    corral::Result<corral::gate::AdmittedRun> admitted = corral::gate::Admit(std::move(request), nobody);
    if (!admitted.ok()) {
      ADD_FAILURE() << "not admitted: " << admitted.error().ToString();
      return corral::RunResult{};
    }
    corral::RunOptions options;
    options.forward_signals = false;
    options.state_home = state_.path();
    options.warm = warm_.get();
    options.stdin_fd = null_.get();
    return corral::RunConfined(std::move(admitted).value(), options);
  }

  TempDir workspace_{"corral-ws"};
  TempDir outside_{"corral-outside"};
  TempDir state_{"corral-state"};
  corral::UniqueFd null_{::open("/dev/null", O_RDWR | O_CLOEXEC)};
  std::optional<corral::Policy> policy_;
  std::unique_ptr<corral::WarmSandbox> warm_;
};

// A process a call daemonised (setsid, reparented to init) is killed and
// reaped before the call's status comes back: the host's /proc shows
// nothing of it, and init has no child left.
TEST_F(Warm, ADaemonOfOneCallIsGoneBeforeTheNext) {
  const std::string marker = "987.25";
  CallResult first = Call({"/bin/sh", "-c", "setsid -f sleep " + marker + "; sleep 0.2; echo started"});
  EXPECT_EQ(first.exit.kind, corral::SupervisedExit::Kind::kExited);
  EXPECT_EQ(first.out, "started\n");
  EXPECT_TRUE(ProcessesMatching(CommandLine({"sleep", marker})).empty()) << "call 1's daemon outlived it";
  EXPECT_EQ(ChildrenOf(warm_->pid()), 0);
  // Counted by the shell itself (a glob, no child): init and sh only.
  CallResult second = Call({"/bin/sh", "-c", "set -- /proc/[0-9]*; echo $#"});
  EXPECT_EQ(second.exit.code, 0);
  EXPECT_EQ(second.out, "2\n") << "init and sh only";
}

// Each call's process, seen from the host while it runs: the seccomp filter
// in force (one filter, mode 2), no capability, no_new_privs, and a
// session and process group of its own.
TEST_F(Warm, EachCallRunsUnderTheFilterInItsOwnSessionSeenFromOutside) {
  for (int round = 0; round < 3; ++round) {
    const std::string marker = "876.5" + std::to_string(round);
    corral::UniqueFd out(::memfd_create("warm-out", MFD_CLOEXEC));
    corral::Command command = CommandOf({"/bin/sleep", marker}, out.get());
    corral::Result<corral::SandboxProcess> call = warm_->Run(command);
    ASSERT_TRUE(call.ok()) << call.error().ToString();
    std::vector<pid_t> found;
    ASSERT_TRUE(WaitFor([&] { return !(found = ProcessesMatching(CommandLine({"/bin/sleep", marker}))).empty(); }, 10s));
    pid_t pid = found.front();
    EXPECT_EQ(StatusField(pid, "Seccomp"), "2");
    EXPECT_EQ(StatusField(pid, "Seccomp_filters"), "1");
    EXPECT_EQ(StatusField(pid, "NoNewPrivs"), "1");
    EXPECT_EQ(StatusField(pid, "CapEff"), "0000000000000000");
    EXPECT_EQ(StatusField(pid, "CapBnd"), "0000000000000000");
    EXPECT_EQ(::getsid(pid), pid) << "the call leads its own session";
    EXPECT_EQ(::getpgid(pid), pid) << "and its own process group";
    EXPECT_NE(::getsid(pid), ::getsid(warm_->pid()));
    ASSERT_TRUE(call->Kill().ok());
    call->Reap();
    EXPECT_TRUE(ProcessesMatching(CommandLine({"/bin/sleep", marker})).empty());
  }
}

// Call N stacks a seccomp filter and a Landlock layer of its own (the
// latter denies reading any file); call N+1 has neither: the base filter
// count, and the file call N's layer denied is readable where the policy
// allows it.
TEST_F(Warm, ACallsOwnLandlockAndSeccompLayersDoNotCarryOver) {
  workspace_.Write("readme", "warm\n");
  CallResult stacked = Call({ProbePath("extra_layers"), workspace_ / "readme"});
  EXPECT_EQ(stacked.exit.code, 0) << stacked.out;
  EXPECT_EQ(stacked.out, "filters=2 read=denied\n");
  CallResult next = Call({"/bin/sh", "-c", "grep Seccomp_filters /proc/self/status; cat " + workspace_ / "readme"});
  EXPECT_EQ(next.exit.code, 0) << next.out;
  EXPECT_EQ(next.out, "Seccomp_filters:\t1\nwarm\n");
  CallResult again = Call({ProbePath("extra_layers"), workspace_ / "readme"});
  EXPECT_EQ(again.out, "filters=2 read=denied\n") << "call N's layers stacked on N+2";
}

// The environment of a call is the one it was given, nothing of the call
// before it.
TEST_F(Warm, TheEnvironmentOfOneCallDoesNotLeakIntoTheNext) {
  CallResult first = Call({"/usr/bin/env"}, {"PATH=/usr/bin:/bin", "WARM_SECRET=call-one"});
  EXPECT_EQ(first.out, "PATH=/usr/bin:/bin\nWARM_SECRET=call-one\n");
  CallResult second = Call({"/bin/sh", "-c", "export WARM_LEAK=1; /usr/bin/env"}, {"PATH=/usr/bin:/bin"});
  EXPECT_EQ(second.out.find("WARM_SECRET"), std::string::npos) << second.out;
  CallResult third = Call({"/usr/bin/env"}, {"ONLY=this"});
  EXPECT_EQ(third.out, "ONLY=this\n");
}

// Writes outside the grants are denied in every call, judged by the host's
// filesystem: no canary.
TEST_F(Warm, WritesOutsideTheGrantsAreDeniedInEveryCall) {
  for (int round = 0; round < 3; ++round) {
    const std::string canary = outside_ / ("canary" + std::to_string(round));
    CallResult write = Call({"/bin/sh", "-c", "echo x > " + canary + "; echo x > /usr/warm-canary; touch " +
                                                  workspace_ / "ok" + std::to_string(round)});
    EXPECT_FALSE(Exists(canary)) << "call " << round << " wrote outside its grants";
    EXPECT_FALSE(Exists("/usr/warm-canary"));
    EXPECT_TRUE(Exists(workspace_ / "ok" + std::to_string(round))) << write.out;
  }
}

// Under --network all only Landlock's scope keeps a call from the host's
// abstract unix sockets: a fresh domain per call keeps it in every call.
TEST_F(Warm, EachCallsLandlockDomainKeepsTheHostsAbstractSocketsOut) {
  StartWith(corral::NetworkMode::kAll);
  std::string name = RandomToken("corral-warm-abstract");
  Listener listener = Listener::UnixAbstract(name);
  for (int round = 0; round < 2; ++round) {
    CallResult probe = Call({ProbePath("unix_connect"), "@" + name});
    EXPECT_EQ(probe.exit.code, kProbeBlocked) << probe.out;
  }
  EXPECT_FALSE(listener.GotSomething());
}

// A call killed mid-way (here by its deadline) takes its whole tree,
// daemons included; the sandbox takes the next call.
TEST_F(Warm, KillingACallKillsItsTreeAndTheSandboxRunsTheNext) {
  const std::string marker = "765.125";
  CallResult killed = Call({"/bin/sh", "-c", "setsid -f sleep " + marker + "; sleep " + marker}, {"PATH=/usr/bin:/bin"},
                           std::chrono::milliseconds(500));
  EXPECT_EQ(killed.exit.kind, corral::SupervisedExit::Kind::kTimedOut);
  EXPECT_TRUE(ProcessesMatching(CommandLine({"sleep", marker})).empty());
  EXPECT_EQ(ChildrenOf(warm_->pid()), 0);
  CallResult next = Call({"/bin/echo", "next"});
  EXPECT_EQ(next.exit.code, 0);
  EXPECT_EQ(next.out, "next\n");
}

// 1000 calls in a row leave no descriptor in this process and no process
// in the sandbox.
TEST_F(Warm, AThousandCallsLeaveNothingBehind) {
  CallResult warmup = Call({"/bin/true"});
  int before = OpenDescriptors();
  for (int i = 0; i < 1000; ++i) {
    CallResult call = Call({"/bin/true"});
    ASSERT_EQ(call.exit.kind, corral::SupervisedExit::Kind::kExited) << "call " << i;
    ASSERT_EQ(call.exit.code, 0) << "call " << i;
  }
  EXPECT_EQ(OpenDescriptors(), before);
  EXPECT_EQ(ChildrenOf(warm_->pid()), 0);
  EXPECT_EQ(ChildrenOf(::getpid()), 1) << "init only: no zombie, no stray";
  EXPECT_EQ(warm_->calls(), 1001u);
}

// Through RunConfined: the same run, warm; a policy whose plan differs is
// refused with its code and runs nothing.
TEST_F(Warm, RunConfinedRunsWarmAndRefusesAChangedPolicy) {
  corral::RunResult run = RunConfined({"/usr/bin/touch", workspace_ / "warm-ran"}, *policy_);
  ASSERT_EQ(run.source, corral::RunResult::Source::kCommand) << (run.error ? run.error->ToString() : "");
  EXPECT_EQ(run.exit_status, 0);
  EXPECT_TRUE(Exists(workspace_ / "warm-ran"));

  corral::Result<corral::HostContext> host = corral::CaptureHostContext();
  ASSERT_TRUE(host.ok());
  corral::PolicyBuilder wider(*host);
  wider.Workspace(workspace_.path()).AllowExec(ProbesDir()).AllowWrite(outside_.path());
  corral::Result<corral::Policy> changed = wider.Build();
  ASSERT_TRUE(changed.ok()) << changed.error().ToString();
  corral::RunResult refused = RunConfined({"/usr/bin/touch", outside_ / "canary"}, *changed);
  EXPECT_EQ(refused.source, corral::RunResult::Source::kCorral);
  ASSERT_TRUE(refused.error.has_value());
  EXPECT_EQ(refused.error->code(), "policy_changed") << refused.error->ToString();
  EXPECT_FALSE(Exists(outside_ / "canary"));
}

// Close kills the sandbox and reaps its init; every later call fails with
// its code.
TEST_F(Warm, CloseEndsTheSandboxAndLaterCallsFail) {
  pid_t init = warm_->pid();
  warm_->Close();
  warm_->Close();
  EXPECT_FALSE(Exists("/proc/" + std::to_string(init))) << "init is left (a zombie?)";
  corral::Command command;
  command.argv = {"/bin/true"};
  command.cwd = workspace_.path();
  corral::Result<corral::SandboxProcess> call = warm_->Run(command);
  ASSERT_FALSE(call.ok());
  EXPECT_EQ(call.error().code(), "warm_closed");
}

// A second call while the first runs is refused; a cwd outside the view
// fails the call, not the sandbox.
TEST_F(Warm, OneCallAtATimeAndTheWorkingDirectoryMustBeInTheView) {
  corral::Command first;
  first.argv = {"/bin/sleep", "30"};
  first.cwd = workspace_.path();
  first.stdin_fd = null_.get();
  corral::Result<corral::SandboxProcess> running = warm_->Run(first);
  ASSERT_TRUE(running.ok()) << running.error().ToString();
  corral::Command second;
  second.argv = {"/bin/true"};
  second.cwd = workspace_.path();
  second.stdin_fd = null_.get();
  corral::Result<corral::SandboxProcess> refused = warm_->Run(second);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), "warm_busy");
  ASSERT_TRUE(running->Kill().ok());
  running->Reap();
  second.cwd = outside_.path();
  corral::Result<corral::SandboxProcess> outside = warm_->Run(second);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().syscall(), "chdir") << outside.error().ToString();
  CallResult after = Call({"/bin/echo", "fine"});
  EXPECT_EQ(after.out, "fine\n");
}

// The plan's rlimits hold in every call, as in a cold command: judged on
// the host (the file's size on disk) and by the probe's own EMFILE count.
TEST_F(Warm, EveryCallRunsUnderThePlansRlimits) {
  StartWith(corral::NetworkMode::kNone,
            [](corral::PolicyBuilder& builder) { builder.MaxFileSize(1024 * 1024).MaxOpenFiles(16); });
  ASSERT_TRUE(warm_);
  for (int round = 0; round < 2; ++round) {
    CallResult big = Call({"/bin/sh", "-c", "exec head -c 4M /dev/zero > big"});
    EXPECT_EQ(big.exit.kind, corral::SupervisedExit::Kind::kSignaled) << big.out;
    EXPECT_EQ(big.exit.signal, SIGXFSZ) << big.out;
    struct stat st = {};
    ASSERT_EQ(::stat((workspace_ / "big").c_str(), &st), 0);
    EXPECT_EQ(st.st_size, 1024 * 1024);
    ASSERT_EQ(::unlink((workspace_ / "big").c_str()), 0);
    CallResult many = Call({ProbePath("open_many"), "1000"});
    EXPECT_NE(many.out.find("opened 13: Too many open files"), std::string::npos) << many.out;
  }
  // The same policy through RunConfined: the limits are part of the
  // fingerprint, and the record names the one that hit.
  corral::RunResult run = RunConfined({"/bin/sh", "-c", "exec head -c 4M /dev/zero > big"}, *policy_);
  EXPECT_EQ(run.source, corral::RunResult::Source::kCommand) << (run.error ? run.error->ToString() : "");
  EXPECT_EQ(run.exit_status, 128 + SIGXFSZ);
  ASSERT_TRUE(run.limit_hit.has_value());
  EXPECT_EQ(run.limit_hit->name, "file_size");
}

// A plan that needs a cgroup of its own (a host that offers one) is not
// started warm: its limits bound one run's whole sandbox, and it runs cold.
TEST_F(Warm, APlanThatNeedsACgroupIsRefusedAndRunsCold) {
  corral::HostSupport host = corral::ProbeHost();
  host.cgroup_offer = corral::CgroupOffer{
      .parent = "/sys/fs/cgroup/corral-test-offer", .pids = true, .memory = true, .cpu = false, .enable = false, .detail = "offered"};
  corral::Result<corral::HostContext> context = corral::CaptureHostContext();
  ASSERT_TRUE(context.ok()) << context.error().ToString();
  corral::PolicyBuilder builder(*context);
  builder.Workspace(workspace_.path()).Network(corral::NetworkMode::kNone).MaxMemory(256 * 1024 * 1024);
  corral::Result<corral::Policy> policy = builder.Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  corral::Result<std::unique_ptr<corral::WarmSandbox>> warm = corral::StartWarm(*policy, host);
  ASSERT_FALSE(warm.ok()) << "a warm sandbox started outside the cgroup its limits need";
  EXPECT_EQ(warm.error().code(), "warm_unsupported") << warm.error().ToString();
}

// Red team: a call goes for init. It tries to trace it, stop and kill it,
// read its memory and descriptors, and writes to every descriptor it might
// hold past 0-2 (the control channel, the ruleset, a status pipe), and
// opens init's descriptors through /proc (their numbers it may list). Judged
// from the host: init runs on, untraced and not stopped, it still has no
// child, and the next call runs.
TEST_F(Warm, ACallCannotTraceSignalOrReachInit) {
  pid_t init = warm_->pid();
  const std::string attack =
      "import ctypes, os\n"
      "libc = ctypes.CDLL(None, use_errno=True)\n"
      "got = []\n"
      "if libc.ptrace(16, 1, 0, 0) == 0: got.append('attach')\n"
      "if libc.ptrace(0x4206, 1, 0, 0) == 0: got.append('seize')\n"
      "for sig in (19, 9, 15, 1):\n"
      "    try:\n"
      "        os.kill(1, sig)\n"
      "    except OSError:\n"
      "        pass\n"
      "for path in ('/proc/1/mem', '/proc/1/environ'):\n"
      "    try:\n"
      "        open(path, 'rb').read(1); got.append(path)\n"
      "    except OSError:\n"
      "        pass\n"
      "try:\n"
      "    listed = os.listdir('/proc/1/fd')\n"
      "except OSError:\n"
      "    listed = [str(fd) for fd in range(64)]\n"
      "for fd in listed:\n"
      "    for how in ('link', 'open'):\n"
      "        try:\n"
      "            if how == 'link': os.readlink('/proc/1/fd/' + fd)\n"
      "            else: os.close(os.open('/proc/1/fd/' + fd, os.O_RDWR))\n"
      "            got.append(how + fd)\n"
      "        except OSError:\n"
      "            pass\n"
      "for fd in range(3, 1024):\n"
      "    try:\n"
      "        os.fstat(fd); got.append('fd%d' % fd)\n"
      "    except OSError:\n"
      "        pass\n"
      "print(' '.join(got) or 'none')\n";
  CallResult first = Call({"/usr/bin/python3", "-c", attack});
  EXPECT_EQ(first.exit.code, 0) << first.out;
  EXPECT_EQ(first.out, "none\n");
  ASSERT_TRUE(Exists("/proc/" + std::to_string(init)));
  EXPECT_EQ(StatusField(init, "TracerPid"), "0");
  std::optional<std::string> state = StatusField(init, "State");
  ASSERT_TRUE(state.has_value());
  EXPECT_EQ(state->find_first_of("Tt"), std::string::npos) << "init stopped or traced: " << *state;
  EXPECT_EQ(ChildrenOf(init), 0);
  CallResult next = Call({"/bin/echo", "next"});
  EXPECT_EQ(next.out, "next\n");
}

// Red team: a call hides a daemon in namespaces of its own (a user
// namespace, a PID namespace below it, a stopped process); none of it is
// left when its status comes back.
TEST_F(Warm, ADaemonInNestedNamespacesOrStoppedIsGoneBeforeTheNext) {
  const std::string marker = "654.125";
  CallResult first = Call({"/bin/sh", "-c",
                           "(unshare -Ur -p -f setsid sleep " + marker + " &) 2>/dev/null; (unshare -Ur setsid sleep " +
                               marker + "1 &) 2>/dev/null; (setsid sleep " + marker + "2 & kill -STOP $!); sleep 0.3; echo started"});
  EXPECT_EQ(first.out, "started\n");
  EXPECT_TRUE(ProcessesMatching(marker).empty()) << "call 1's daemon outlived it";
  EXPECT_EQ(ChildrenOf(warm_->pid()), 0);
  CallResult second = Call({"/bin/sh", "-c", "set -- /proc/[0-9]*; echo $#"});
  EXPECT_EQ(second.out, "2\n") << "init and sh only";
}

// Red team: a call lowers the sandbox init's own rlimits (prlimit on PID 1
// needs no capability, only the same uid), which every later call, forked
// from init, would inherit: a file size limit of 0 for the next tool call.
// The sandbox ends instead (the next call is warm_lost); no call ever runs
// with limits a call before it chose.
TEST_F(Warm, ACallThatLowersInitsRlimitsEndsTheSandboxInsteadOfTheNextCallInheritingThem) {
  CallResult lowered = Call({"/usr/bin/python3", "-c",
                             "import resource as r\nr.prlimit(1, r.RLIMIT_FSIZE, (0, 0))\nprint('lowered')"});
  ASSERT_EQ(lowered.out, "lowered\n") << "the attack itself failed; the test proves nothing";
  corral::UniqueFd out(::memfd_create("warm-out", MFD_CLOEXEC));
  corral::Command command = CommandOf({"/bin/sh", "-c", "ulimit -f"}, out.get());
  corral::Result<corral::SandboxProcess> next = warm_->Run(command);
  if (next.ok()) {
    corral::SuperviseOptions options;
    options.forward_signals = false;
    (void)corral::Supervise(*next, options);
    next->Reap();
    char buffer[256] = {};
    ssize_t n = ::pread(out.get(), buffer, sizeof buffer - 1, 0);
    ADD_FAILURE() << "the next call ran after init's limits were lowered; it saw ulimit -f: "
                  << std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0);
  } else {
    EXPECT_EQ(next.error().code(), "warm_lost") << next.error().ToString();
  }
}

}  // namespace
}  // namespace corral_it
