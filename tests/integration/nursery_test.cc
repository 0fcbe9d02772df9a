// The nursery (exec/nursery.h): the sandbox's namespaces made ahead on
// another core, seen from outside. Init is born in the very namespaces the
// helper made, with the helper's id maps and hostname, as corral's own
// child; a plan that wants other namespaces dismisses the helper and spawns
// as before; a helper whose namespaces are refused leaves the spawn to clone
// as before; and no way out leaves a process of the helper's behind.
#include "exec/nursery.h"

#include <fcntl.h>
#include <poll.h>
#include <linux/filter.h>
#include <linux/nsfs.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "confine/env.h"
#include "confine/host.h"
#include "confine/plan.h"
#include "exec/spawn.h"
#include "harness.h"
#include "policy/policy.h"

extern char** environ;

namespace corral_it {
namespace {

using namespace std::chrono_literals;

const char* const kNamespaceFiles[] = {"user", "net", "mnt", "uts", "ipc", "cgroup"};

// The inode of the user namespace that owns PID's PID namespace, or 0.
ino_t OwnerOfPidNamespace(pid_t pid) {
  int ns = ::open(("/proc/" + std::to_string(pid) + "/ns/pid").c_str(), O_RDONLY | O_CLOEXEC);
  if (ns < 0) return 0;
  int owner = ::ioctl(ns, NS_GET_USERNS);
  ::close(ns);
  if (owner < 0) return 0;
  struct stat st;
  ino_t inode = ::fstat(owner, &st) == 0 ? st.st_ino : 0;
  ::close(owner);
  return inode;
}

// PID's number in its innermost PID namespace (the last of NSpid).
std::string PidInside(pid_t pid) {
  std::string nspid = StatusField(pid, "NSpid").value_or("");
  return nspid.substr(nspid.find_last_of(" \t") + 1);
}

// Init's one child, the command (init is not dumpable, so an unprivileged
// caller reads the namespaces of the command, which are init's), or -1.
pid_t CommandOf(pid_t init) {
  pid_t command = -1;
  WaitFor(
      [&] {
        std::ifstream in("/proc/" + std::to_string(init) + "/task/" + std::to_string(init) + "/children");
        return static_cast<bool>(in >> command);
      },
      5s);
  return command;
}

// No child of this process is left, zombie or alive.
bool NoChildLeft() {
  int status = 0;
  return ::waitpid(-1, &status, WNOHANG | __WALL) < 0 && errno == ECHILD;
}

class NurseryTest : public ::testing::Test {
 protected:
  corral::Policy Build(corral::NetworkMode network) {
    corral::Result<corral::HostContext> host = corral::CaptureHostContext();
    EXPECT_TRUE(host.ok()) << host.error().ToString();
    corral::PolicyBuilder builder(*host);
    builder.Workspace(workspace_.path()).Network(network);
    corral::Result<corral::Policy> policy = builder.Build();
    EXPECT_TRUE(policy.ok()) << policy.error().ToString();
    return std::move(policy).value();
  }

  // Spawns `argv` under `policy` with `nursery`; the command's stdout is
  // the returned pipe's read end.
  corral::Result<corral::SandboxProcess> SpawnWith(const corral::Policy& policy, corral::Nursery* nursery,
                                                   const std::vector<std::string>& argv, int stdout_fd) {
    corral::Result<corral::Plan> plan = corral::Compile(policy, corral::ProbeHost());
    if (!plan.ok()) return std::move(plan).error();
    corral::Command command;
    command.argv = argv;
    command.env = corral::ScrubEnvironment(policy, environ);
    command.stdout_fd = stdout_fd;
    command.nursery = nursery;
    previous_ = corral::BlockForwardedSignals();
    return corral::Spawn(*plan, command);
  }

