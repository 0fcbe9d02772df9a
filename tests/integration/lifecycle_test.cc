// Exit codes, the deadline and signals. "Nothing survives" is judged by
// scanning the host's /proc for the run's unique sleep durations.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <thread>

#include "harness.h"

namespace corral_it {
namespace {

class Lifecycle : public SandboxTest {
 protected:
  // A unique `sleep` duration: its text identifies the run's processes.
  static std::string SleepToken() {
    static std::mt19937 engine{std::random_device{}()};
    return "3000." + std::to_string(100000 + engine() % 900000);
  }

  // A run that should end within a second or two is killed by the harness
  // well before its default minute: under a mutant that leaves it running
  // (no deadline, a signal not passed on) the test fails sooner.
  static SpawnOptions Bounded() {
    SpawnOptions options;
    options.timeout = 15s;
    return options;
  }

  // Starts `script` under corral and waits until it has touched `ready`.
  std::unique_ptr<Process> StartReady(const std::string& script) {
    auto process = std::make_unique<Process>(RunArgv({}, {"sh", "-c", script}), Defaults(Bounded()));
    EXPECT_TRUE(WaitFor([&] { return Exists(workspace_ / "ready"); }, 10s)) << process->OutputSoFar();
    return process;
  }

  // Judged by the sleeps themselves: init is a copy of corral and shares its
  // command line (which names the tokens), and corral may return while init,
  // having killed and reaped the rest, is still in its own _exit.
  void ExpectNoSurvivors(const std::vector<std::string>& tokens, std::chrono::milliseconds grace) {
    for (const std::string& token : tokens) {
      std::string sleep = CommandLine({"sleep", token});
      EXPECT_TRUE(WaitFor([&] { return ProcessesStartingWith(sleep).empty(); }, grace)) << token << " survived";
      // A survivor (a sandbox whose init outlived corral, under the lifeline
      // mutant) must not outlive the test either.
      for (pid_t pid : ProcessesMatching(token)) ::kill(pid, SIGKILL);
    }
  }

  nlohmann::json LastAuditRecord() {
    std::vector<nlohmann::json> audit = Audit();
    return audit.empty() ? nlohmann::json() : audit.back();
  }
};

TEST_F(Lifecycle, ExitCodeIsRelayed) {
  Outcome outcome = RunIn({}, {"sh", "-c", "exit 42"});
  EXPECT_EQ(outcome.exit_code, 42) << outcome.Describe();
  EXPECT_EQ(LastAuditRecord()["code"], 42);
  EXPECT_EQ(LastAuditRecord()["source"], "command");
}

TEST_F(Lifecycle, DeathBySignalGives128PlusTheSignal) {
  Outcome outcome = RunIn({"--allow-exec", ProbesDir()}, {ProbePath("segfault")});
  EXPECT_EQ(outcome.exit_code, 128 + SIGSEGV) << outcome.Describe();
  EXPECT_EQ(LastAuditRecord()["signal"], SIGSEGV);
}

TEST_F(Lifecycle, TimeoutKillsTheWholeTree) {
  std::string child = SleepToken(), grandchild = SleepToken();
  Outcome outcome =
      RunIn({"--timeout", "1"}, {"sh", "-c", "(setsid sleep " + grandchild + " &); exec sleep " + child}, Bounded());
  EXPECT_EQ(outcome.exit_code, 124) << outcome.Describe();
  EXPECT_LT(outcome.elapsed, 5s);
  EXPECT_EQ(LastAuditRecord()["event"], "failed");
  EXPECT_EQ(LastAuditRecord()["reason"], "timeout");
  ExpectNoSurvivors({child, grandchild}, 0ms);
}

// In read-only mode corral relays the command's stderr (to spot denials).
// A reader of corral's stderr that stops reading must not stall the
// deadline: the command is killed on time even though corral itself then
// waits for the reader to take its own last words.
TEST_F(Lifecycle, TimeoutHoldsWhileStderrIsNotRead) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);
  std::string token = SleepToken();
  SpawnOptions options = Defaults({});
  options.stderr_fd = pipe_fds[1];
  Process run(RunArgv({"--mode", "read-only", "--timeout", "1"},
                      {"sh", "-c", "head -c 500000 /dev/zero >&2; exec sleep " + token}),
              options);
  ::close(pipe_fds[1]);
  // Nobody reads the pipe, so without the fix the command blocks in head
  // forever and never reaches the sleep; with it, the relay buffers and the
  // whole tree is killed at the deadline.
  // (corral's own command line holds the token too, so match the sleep's.)
  std::string sleep = CommandLine({"sleep", token});
  EXPECT_TRUE(WaitFor([&] { return !ProcessesStartingWith(sleep).empty(); }, 20s)) << "the command was stalled";
  EXPECT_TRUE(WaitFor([&] { return ProcessesStartingWith(sleep).empty(); }, 20s)) << "the deadline did not hold";
  std::string drained;
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;) drained.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  const Outcome& outcome = run.Wait();
  EXPECT_EQ(outcome.exit_code, 124) << outcome.Describe();
}

