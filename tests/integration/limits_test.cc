// The resource limits (docs/limits.md), on the real kernel, judged from
// outside: the processes of a fork bomb counted in the host's /proc while it
// runs and after, a file's size on the host, the exit status and the
// `exited` record corral writes; and the zombie a run leaves to whoever
// reaps corral's orphans, counted by a subreaper parent.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "harness.h"
#include "base/exit_codes.h"
#include "confine/env.h"
#include "confine/host.h"
#include "confine/plan.h"
#include "exec/spawn.h"
#include "kernel/cgroup.h"
#include "policy/policy.h"

extern char** environ;

namespace corral_it {
namespace {

// As root, RLIMIT_NPROC does not hold (the kernel exempts global root), so
// --max-procs needs the pids controller of a cgroup corral can make.
bool ProcessLimitNeedsACgroup() { return ::geteuid() == 0 && !corral::ProbeHostCgroupOffer().pids; }

class Limits : public SandboxTest {
 protected:
  // The `exited` record of the last run.
  nlohmann::json Exited() const {
    std::vector<nlohmann::json> exited = AuditEvents("exited");
    return exited.empty() ? nlohmann::json() : exited.back();
  }
};

// Where no mechanism can hold --max-procs (root, and no pids controller:
// this host's v2 hierarchy has none), the run is refused with the reason
// and the fix, and nothing runs; --best-effort runs it and says the limit
// was dropped.
TEST_F(Limits, AProcessLimitNothingCanHoldIsRefused) {
  if (!ProcessLimitNeedsACgroup()) {
    // Unprivileged (or root with a pids controller): the limit holds, and
    // the run goes ahead.
    Outcome ran = RunIn({"--max-procs", "8"}, {"touch", workspace_ / "ran"});
    EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
    EXPECT_TRUE(Exists(workspace_ / "ran"));
    return;
  }
  Outcome refused = RunIn({"--max-procs", "8"}, {"touch", workspace_ / "ran"});
  EXPECT_EQ(refused.exit_code, 125) << refused.Describe();
  EXPECT_NE(refused.err.find("process limit: --max-procs as root needs the pids controller"), std::string::npos)
      << refused.Describe();
  EXPECT_NE(refused.err.find("--best-effort"), std::string::npos) << refused.Describe();
  EXPECT_FALSE(Exists(workspace_ / "ran"));

  Outcome degraded = RunIn({"--max-procs", "8", "--best-effort"}, {"touch", workspace_ / "ran"});
  EXPECT_EQ(degraded.exit_code, 0) << degraded.Describe();
  EXPECT_TRUE(Exists(workspace_ / "ran"));
  EXPECT_NE(degraded.err.find("degraded run (--best-effort): it ran without process limit"), std::string::npos)
      << degraded.Describe();
  bool recorded = false;
  for (const nlohmann::json& record : AuditEvents("spawned")) {
    for (const auto& dropped : record.value("dropped", nlohmann::json::array())) {
      recorded = recorded || dropped.get<std::string>().rfind("process limit:", 0) == 0;
    }
  }
  EXPECT_TRUE(recorded) << "the spawned record does not list the dropped process limit";
}

// --max-cpus is cpu.max of the run's cgroup, and nothing else can hold a
// rate: where the host offers no cpu controller (this one, as root and as a
// user) the run is refused, naming why and --best-effort, and no child runs
// (its marker is absent on the host); --best-effort runs it and the report,
// the spawned record and stderr say the limit was dropped.
TEST_F(Limits, ACpuShareNothingCanHoldIsRefused) {
  if (corral::ProbeHostCgroupOffer().cpu) {
    Outcome ran = RunIn({"--max-cpus", "0.5"}, {"touch", workspace_ / "ran"});
    EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
    EXPECT_TRUE(Exists(workspace_ / "ran"));
    return;
  }
  Outcome refused = RunIn({"--max-cpus", "0.5"}, {"touch", workspace_ / "ran"});
  EXPECT_EQ(refused.exit_code, 125) << refused.Describe();
  EXPECT_NE(refused.err.find("CPU share limit: --max-cpus needs the cpu controller of a cgroup"), std::string::npos)
      << refused.Describe();
  EXPECT_NE(refused.err.find("--best-effort"), std::string::npos) << refused.Describe();
  EXPECT_FALSE(Exists(workspace_ / "ran")) << "a child ran although the run was refused";
  EXPECT_TRUE(AuditEvents("spawned").empty()) << "a refused run spawned";

  Outcome degraded = RunIn({"--max-cpus", "0.5", "--best-effort"}, {"touch", workspace_ / "ran"});
  EXPECT_EQ(degraded.exit_code, 0) << degraded.Describe();
  EXPECT_TRUE(Exists(workspace_ / "ran"));
  EXPECT_NE(degraded.err.find("degraded run (--best-effort): it ran without CPU share limit"), std::string::npos)
      << degraded.Describe();
  bool recorded = false;
  for (const nlohmann::json& record : AuditEvents("spawned")) {
    for (const auto& dropped : record.value("dropped", nlohmann::json::array())) {
      recorded = recorded || dropped.get<std::string>().rfind("CPU share limit:", 0) == 0;
    }
  }
  EXPECT_TRUE(recorded) << "the spawned record does not list the dropped CPU share limit";

  Outcome explained = Corral({"explain", "--json", "--max-cpus", "0.5", "--best-effort", "--", "true"});
  ASSERT_EQ(explained.exit_code, 0) << explained.Describe();
  bool reported = false;
  const nlohmann::json explanation = nlohmann::json::parse(explained.out);
  for (const nlohmann::json& feature : explanation["plan"]["report"]) {
    if (feature["feature"] != "limits") continue;
    reported = true;
    EXPECT_EQ(feature["status"], "narrowed") << feature;
    EXPECT_NE(feature["detail"].get<std::string>().find("CPUs: not limited"), std::string::npos) << feature;
  }
  EXPECT_TRUE(reported) << explained.out;
}

// A fork bomb under --max-procs: counted from outside while it runs, it
// never has more processes than the limit; the run ends (here by its
// timeout), and no process of it is left.
TEST_F(Limits, AForkBombIsContainedAndNothingIsLeft) {
  if (ProcessLimitNeedsACgroup()) {
    Outcome refused = RunIn({"--max-procs", "16"}, {"true"});
    EXPECT_EQ(refused.exit_code, 125) << "root without a pids controller: the bomb must not run\n"
                                      << refused.Describe();
    return;
  }
  const std::string token = RandomToken("bomb");
  // Every process of the bomb is a fork of this `sh -c`, the token in its
  // command line. The bomb runs in a subshell (a shell whose fork fails
  // gives up), and the sleep, forked before it, keeps the run going until
  // --timeout.
  const std::string bomb = ": " + token + "; sleep 1000 & (b(){ b|b& }; b); wait";
  Process run(RunArgv({"--max-procs", "16", "--timeout", "4"}, {"sh", "-c", bomb}), Defaults({}));
  size_t peak = 0;
  WaitFor(
      [&] {
        peak = std::max(peak, ProcessesMatching(token).size());
        return !run.Running();
      },
      20s);
  const Outcome& outcome = run.Wait();
  EXPECT_FALSE(outcome.timed_out) << outcome.Describe();
  EXPECT_EQ(outcome.exit_code, 124) << "the bomb ran until --timeout\n" << outcome.Describe();
  EXPECT_GT(peak, 1u) << "the bomb never forked";
  EXPECT_LE(peak, 16u) << "more processes than --max-procs 16 at once";
  EXPECT_TRUE(ProcessesMatching(token).empty()) << "a process of the bomb outlived the run";
}

// --max-procs N counts the command's processes and nothing else of
// corral's: python3 and its forks reach exactly N, as they did before the
// nursery (a zombie of corral's charged to the sandbox's user namespace,
// such as an unreaped nursery helper, would take one of them).
TEST_F(Limits, MaxProcsCountsTheSandboxsProcessesAndNothingElse) {
  if (ProcessLimitNeedsACgroup()) {
    Outcome refused = RunIn({"--max-procs", "6"}, {"true"});
    EXPECT_EQ(refused.exit_code, 125) << refused.Describe();
    return;
  }
  const std::string forks =
      "import os, time\n"
      "children = []\n"
      "while len(children) < 50:\n"
      "    try:\n"
      "        pid = os.fork()\n"
      "    except OSError:\n"
      "        break\n"
      "    if pid == 0:\n"
      "        time.sleep(30)\n"
      "        os._exit(0)\n"
      "    children.append(pid)\n"
      "print(len(children))\n"
      "for pid in children:\n"
      "    os.kill(pid, 9)\n";
  Outcome outcome = RunIn({"--max-procs", "6"}, {"python3", "-c", forks});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "5\n") << "python3 is one of the six; its forks should be the other five\n"
                                 << outcome.Describe();
}

// A memory hog under --max-memory cannot allocate past the cap; an
// allocation under it works, and so does the hog without the flag.
TEST_F(Limits, AMemoryHogCannotAllocatePastTheCap) {
  Outcome hog = Probe("alloc", {"256", RandomToken("hog")}, {"--max-memory", "64m"});
  EXPECT_EQ(hog.exit_code, kProbeBlocked) << hog.Describe();
  EXPECT_NE(hog.out.find("Cannot allocate memory"), std::string::npos) << hog.Describe();
  Outcome small = Probe("alloc", {"16", RandomToken("small")}, {"--max-memory", "64m"});
  EXPECT_EQ(small.exit_code, 0) << small.Describe();
  Outcome free = Probe("alloc", {"256", RandomToken("free")}, {});
  EXPECT_EQ(free.exit_code, 0) << "without the cap the same allocation works\n" << free.Describe();
}

// A busy loop past --max-cpu-seconds is ended by SIGXCPU: the exit status
// says the signal, and the exited record and stderr name the limit.
TEST_F(Limits, ABusyLoopIsKilledAtItsCpuSeconds) {
  Outcome outcome = RunIn({"--max-cpu-seconds", "1", "--timeout", "60"}, {"sh", "-c", "while :; do :; done"});
  EXPECT_EQ(outcome.exit_code, 128 + SIGXCPU) << outcome.Describe();
  EXPECT_NE(outcome.err.find("limit: the command used its 1 CPU seconds (--max-cpu-seconds)"), std::string::npos)
      << outcome.Describe();
  nlohmann::json exited = Exited();
  EXPECT_EQ(exited.value("limit", ""), "cpu_seconds") << exited.dump();
  EXPECT_EQ(exited.value("signal", 0), SIGXCPU) << exited.dump();
}

// A write past --max-file-size stops at the cap: the file on the host is
// exactly the cap, SIGXFSZ ended the writer, and the record names the limit.
TEST_F(Limits, AWritePastTheFileSizeStopsAtTheCap) {
  Outcome outcome = RunIn({"--max-file-size", "1m"}, {"sh", "-c", "exec head -c 4M /dev/zero > big"});
  EXPECT_EQ(outcome.exit_code, 128 + SIGXFSZ) << outcome.Describe();
  struct stat st = {};
  ASSERT_EQ(::stat((workspace_ / "big").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1024 * 1024);
  EXPECT_EQ(Exited().value("limit", ""), "file_size") << Exited().dump();
  EXPECT_NE(outcome.err.find("limit: the command wrote past 1m in one file"), std::string::npos)
      << outcome.Describe();
  // Under the cap the same write completes.
  Outcome fits = RunIn({"--max-file-size", "8m"}, {"sh", "-c", "head -c 4M /dev/zero > big"});
  EXPECT_EQ(fits.exit_code, 0) << fits.Describe();
  ASSERT_EQ(::stat((workspace_ / "big").c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 4 * 1024 * 1024);
}

// --max-open-files N: descriptors 0-2 and N-3 opens, then EMFILE.
TEST_F(Limits, TheOpenPastTheLimitFails) {
  Outcome outcome = Probe("open_many", {"1000"}, {"--max-open-files", "16"});
  EXPECT_EQ(outcome.exit_code, kProbeBlocked) << outcome.Describe();
  EXPECT_NE(outcome.out.find("opened 13: Too many open files"), std::string::npos) << outcome.Describe();
  Outcome unlimited = Probe("open_many", {"1000"}, {});
  EXPECT_EQ(unlimited.exit_code, 0) << unlimited.Describe();
}

// The [sandbox] keys set the limits, a flag overrides them, and a project
// file cannot raise the user's.
TEST_F(Limits, TheConfigKeysSetTheLimitsAndAProjectCannotRaiseThem) {
  config_.Write("corral/config.toml", "[sandbox]\nmax_open_files = 16\n");
  Outcome keyed = Probe("open_many", {"1000"});
  EXPECT_NE(keyed.out.find("opened 13: Too many open files"), std::string::npos) << keyed.Describe();
  Outcome flagged = Probe("open_many", {"1000"}, {"--max-open-files", "32"});
  EXPECT_NE(flagged.out.find("opened 29: Too many open files"), std::string::npos) << flagged.Describe();

  workspace_.Write("corral.toml", "[sandbox]\nmax_open_files = 64\n");
  Outcome raised = RunIn({}, {"touch", outside_ / "ran"});
  EXPECT_EQ(raised.exit_code, 78) << raised.Describe();
  EXPECT_NE(raised.err.find("sandbox.max_open_files"), std::string::npos) << raised.Describe();
  EXPECT_FALSE(Exists(outside_ / "ran"));

  workspace_.Write("corral.toml", "[sandbox]\nmax_open_files = 8\n");
  Outcome lowered = Probe("open_many", {"1000"});
  EXPECT_NE(lowered.out.find("opened 5: Too many open files"), std::string::npos) << lowered.Describe();
}

TEST_F(Limits, BadLimitsAreRefused) {
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{"--max-procs", "0"}, {"--max-procs", "-3"}, {"--max-procs", "99999999999999999999"},
        {"--max-memory", "1k"}, {"--max-memory", "lots"}, {"--max-open-files", "2"},
        {"--max-file-size", "0"}, {"--max-cpu-seconds", "0"}, {"--max-cpus", "0"}, {"--max-cpus", "0.0001"},
        {"--max-cpus", "2000"}, {"--max-cpus", "half"}, {"--max-cpus", "-1"}}) {
    Outcome outcome = RunIn(flags, {"touch", outside_ / "ran"});
    EXPECT_EQ(outcome.exit_code, 64) << flags[0] << " " << flags[1] << "\n" << outcome.Describe();
    EXPECT_FALSE(Exists(outside_ / "ran"));
  }
}

// explain names each limit and what holds it on this host.
TEST_F(Limits, ExplainSaysWhatHoldsEachLimit) {
  Outcome explained = Corral({"explain", "--max-memory", "256m", "--max-open-files", "64", "--", "true"});
  EXPECT_EQ(explained.exit_code, 0) << explained.Describe();
  EXPECT_NE(explained.out.find("memory 256m: each process's address space"), std::string::npos)
      << explained.Describe();
  EXPECT_NE(explained.out.find("64 open files per process (RLIMIT_NOFILE)"), std::string::npos)
      << explained.Describe();
}

// The sandbox's init starts in the run's cgroup (clone3 CLONE_INTO_CGROUP),
// so every process of the sandbox is in it from its first instruction:
// read from outside in the cgroup's cgroup.procs. This host offers no
// controller to limit with, but as root a plain cgroup of its v2 hierarchy
// shows the spawn path; unprivileged, that hierarchy is not the user's and
// the cgroup cannot be made.
TEST_F(Limits, TheSandboxStartsInTheRunsCgroup) {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::stringstream text;
  text << mountinfo.rdbuf();
  const std::string mount = corral::CgroupMountPoint(text.str());
  ASSERT_FALSE(mount.empty()) << "no cgroup v2 hierarchy on this host";
  corral::Result<corral::RunCgroup> cgroup = corral::RunCgroup::Create(mount, corral::CgroupLimits{});
  if (::geteuid() != 0) {
    EXPECT_FALSE(cgroup.ok()) << "an unprivileged user made a cgroup at the hierarchy's root";
    return;
  }
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().ToString();
  corral::Result<corral::HostContext> host = corral::CaptureHostContext();
  ASSERT_TRUE(host.ok()) << host.error().ToString();
  corral::PolicyBuilder builder(*host);
  builder.Workspace(workspace_.path());
  corral::Result<corral::Policy> policy = builder.Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  corral::Result<corral::Plan> plan = corral::Compile(*policy, corral::ProbeHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  corral::Command command;
  command.argv = {"sleep", "1000"};
  command.env = corral::ScrubEnvironment(*policy, environ);
  command.cgroup_fd = cgroup->fd();
  sigset_t previous = corral::BlockForwardedSignals();
  corral::Result<corral::SandboxProcess> process = corral::Spawn(*plan, command);
  ASSERT_TRUE(process.ok()) << process.error().ToString();
  auto procs = [&] {
    std::ifstream in(cgroup->path() + "/cgroup.procs");
    std::vector<pid_t> pids;
    pid_t pid = 0;
    while (in >> pid) pids.push_back(pid);
    return pids;
  };
  // Init, and the command it cloned.
  EXPECT_TRUE(WaitFor([&] { return procs().size() == 2; }, 10s)) << procs().size();
  std::vector<pid_t> in_cgroup = procs();
  EXPECT_NE(std::find(in_cgroup.begin(), in_cgroup.end(), process->pid()), in_cgroup.end())
      << "init is not in the run's cgroup";
  // Removing the cgroup kills what is in it: the sandbox ends.
  const std::string path = cgroup->path();
  std::thread reaper([&] { process->Reap(); });
  corral::Result<void> removed = cgroup->Remove();
  reaper.join();
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_TRUE(removed.ok()) << removed.error().ToString();
  EXPECT_FALSE(Exists(path));
}

// Each `corral run` reaps its sandbox's init, and the nursery's helper
// (exec/nursery.h), before it exits: a subreaper parent of 20 runs inherits
// no zombie from them. Nor from runs whose plan dismisses the helper (the
// host's network), or that are refused after it started (an --allow-read
// path that does not exist, --allow-write /), or refused before the flags
// are understood.
// Each entry: the argv, and the exit code expected.
void ExpectNoZombieForTheReaper(const std::string& workspace,
                                const std::vector<std::pair<std::vector<std::string>, int>>& runs) {
  Inherited inherited = UnderSubreaper([&] {
    for (const auto& [argv, code] : runs) {
      std::vector<char*> args;
      for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      pid_t corral = ::fork();
      if (corral == 0) {
        int null = ::open("/dev/null", O_WRONLY);
        ::dup2(null, STDERR_FILENO);
        if (::chdir(workspace.c_str()) != 0) ::_exit(120);
        ::execv(args[0], args.data());
        ::_exit(121);
      }
      int status = 0;
      ::waitpid(corral, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != code) return 122;
    }
    return 0;
  });
  EXPECT_EQ(inherited.result, 0) << "a run's exit code differed";
  EXPECT_EQ(inherited.count, 0) << "zombies left to the subreaper";
}

TEST_F(Limits, ARunLeavesNoZombieForItsParentsReaper) {
  std::vector<std::pair<std::vector<std::string>, int>> runs(20, {RunArgv({}, {"true"}), 0});
  ExpectNoZombieForTheReaper(workspace_.path(), runs);
}

// Starts `argv` from `workspace` with its stdout and stderr the write end
// of the pipe `err`, whose read end it does not hold; the caller keeps the
// read end and no longer holds the write end.
pid_t StartWritingTo(const int err[2], const std::string& workspace, const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t corral = ::fork();
  if (corral == 0) {
    ::close(err[0]);  // corral must hold no reader of its own stderr
    ::dup2(err[1], STDERR_FILENO);
    ::dup2(err[1], STDOUT_FILENO);
    if (::chdir(workspace.c_str()) != 0) ::_exit(120);
    ::execv(args[0], args.data());
    ::_exit(121);
  }
  ::close(err[1]);
  return corral;
}

// Runs `argv` from `workspace`, its stdout and stderr a pipe whose reader
// goes away once it saw `marker` (at once when empty), and returns the
// signal that ended corral, or 0.
int RunWithStderrClosed(const std::string& workspace, const std::vector<std::string>& argv,
                        const std::string& marker) {
  int err[2];
  if (::pipe(err) != 0) return 119;
  pid_t corral = StartWritingTo(err, workspace, argv);
  std::string seen;
  char buffer[4096];
  ssize_t n;
  while (!marker.empty() && seen.find(marker) == std::string::npos &&
         (n = ::read(err[0], buffer, sizeof buffer)) > 0) {
    seen.append(buffer, static_cast<size_t>(n));
  }
  ::close(err[0]);  // nobody reads corral's stderr from here on
  int status = 0;
  ::waitpid(corral, &status, 0);
  return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

const char kPlantHook[] = "mkdir -p .git/hooks && echo 'echo pwned' > .git/hooks/pre-commit; sleep 0.2";

// corral dies of SIGPIPE writing its report to a closed stderr (the sweep
// found a hook the command planted): it reaps init first all the same.
TEST_F(Limits, ACorralKilledByItsOwnReportStillReapsInit) {
  const std::vector<std::string> argv = RunArgv({}, {"sh", "-c", kPlantHook});
  Inherited run = UnderSubreaper([&] { return RunWithStderrClosed(workspace_.path(), argv, ""); });
  EXPECT_EQ(run.result, SIGPIPE) << "corral was to die of SIGPIPE writing the sweep's findings";
  EXPECT_EQ(run.count, 0) << "init was left to the subreaper";
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit")) << "the planted hook was not swept";
}

// The reader of `--audit -` goes away while the command runs: the `exited`
// record, written before the sweep, fails with EPIPE; corral still sweeps
// the hook the command planted and reaps init, then dies of the SIGPIPE.
TEST_F(Limits, AStderrClosedDuringTheRunStillGetsTheSweepAndTheReap) {
  const std::vector<std::string> argv = {CorralBin(), "run", "--audit", "-", "--", "sh", "-c", kPlantHook};
  Inherited run = UnderSubreaper([&] { return RunWithStderrClosed(workspace_.path(), argv, "\"spawned\""); });
  EXPECT_EQ(run.result, SIGPIPE);
  EXPECT_EQ(run.count, 0) << "init was left to the subreaper";
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit")) << "the planted hook was not swept";
}

// A SIGPIPE while the command runs (another process's kill, or a write of
// corral's own to a stderr whose reader left) is held like one after it: the
// command runs to its end, the sweep takes out the hook it planted and init
// is reaped, and only then does the signal end corral. The command itself
// starts with SIGPIPE unblocked.
TEST_F(Limits, ASigpipeDuringTheRunWaitsForTheSweepAndTheReap) {
  const std::vector<std::string> argv =
      RunArgv({}, {"sh", "-c", std::string(kPlantHook) + "; touch started; sleep 1; touch done"});
  Inherited run = UnderSubreaper([&] {
    pid_t corral = ::fork();
    if (corral == 0) {
      int null = ::open("/dev/null", O_RDWR);
      ::dup2(null, STDOUT_FILENO);
      ::dup2(null, STDERR_FILENO);
      if (::chdir(workspace_.path().c_str()) != 0) ::_exit(120);
      std::vector<char*> args;
      for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(121);
    }
    for (int tries = 0; tries < 500 && !Exists(workspace_ / "started"); ++tries) ::usleep(10 * 1000);
    ::kill(corral, SIGPIPE);
    int status = 0;
    ::waitpid(corral, &status, 0);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 200 + WEXITSTATUS(status);
  });
  EXPECT_EQ(run.result, SIGPIPE) << "200 + corral's exit code otherwise";
  EXPECT_EQ(run.count, 0) << "init was left to the subreaper";
  EXPECT_TRUE(Exists(workspace_ / "done")) << "the command was cut short";
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit")) << "the planted hook was not swept";
  // The command's own mask, read by its first process (a shell would clear it).
  Outcome blocked = RunIn({}, {"/bin/grep", "^SigBlk", "/proc/self/status"});
  ASSERT_EQ(blocked.exit_code, 0) << blocked.err;
  unsigned long long mask = std::stoull(blocked.out.substr(blocked.out.find(':') + 1), nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGPIPE - 1)), 0u) << "the command started with SIGPIPE blocked";
}

// argv under a HOME and PATH whose pyenv shim the sandbox does not show,
// so corral writes its PATH warning (policy/search_path.h) before the run.
std::vector<std::string> WithPathWarning(const TempDir& outside, const std::vector<std::string>& run) {
  outside.Write("home/.pyenv/shims/python3", "#!/bin/sh\necho PYENV\n", 0755);
  const std::string home = outside / "home";
  std::vector<std::string> argv = {"/usr/bin/env", "HOME=" + home, "PATH=" + home + "/.pyenv/shims:/usr/bin:/bin"};
  argv.insert(argv.end(), run.begin(), run.end());
  return argv;
}

// The PATH warning is written before anything is spawned (cli/run.cc,
// RunOptions::before_spawn): a stderr closed from the start ends corral
// there, with nothing to reap and the command never run.
TEST_F(Limits, AWarningToAClosedStderrLeavesNothingBehind) {
  const std::vector<std::string> argv = WithPathWarning(outside_, RunArgv({}, {"sh", "-c", kPlantHook}));
  Inherited run = UnderSubreaper([&] { return RunWithStderrClosed(workspace_.path(), argv, ""); });
  EXPECT_EQ(run.result, SIGPIPE) << "corral was to die of SIGPIPE writing the warning";
  EXPECT_EQ(run.count, 0) << "init was left to the subreaper";
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit")) << "the command ran after corral's stderr failed";
}

// Returns once corral (`pid`, after its exec) waits for room on its stderr:
// in poll(2) with the 100 ms of base/stream_write.cc, as /proc/PID/syscall
// shows (number 7, the timeout its third argument). At most 5 s.
void WaitUntilWaitingForRoom(pid_t pid) {
  const std::string proc = "/proc/" + std::to_string(pid);
  for (int tries = 0; tries < 500; ++tries) {
    std::ifstream comm(proc + "/comm"), syscall(proc + "/syscall");
    std::string name, number, fds, count, timeout;
    comm >> name;
    syscall >> number >> fds >> count >> timeout;
    if (name == "corral" && number == "7" && timeout == "0x64") return;
    ::usleep(10 * 1000);
  }
  ADD_FAILURE() << "corral never waited for room on its stderr";
}

// Runs `argv` with its stderr a full pipe nobody reads, so its first
// write there blocks; sends SIGTERM half a second in and returns the signal
// that ended it, or 118 when it did not end within 5 s (the pipe still full).
int TerminatedWhileStderrIsFull(const std::string& workspace, const std::vector<std::string>& argv) {
  int err[2];
  if (::pipe(err) != 0) return 119;
  ::fcntl(err[1], F_SETFL, O_NONBLOCK);
  const std::string block(4096, 'x');
  while (::write(err[1], block.data(), block.size()) > 0) {
  }
  ::fcntl(err[1], F_SETFL, 0);
  pid_t corral = StartWritingTo(err, workspace, argv);
  WaitUntilWaitingForRoom(corral);
  ::kill(corral, SIGTERM);
  int status = 0;
  for (int waited = 0; waited < 100; ++waited) {
    if (::waitpid(corral, &status, WNOHANG) == corral) {
      ::close(err[0]);
      return WIFSIGNALED(status) ? WTERMSIG(status) : 200 + WEXITSTATUS(status);
    }
    ::usleep(50 * 1000);
  }
  ::close(err[0]);  // let it go, so the test ends
  ::waitpid(corral, &status, 0);
  return 118;
}

// A stderr nobody reads holds the warning's write; a SIGTERM meanwhile ends
// corral at once, as it would before any run, and the command never starts
// (no canary), with nothing left to the subreaper.
TEST_F(Limits, ASignalWhileTheWarningWaitsEndsCorralWithNothingSpawned) {
  const std::vector<std::string> argv = WithPathWarning(outside_, RunArgv({}, {"sh", "-c", "touch canary"}));
  Inherited run = UnderSubreaper([&] { return TerminatedWhileStderrIsFull(workspace_.path(), argv); });
  EXPECT_EQ(run.result, SIGTERM) << "118: corral did not end while its stderr was full";
  EXPECT_EQ(run.count, 0) << "init was left to the subreaper";
  EXPECT_FALSE(Exists(workspace_ / "canary")) << "the command ran after corral was told to stop";
}

// Under --overlay the warning comes before the overlay run is made: a run
// ended there leaves none for `corral changes`, `diff` and `apply` to pick.
TEST_F(Limits, ASignalWhileTheWarningWaitsLeavesNoOverlayRun) {
  std::vector<std::string> argv =
      WithPathWarning(outside_, RunArgv({"--overlay"}, {"sh", "-c", "touch canary"}));
  argv.insert(argv.begin() + 1, "XDG_STATE_HOME=" + state_.path());
  Inherited run = UnderSubreaper([&] { return TerminatedWhileStderrIsFull(workspace_.path(), argv); });
  EXPECT_EQ(run.result, SIGTERM) << "118: corral did not end while its stderr was full";
  EXPECT_EQ(run.count, 0) << "init was left to the subreaper";
  EXPECT_FALSE(Exists(workspace_ / "canary"));
  const std::string overlays = state_ / "corral/overlay";
  std::vector<std::string> left;
  if (std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(overlays.c_str()), ::closedir); dir) {
    while (const dirent* entry = ::readdir(dir.get())) {
      if (std::string(entry->d_name) != "." && std::string(entry->d_name) != "..") left.push_back(entry->d_name);
    }
  }
  EXPECT_TRUE(left.empty()) << "an overlay run was left: " << left.front();
}

TEST_F(Limits, ADismissedOrRefusedRunLeavesNoZombieForItsParentsReaper) {
  std::vector<std::pair<std::vector<std::string>, int>> runs;
  for (int i = 0; i < 5; ++i) {
    runs.push_back({RunArgv({"--network", "all"}, {"true"}), 0});
    runs.push_back({RunArgv({"--allow-read", outside_ / "absent"}, {"true"}), corral::kExitUsage});
    runs.push_back({RunArgv({"--allow-write", "/"}, {"true"}), corral::kExitUsage});
    runs.push_back({RunArgv({"--no-such-flag"}, {"true"}), corral::kExitUsage});
  }
  ExpectNoZombieForTheReaper(workspace_.path(), runs);
}

}  // namespace
}  // namespace corral_it