  void TearDown() override { ::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

  // Waits until the helper holds its namespaces (its user namespace is no
  // longer ours) and returns their inodes by name. (Its PID namespace for
  // children cannot be opened before its first child.)
  std::map<std::string, std::string> HelperNamespaces(pid_t helper) {
    const std::string ours = NamespaceOf(::getpid(), "user");
    EXPECT_TRUE(WaitFor(
        [&] { return NamespaceOf(helper, "user") != ours && NamespaceOf(helper, "user") != "unreadable"; }, 5s))
        << "the helper never made its namespaces";
    std::map<std::string, std::string> held;
    for (const char* name : kNamespaceFiles) held[name] = NamespaceOf(helper, name);
    return held;
  }

  TempDir workspace_{"corral-ws"};
  sigset_t previous_ = {};
};

TEST_F(NurseryTest, InitIsBornInTheNamespacesTheHelperMadeAsCorralsChild) {
  corral::Policy policy = Build(corral::NetworkMode::kNone);
  std::unique_ptr<corral::Nursery> nursery = corral::Nursery::Start();
  ASSERT_NE(nursery, nullptr) << "no nursery on this host (it needs two CPUs)";
  const pid_t helper = nursery->helper();
  std::map<std::string, std::string> held = HelperNamespaces(helper);
  for (const auto& [name, link] : held) {
    EXPECT_NE(link, NamespaceOf(::getpid(), name)) << name << " is the host's";
  }

  int out[2];
  ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
  corral::Result<corral::SandboxProcess> process = SpawnWith(
      policy, nursery.get(), {"/bin/sh", "-c", "cat /proc/self/uid_map; hostname; exec sleep 30"}, out[1]);
  ::close(out[1]);
  ASSERT_TRUE(process.ok()) << process.error().ToString();
  EXPECT_TRUE(nursery->spent());
  EXPECT_EQ(nursery->helper(), -1) << "the helper is reaped once init is born";
  const pid_t init = process->pid();
  EXPECT_EQ(ParentOf(init), ::getpid()) << "init is not corral's child";
  EXPECT_EQ(PidInside(init), "1") << "init is not the first process of its PID namespace";
  // Two lines: the uid map and the hostname (init keeps its copy of the
  // pipe, so no EOF comes).
  std::string output;
  WaitFor(
      [&] {
        struct pollfd ready = {out[0], POLLIN, 0};
        char buffer[256];
        if (::poll(&ready, 1, 100) == 1) {
          ssize_t n = ::read(out[0], buffer, sizeof buffer);
          if (n > 0) output.append(buffer, static_cast<size_t>(n));
        }
        return std::count(output.begin(), output.end(), '\n') >= 2;
      },
      5s);
  ::close(out[0]);
  const pid_t command = CommandOf(init);
  ASSERT_GT(command, 0) << "init has no child";
  for (const char* name : kNamespaceFiles) {
    EXPECT_EQ(NamespaceOf(command, name), held[name]) << "the sandbox is not in the helper's " << name
                                                      << " namespace";
  }
  EXPECT_EQ("user:[" + std::to_string(OwnerOfPidNamespace(command)) + "]", held["user"])
      << "the sandbox's PID namespace is not the helper's";
  ASSERT_TRUE(process->Kill().ok());
  const std::string uid = std::to_string(::getuid());
  EXPECT_NE(output.find(uid), std::string::npos) << output;
  EXPECT_NE(output.find("\ncorral\n"), std::string::npos) << output;
  process->Reap();
  nursery.reset();
  EXPECT_TRUE(NoChildLeft()) << "the helper or init was left unreaped";
}

TEST_F(NurseryTest, APlanThatWantsTheHostsNetworkDismissesItAndSpawnsAsBefore) {
  corral::Policy policy = Build(corral::NetworkMode::kAll);
  std::unique_ptr<corral::Nursery> nursery = corral::Nursery::Start();
  ASSERT_NE(nursery, nullptr);
  const pid_t helper = nursery->helper();
  std::map<std::string, std::string> held = HelperNamespaces(helper);
  corral::Result<corral::SandboxProcess> process = SpawnWith(policy, nursery.get(), {"/bin/sleep", "30"}, -1);
  ASSERT_TRUE(process.ok()) << process.error().ToString();
  EXPECT_TRUE(nursery->spent());
  EXPECT_EQ(nursery->helper(), -1) << "a dismissed helper is reaped at once";
  const pid_t command = CommandOf(process->pid());
  ASSERT_GT(command, 0) << "init has no child";
  EXPECT_EQ(NamespaceOf(command, "net"), NamespaceOf(::getpid(), "net"));
  EXPECT_NE(NamespaceOf(command, "user"), held["user"]);
  EXPECT_NE(NamespaceOf(command, "user"), "unreadable");
  ASSERT_TRUE(process->Kill().ok());
  process->Reap();
  nursery.reset();
  EXPECT_TRUE(NoChildLeft());
}

TEST_F(NurseryTest, DismissedAtAnyMomentItLeavesNoProcess) {
  for (int i = 0; i < 40; ++i) {
    std::unique_ptr<corral::Nursery> nursery = corral::Nursery::Start();
    ASSERT_NE(nursery, nullptr);
    const pid_t helper = nursery->helper();
    if (i % 4 == 1) ::usleep(200);
    if (i % 4 == 2) HelperNamespaces(helper);
    if (i % 4 == 3) nursery->Rouse();
    nursery.reset();
    EXPECT_FALSE(Exists("/proc/" + std::to_string(helper))) << "helper " << helper << " outlived its dismissal";
  }
  EXPECT_TRUE(NoChildLeft());
}

// A spawn that fails after it roused the helper (here: no descriptor left
// for its pipes, under RLIMIT_NOFILE 12) dismisses it: corral reports the
// error and exits at once, and leaves no process.
TEST_F(NurseryTest, ASpawnThatFailsAfterRousingItStillEndsTheHelper) {
  const std::string corral = CorralBin();
  const std::string workspace = workspace_.path();
  Inherited run = UnderSubreaper([&] {
    pid_t child = ::fork();
    if (child == 0) {
      int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDERR_FILENO);
      ::syscall(SYS_close_range, 3, ~0U, 0);
      struct rlimit few = {12, 12};
      if (::setrlimit(RLIMIT_NOFILE, &few) != 0) ::_exit(90);
      if (::chdir(workspace.c_str()) != 0) ::_exit(91);
      ::execl(corral.c_str(), corral.c_str(), "run", "--", "true", static_cast<char*>(nullptr));
      ::_exit(92);
    }
    int status = 0;
    if (!WaitFor([&] { return ::waitpid(child, &status, WNOHANG) == child; }, 20s)) {
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      return 99;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 98;
  });
  EXPECT_NE(run.result, 99) << "corral hung after a failed spawn";
  EXPECT_NE(run.result, 0) << "the spawn was to fail";
  EXPECT_LT(run.result, 90) << "set-up of the test failed, or corral died of a signal";
  EXPECT_EQ(run.count, 0) << "the helper or init was left to the subreaper";
}

// Runs `corral run -- sh -c 'sleep 0.05; echo ran >> CANARY'` from
// `workspace` `runs` times under a subreaper, each time sending `signal` to
// corral after a delay that sweeps 0 to 6 ms (the nursery, the policy, the
// spawn and init's set-up all fall in there), and returns how many
// processes the subreaper inherited once each corral ended.
int KillCorralAtEveryMoment(const std::string& workspace, const std::string& canary, int signal, int runs) {
  const std::string corral = CorralBin();
  const std::string script = "sleep 0.05; echo ran >> '" + canary + "'";
  return UnderSubreaper([&] {
           for (int i = 0; i < runs; ++i) {
             pid_t run = ::fork();
             if (run == 0) {
               int null = ::open("/dev/null", O_WRONLY);
               ::dup2(null, STDOUT_FILENO);
               ::dup2(null, STDERR_FILENO);
               if (::chdir(workspace.c_str()) != 0) ::_exit(120);
               ::execl(corral.c_str(), corral.c_str(), "run", "--", "sh", "-c", script.c_str(),
                       static_cast<char*>(nullptr));
               ::_exit(121);
             }
             ::usleep(static_cast<useconds_t>((i * 6000) / runs));
             ::kill(run, signal);
             int status = 0;
             ::waitpid(run, &status, 0);
           }
           return 0;
         })
      .count;
}

// A corral killed at any moment, even before init could set
// PR_SET_PDEATHSIG, never leaves the command running without it: init
// starts only on corral's go over the lifeline, sent once the nursery's
// helper (which shares corral's descriptors) is reaped, and leaves when
// that lifeline hangs up (exec/child.h). Without the go, a helper that
// outlived corral for a moment held the lifeline open.
TEST_F(NurseryTest, ACorralKilledAtAnyMomentNeverLeavesTheCommandRunning) {
  const std::string canary = workspace_ / "canary";
  EXPECT_GE(KillCorralAtEveryMoment(workspace_.path(), canary, SIGKILL, 150), 0);
  EXPECT_FALSE(Exists(canary)) << "a command ran on after corral was killed: " << ReadFile(canary).value_or("");
}

// SIGTERM at any moment, before the spawn (the helper is dismissed and
// reaped first), during the run (forwarded to the command), or while
// corral reports (held until init is reaped), leaves the caller's reaper
// nothing.
TEST_F(NurseryTest, ACorralTerminatedAtAnyMomentLeavesNoProcessBehind) {
  const std::string canary = workspace_ / "canary";
  EXPECT_EQ(KillCorralAtEveryMoment(workspace_.path(), canary, SIGTERM, 150), 0)
      << "processes inherited by the subreaper";
  EXPECT_FALSE(Exists(canary));
}

// Under a seccomp filter that refuses unshare (and only unshare), the
// helper cannot make its namespaces; the spawn clones them as before, and
// the command runs.
TEST_F(NurseryTest, AHelperWhoseNamespacesAreRefusedLeavesTheSpawnToCloneAsBefore) {
  corral::Policy policy = Build(corral::NetworkMode::kNone);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct sock_filter refuse_unshare[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_unshare, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = {sizeof refuse_unshare / sizeof refuse_unshare[0], refuse_unshare};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(90);
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) ::_exit(91);
    std::unique_ptr<corral::Nursery> nursery = corral::Nursery::Start();
    if (nursery == nullptr) ::_exit(92);
    corral::Result<corral::SandboxProcess> process = SpawnWith(policy, nursery.get(), {"/bin/true"}, -1);
    if (!process.ok()) ::_exit(93);
    if (!nursery->spent()) ::_exit(94);
    process->Reap();
    if (!WIFEXITED(process->wait_status()) || WEXITSTATUS(process->wait_status()) != 0) ::_exit(95);
    nursery.reset();
    ::_exit(NoChildLeft() ? 0 : 96);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "90-92: set-up; 93: the spawn failed; 94: not spent; 95: the command "
                                       "failed; 96: a process was left";
}

}  // namespace
}  // namespace corral_it