TEST_F(Lifecycle, BackgroundProcessesDieWhenTheCommandExits) {
  std::string orphan = SleepToken();
  Outcome outcome = RunIn({}, {"sh", "-c", "(setsid sleep " + orphan + " &); exit 3"});
  EXPECT_EQ(outcome.exit_code, 3) << outcome.Describe();
  ExpectNoSurvivors({orphan}, 0ms);
}

// corral returns before the kernel has freed the sandbox's namespaces, but
// only after init has killed and reaped every process in them: a background
// writer the command left behind writes nothing once corral has returned.
TEST_F(Lifecycle, NothingOfTheSandboxRunsOnceCorralReturns) {
  std::string orphan = SleepToken();
  Outcome outcome = RunIn({}, {"sh", "-c",
                               "(setsid sleep " + orphan + " &); (trap '' TERM HUP; while :; do echo x >> log; done) & "
                               "while [ ! -s log ]; do :; done; exit 5"});
  ASSERT_EQ(outcome.exit_code, 5) << outcome.Describe();
  ExpectNoSurvivors({orphan}, 0ms);
  std::error_code error;
  auto size = std::filesystem::file_size(workspace_ / "log", error);
  ASSERT_FALSE(error) << error.message();
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(std::filesystem::file_size(workspace_ / "log"), size) << "a process of the sandbox still wrote";
}

// Init kills and reaps the rest before it reports the command's status. Held
// in its last write (its stderr is a full pipe nobody reads, and in
// read-only mode corral relays the command's stderr), corral has that status
// and cannot exit; by then the orphan the command left must be gone already,
// as the host's /proc shows.
TEST_F(Lifecycle, NothingOfTheSandboxRunsOnceCorralHasTheStatus) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK), 0);
  std::string filler(4096, 'f');
  while (::write(pipe_fds[1], filler.data(), filler.size()) > 0) {
  }
  ASSERT_EQ(::fcntl(pipe_fds[1], F_SETFL, 0), 0);
  std::string token = SleepToken();
  std::string script = "setsid sleep " + token + " & orphan=$!; "
                       "while [ ! -e go ]; do sleep 0.01; done; echo left >&2; exit 5";
  SpawnOptions options = Defaults(Bounded());
  options.stderr_fd = pipe_fds[1];
  Process run(RunArgv({"--mode", "read-only"}, {"sh", "-c", script}), options);
  ::close(pipe_fds[1]);
  std::string orphan = CommandLine({"sleep", token});
  std::string command = CommandLine({"sh", "-c", script});
  // The command ends once the test has seen its orphan run.
  bool started = WaitFor([&] { return !ProcessesStartingWith(orphan).empty(); }, 10s);
  workspace_.Write("go", "");
  bool exited = WaitFor([&] { return ProcessesStartingWith(command).empty(); }, 10s);
  bool emptied = WaitFor([&] { return ProcessesStartingWith(orphan).empty(); }, 3s);
  EXPECT_TRUE(run.Running()) << "corral was to be held in its write";
  for (pid_t pid : ProcessesStartingWith(orphan)) ::kill(pid, SIGKILL);
  ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
  std::string drained;
  char buffer[1 << 16];
  WaitFor([&] {
    ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) drained.append(buffer, static_cast<size_t>(n));
    return n == 0;
  }, 10s);
  ::close(pipe_fds[0]);
  const Outcome& outcome = run.Wait();
  EXPECT_TRUE(started) << outcome.Describe();
  EXPECT_TRUE(exited) << outcome.Describe();
  EXPECT_TRUE(emptied) << "the orphan still ran while corral held the command's status";
  EXPECT_EQ(outcome.exit_code, 5) << outcome.Describe();
}

TEST_F(Lifecycle, SigintAndSigtermAreForwardedToTheCommand) {
  for (int sig : {SIGINT, SIGTERM}) {
    SCOPED_TRACE(sig);
    ::unlink((workspace_ / "ready").c_str());
    std::string name = sig == SIGINT ? "INT" : "TERM";
    std::unique_ptr<Process> run = StartReady("trap 'echo " + name + " > got; exit " + std::to_string(128 + sig) + "' " +
                                              name + "; touch ready; while :; do sleep 0.05; done");
    ASSERT_EQ(::kill(run->pid(), sig), 0);
    const Outcome& outcome = run->Wait();
    EXPECT_EQ(outcome.exit_code, 128 + sig) << outcome.Describe();
    EXPECT_EQ(ReadFile(workspace_ / "got"), name + "\n");
    if (HasFailure()) break;  // the next signal would wait out the same bound
  }
}

TEST_F(Lifecycle, ForwardedSignalTerminatesACommandWithoutAHandler) {
  // corral's init (PID 1 of the namespace) passes the signal on to the
  // command's process group: a command without a handler dies by it, and
  // the run reports 128 + the signal, as it would outside.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    SCOPED_TRACE(sig);
    std::string token = SleepToken();
    Process run(RunArgv({}, {"sleep", token}), Defaults(Bounded()));
    // The sleep itself (corral's own command line names the token too).
    ASSERT_TRUE(WaitFor([&] { return !ProcessesStartingWith(CommandLine({"sleep", token})).empty(); }, 10s))
        << run.OutputSoFar();
    ASSERT_EQ(::kill(run.pid(), sig), 0);
    const Outcome& outcome = run.Wait();
    EXPECT_EQ(outcome.exit_code, 128 + sig) << outcome.Describe();
    EXPECT_EQ(LastAuditRecord()["signal"], sig);
    ExpectNoSurvivors({token}, 5s);
    if (HasFailure()) break;
  }
}

// The first signal to corral is the command's to handle; a second one ends
// the sandbox, so a command that ignores every signal, or stopped itself
// (the forwarded signal comes with a SIGCONT), cannot keep corral running.
TEST_F(Lifecycle, ASecondSignalEndsACommandThatIgnoresOrStopped) {
  const std::vector<std::string> scripts = {"trap '' INT TERM HUP QUIT; touch ready; while :; do sleep 0.05; done",
                                            "touch ready; kill -STOP $$; echo resumed"};
  for (const std::string& script : scripts) {
    SCOPED_TRACE(script);
    ::unlink((workspace_ / "ready").c_str());
    std::unique_ptr<Process> run = StartReady(script);
    ASSERT_EQ(::kill(run->pid(), SIGTERM), 0);
    bool ended = WaitFor([&] { return !run->Running(); }, 2s);
    if (!ended) {
      ASSERT_EQ(::kill(run->pid(), SIGTERM), 0);
    }
    ASSERT_TRUE(WaitFor([&] { return !run->Running(); }, 5s)) << "corral still runs after two SIGTERMs";
    const Outcome& outcome = run->Wait();
    EXPECT_EQ(outcome.exit_code, 128 + SIGTERM) << outcome.Describe();
    // The ignoring one needed the second signal; the stopped one died of the first.
    EXPECT_EQ(ended, script.find("STOP") != std::string::npos) << outcome.Describe();
    if (HasFailure()) break;
  }
}

TEST_F(Lifecycle, SignalsBehaveAsOutsideTheSandbox) {
  // The command is not PID 1 (corral's init is), so a signal it sends itself,
  // SIGPIPE and SIGALRM take their default action as anywhere else.
  Outcome self = RunIn({}, {"sh", "-c", "kill -USR1 $$; exit 3"});
  EXPECT_EQ(self.exit_code, 128 + SIGUSR1) << self.Describe();
  Outcome pipe = RunIn({}, {"sh", "-c", "(yes; echo $? > status) | head -1 > /dev/null"});
  EXPECT_EQ(pipe.exit_code, 0) << pipe.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "status"), std::to_string(128 + SIGPIPE) + "\n");
  Outcome alarm = RunIn({}, {"perl", "-e", "alarm 1; sleep 5"});
  EXPECT_EQ(alarm.exit_code, 128 + SIGALRM) << alarm.Describe();
}

TEST_F(Lifecycle, KillingCorralKillsTheSandbox) {
  std::string child = SleepToken(), grandchild = SleepToken();
  std::unique_ptr<Process> run =
      StartReady("(setsid sleep " + grandchild + " &); touch ready; exec sleep " + child);
  ASSERT_FALSE(ProcessesMatching(child).empty());
  ASSERT_EQ(::kill(run->pid(), SIGKILL), 0);
  EXPECT_EQ(run->Wait().signal, SIGKILL);
  ExpectNoSurvivors({child, grandchild}, 5s);
}

}  // namespace
}  // namespace corral_it
