// Where the audit trail goes, judged from outside after each run: by
// default a private file in corral's state directory, out of the command's
// reach, that concurrent runs append to without interleaving and that is
// rotated at its cap under a lock; --audit - and the user config's
// audit.trail move it, a project corral.toml cannot. On stderr corral
// itself prints only what must be acted on.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <map>
#include <memory>

#include "harness.h"

namespace corral_it {
namespace {

constexpr off_t kCap = off_t{4} << 20;  // kAuditFileCap (audit/audit.h)

class Trail : public SandboxTest {
 protected:
  std::string StateTrail() const { return state_ / "corral/audit.jsonl"; }
  std::string RotatedTrail() const { return state_ / "corral/audit.1.jsonl"; }

  // Every line of `path` is one JSON object; returns them.
  std::vector<nlohmann::json> Records(const std::string& path) const {
    std::vector<nlohmann::json> records;
    std::string text = ReadFile(path).value_or("");
    size_t start = 0;
    for (size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
      nlohmann::json record = nlohmann::json::parse(text.substr(start, end - start), nullptr, false);
      EXPECT_TRUE(record.is_object()) << "a line that is not one record: " << text.substr(start, end - start);
      records.push_back(std::move(record));
    }
    EXPECT_EQ(start, text.size()) << "the trail ends mid-record";
    return records;
  }

  // Each run id in `records` has exactly one spawned then one exited, and there are `runs` of them.
  void ExpectWholeRuns(const std::vector<nlohmann::json>& records, size_t runs) const {
    std::map<std::string, std::vector<std::string>> by_run;
    for (const nlohmann::json& record : records) {
      by_run[record.value("run", "")].push_back(record.value("event", ""));
    }
    EXPECT_EQ(by_run.size(), runs);
    for (const auto& [run, events] : by_run) {
      EXPECT_EQ(events, (std::vector<std::string>{"spawned", "exited"})) << run;
    }
  }

  static mode_t ModeOf(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  }

  void WriteUserConfig(const std::string& text) {
    config_.Write("corral/config.toml", text, 0600);
  }
};

// No --audit: the records go to <state>/audit.jsonl (0600, yours) and none
// reaches the command's stderr.
TEST_F(Trail, TheDefaultTrailIsAPrivateFileInTheStateDirectory) {
  Outcome outcome = Corral({"run", "--", "sh", "-c", "echo said >&2"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.err, "said\n") << "only the command's own stderr";
  std::vector<nlohmann::json> records = Records(StateTrail());
  ExpectWholeRuns(records, 1);
  EXPECT_EQ(ModeOf(StateTrail()), 0600u);
  struct stat st;
  ASSERT_EQ(::stat(StateTrail().c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  // One made readable by others meanwhile is narrowed again by the next run.
  ASSERT_EQ(::chmod(StateTrail().c_str(), 0644), 0);
  ASSERT_EQ(Corral({"run", "--", "true"}).exit_code, 0);
  EXPECT_EQ(ModeOf(StateTrail()), 0600u);
  ExpectWholeRuns(Records(StateTrail()), 2);
}

// The command knows the path, and the workspace is its to write: it can
// neither see the trail nor write to it, nor plant a link the next run
// follows. By default the private /tmp hides the state directory; inside a
// read grant (the second run) only corral's masks of its own state do.
TEST_F(Trail, TheCommandCannotReachOrRedirectTheDefaultTrail) {
  ASSERT_EQ(Corral({"run", "--", "true"}).exit_code, 0);
  std::string token = RandomToken("FORGED");
  std::string dir = state_ / "corral";
  std::string script = "cat " + StateTrail() + "; ls " + dir + "; echo '" + token + "' >> " + StateTrail() +
                       "; ln -sf " + (workspace_ / "mine.jsonl") + " " + StateTrail() + "; rm -f " + StateTrail() +
                       "; true";
  for (const std::vector<std::string>& grant : {std::vector<std::string>{},
                                                std::vector<std::string>{"--allow-read", state_.path()}}) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), grant.begin(), grant.end());
    args.insert(args.end(), {"--", "sh", "-c", script});
    Outcome outcome = Corral(args);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_EQ(outcome.out.find("\"event\""), std::string::npos) << "the trail was read: " << outcome.Describe();
    EXPECT_EQ(outcome.out.find("audit.jsonl"), std::string::npos) << "the state was listed: " << outcome.Describe();
  }
  ASSERT_EQ(Corral({"run", "--", "true"}).exit_code, 0);
  std::string text = ReadFile(StateTrail()).value_or("");
  EXPECT_EQ(text.find(token), std::string::npos);
  ExpectWholeRuns(Records(StateTrail()), 4);
  EXPECT_FALSE(Exists(workspace_ / "mine.jsonl"));
}

TEST_F(Trail, AuditDashWritesTheTrailToStderr) {
  Outcome outcome = Corral({"run", "--audit", "-", "--", "true"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("\"event\":\"spawned\""), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.err.find("\"event\":\"exited\""), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(StateTrail()));
}

// A pipe for corral's stderr that nobody drains: filled to the brim through
// an open file of its own (O_NONBLOCK there leaves corral's write end
// blocking), whenever the test says.
class StalledPipe {
 public:
  StalledPipe() {
    int ends[2];
    EXPECT_EQ(::pipe2(ends, O_CLOEXEC), 0);
    read_ = ends[0];
    write_ = ends[1];
  }
  ~StalledPipe() {
    ::close(read_);
    ::close(write_);
  }
  int write_end() const { return write_; }
  // Reads what is there now, without waiting.
  std::string Drain() {
    std::string taken;
    char buffer[65536];
    for (;;) {
      struct pollfd ready = {read_, POLLIN, 0};
      if (::poll(&ready, 1, 0) != 1) return taken;
      ssize_t n = ::read(read_, buffer, sizeof buffer);
      if (n <= 0) return taken;
      taken.append(buffer, static_cast<size_t>(n));
    }
  }
  void Fill() {
    int filler = ::open(("/proc/self/fd/" + std::to_string(write_)).c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(filler, 0);
    std::string block(4096, 'x');
    while (::write(filler, block.data(), block.size()) > 0) {
    }
    ::close(filler);
  }

 private:
  int read_ = -1, write_ = -1;
};

// Corral is waiting on the stalled trail with the run's stops held pending:
// SIGINT blocked (bit 1 of SigBlk) and asleep.
bool WaitsWithStopsHeld(pid_t pid) {
  std::optional<std::string> blocked = StatusField(pid, "SigBlk");
  std::optional<std::string> state = StatusField(pid, "State");
  return blocked && state && (std::stoull(*blocked, nullptr, 16) & 0x2) != 0 && state->rfind("S", 0) == 0;
}

// --audit - on a stderr whose reader stopped: the spawned record cannot be
// written, and corral waits for room with Ctrl-C held for the command. A
// Ctrl-C then gives the trail up: the command starts, gets the signal at
// once and never reaches its canary, and corral ends as it does (130),
// instead of waiting for a reader that never comes.
TEST_F(Trail, AStalledTrailBeforeTheSpawnYieldsToCtrlC) {
  StalledPipe stderr_pipe;
  stderr_pipe.Fill();
  SpawnOptions options = Defaults({});
  options.stderr_fd = stderr_pipe.write_end();
  options.timeout = 10s;
  Process run({CorralBin(), "run", "--audit", "-", "--", "sh", "-c", "sleep 2; touch canary"}, options);
  ASSERT_TRUE(WaitFor([&] { return WaitsWithStopsHeld(run.pid()); }, 10s)) << "corral never waited on the trail";
  // Still waiting a while later: the trail is what holds it.
  ::usleep(300 * 1000);
  ASSERT_TRUE(run.Running());
  ASSERT_EQ(::kill(run.pid(), SIGINT), 0);
  const Outcome& outcome = run.Wait();
  EXPECT_FALSE(outcome.timed_out) << "corral was deaf to Ctrl-C while its trail stalled";
  EXPECT_EQ(outcome.exit_code, 130) << outcome.Describe();
  ::sleep(2);
  EXPECT_FALSE(Exists(workspace_ / "canary"));
}

// The same stall after the command: the exited record waits, Ctrl-C gives
// the trail up, and the run's work after the command still happens (the
// hook the command made is taken out) before corral ends with the
// command's status.
TEST_F(Trail, AStalledTrailAfterTheCommandYieldsToCtrlCAndTheSweepStillRuns) {
  ASSERT_EQ(::mkdir((workspace_ / ".git").c_str(), 0755), 0);
  StalledPipe stderr_pipe;
  SpawnOptions options = Defaults({});
  options.stderr_fd = stderr_pipe.write_end();
  options.timeout = 10s;
  Process run({CorralBin(), "run", "--audit", "-", "--", "sh", "-c",
               "mkdir .git/hooks && printf '#!/bin/sh\\n' > .git/hooks/pre-commit && touch started && sleep 1 && "
               "touch ending"},
              options);
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "started"); }, 10s));
  std::string taken = stderr_pipe.Drain();
  EXPECT_NE(taken.find("\"event\":\"spawned\""), std::string::npos) << taken;
  stderr_pipe.Fill();
  // The command's last step, then (300 ms later) corral on the exited record.
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "ending"); }, 10s));
  // (Polled, not judged once: on a loaded host corral may reach the record
  // later than that.)
  ::usleep(300 * 1000);
  ASSERT_TRUE(run.Running());
  ASSERT_TRUE(WaitFor([&] { return WaitsWithStopsHeld(run.pid()); }, 10s)) << "corral is not waiting on the trail";
  ASSERT_EQ(::kill(run.pid(), SIGINT), 0);
  const Outcome& outcome = run.Wait();
  EXPECT_FALSE(outcome.timed_out) << "corral was deaf to Ctrl-C while its trail stalled";
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit"));
}

// Real concurrent runs appending to the one file: every line is one whole
// record, and each run has its spawned and its exited.
TEST_F(Trail, ConcurrentRunsNeverInterleaveRecords) {
  constexpr size_t kRuns = 8;
  std::vector<std::unique_ptr<Process>> runs;
  for (size_t i = 0; i < kRuns; ++i) {
    runs.push_back(std::make_unique<Process>(
        std::vector<std::string>{CorralBin(), "run", "--", "sh", "-c", "echo run " + std::to_string(i)},
        Defaults({})));
  }
  for (auto& run : runs) EXPECT_EQ(run->Wait().exit_code, 0) << run->Wait().Describe();
  ExpectWholeRuns(Records(StateTrail()), kRuns);
}

// A trail at its cap is rotated once, under the lock, however many runs
// start together: audit.1.jsonl is exactly the full file (a second rotation
// would have replaced it with a fresh one), and audit.jsonl has every run.
TEST_F(Trail, AFullTrailIsRotatedOnceUnderTheLock) {
  ASSERT_EQ(Corral({"run", "--", "true"}).exit_code, 0);  // makes the state directory
  ASSERT_EQ(::truncate(StateTrail().c_str(), kCap), 0);
  constexpr size_t kRuns = 6;
  std::vector<std::unique_ptr<Process>> runs;
  for (size_t i = 0; i < kRuns; ++i) {
    runs.push_back(std::make_unique<Process>(std::vector<std::string>{CorralBin(), "run", "--", "true"}, Defaults({})));
  }
  for (auto& run : runs) EXPECT_EQ(run->Wait().exit_code, 0) << run->Wait().Describe();
  struct stat rotated;
  ASSERT_EQ(::stat(RotatedTrail().c_str(), &rotated), 0);
  EXPECT_EQ(rotated.st_size, kCap);
  EXPECT_EQ(ModeOf(RotatedTrail()), 0600u);
  ExpectWholeRuns(Records(StateTrail()), kRuns);
}

TEST_F(Trail, TheUserConfigChoosesTheTrail) {
  WriteUserConfig("[audit]\ntrail = \"" + (outside_ / "configured.jsonl") + "\"\n");
  Outcome outcome = Corral({"run", "--", "true"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  ExpectWholeRuns(Records(outside_ / "configured.jsonl"), 1);
  EXPECT_FALSE(Exists(StateTrail()));

  WriteUserConfig("[audit]\ntrail = \"-\"\n");
  outcome = Corral({"run", "--", "true"});
  EXPECT_NE(outcome.err.find("\"event\":\"exited\""), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(StateTrail()));

  WriteUserConfig("[audit]\ntrail = \"relative.jsonl\"\n");
  outcome = Corral({"run", "--", "touch", outside_ / "ran"});
  EXPECT_EQ(outcome.exit_code, 78) << outcome.Describe();
  EXPECT_NE(outcome.err.find("audit.trail"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(outside_ / "ran"));
}

// A repository's corral.toml cannot send the trail elsewhere or to stderr:
// the run is refused, nothing runs, and the refusal is in the state trail.
TEST_F(Trail, AProjectConfigCannotRedirectOrSilenceTheTrail) {
  for (const std::string& value : {outside_ / "project.jsonl", std::string("-")}) {
    workspace_.Write("corral.toml", "[audit]\ntrail = \"" + value + "\"\n");
    Outcome outcome = Corral({"run", "--", "touch", outside_ / "ran"});
    EXPECT_EQ(outcome.exit_code, 78) << outcome.Describe();
    EXPECT_NE(outcome.err.find("the project config cannot redirect the audit trail"), std::string::npos)
        << outcome.Describe();
    EXPECT_EQ(outcome.err.find("\"event\""), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(outside_ / "ran"));
    EXPECT_FALSE(Exists(outside_ / "project.jsonl"));
  }
  std::vector<nlohmann::json> records = Records(StateTrail());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1]["event"], "failed");
  EXPECT_EQ(records[1]["reason"], "config");
}

// An existing trail readable by others is made the caller's alone.
TEST_F(Trail, AnExistingAuditFileIsMadePrivate) {
  WriteFile(outside_ / "shared.jsonl", "", 0644);
  ::chmod((outside_ / "shared.jsonl").c_str(), 0644);
  Outcome outcome = Corral({"run", "--audit", outside_ / "shared.jsonl", "--", "true"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(ModeOf(outside_ / "shared.jsonl"), 0600u);
  ExpectWholeRuns(Records(outside_ / "shared.jsonl"), 1);
}

// As for a grant, a relative path is refused: nothing is created or run.
TEST_F(Trail, ARelativeAuditPathIsRefusedLikeAGrantPath) {
  Outcome outcome = Corral({"run", "--audit", "trail.jsonl", "--", "touch", outside_ / "ran"});
  EXPECT_EQ(outcome.exit_code, 64) << outcome.Describe();
  EXPECT_NE(outcome.err.find("--audit trail.jsonl: relative path"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "trail.jsonl"));
  EXPECT_FALSE(Exists(outside_ / "ran"));
  Outcome wrapped = Corral({"wrap", "--json", "--audit", "trail.jsonl", "--", "true"});
  EXPECT_EQ(wrapped.exit_code, 64) << wrapped.Describe();
  EXPECT_NE(wrapped.err.find("relative path"), std::string::npos) << wrapped.Describe();
}

// A refusal is one line on stderr, and its record goes to the trail.
TEST_F(Trail, ARefusalIsOneLineOnStderr) {
  Outcome outcome = Corral({"run", "--no-such-flag", "--", "true"});
  EXPECT_EQ(outcome.exit_code, 64) << outcome.Describe();
  EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.Describe();
  EXPECT_TRUE(outcome.err.starts_with("corral: ")) << outcome.Describe();
  std::vector<nlohmann::json> records = Records(StateTrail());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["reason"], "usage");
}

// wrap --json --audit F puts --audit F in the argv it prints; the runner
// that argv starts writes there. The user config's key is passed on too.
TEST_F(Trail, WrapPassesTheTrailToTheRunner) {
  std::string trail = outside_ / "wrapped.jsonl";
  Outcome wrapped = Corral({"wrap", "--json", "--backend", "native", "--audit", trail, "--", "true"});
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.Describe();
  nlohmann::json confined = nlohmann::json::parse(wrapped.out, nullptr, false);
  ASSERT_TRUE(confined.is_object()) << wrapped.Describe();
  std::vector<std::string> argv = confined["argv"].get<std::vector<std::string>>();
  auto flag = std::find(argv.begin(), argv.end(), "--audit");
  ASSERT_NE(flag, argv.end()) << wrapped.out;
  EXPECT_EQ(*(flag + 1), trail);
  Outcome ran = Execute(argv, Defaults({}));
  EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
  ExpectWholeRuns(Records(trail), 1);
  EXPECT_FALSE(Exists(StateTrail()));

  WriteUserConfig("[audit]\ntrail = \"" + (outside_ / "configured.jsonl") + "\"\n");
  wrapped = Corral({"wrap", "--json", "--backend", "native", "--", "true"});
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.Describe();
  argv = nlohmann::json::parse(wrapped.out)["argv"].get<std::vector<std::string>>();
  flag = std::find(argv.begin(), argv.end(), "--audit");
  ASSERT_NE(flag, argv.end()) << wrapped.out;
  EXPECT_EQ(*(flag + 1), outside_ / "configured.jsonl");
}

// The compiled policies wrap writes go to <state>/policies; one not
// rewritten for over a week is removed at the next wrap, and nothing there
// but compiled policies is ever touched.
TEST_F(Trail, WrapWritesPoliciesUnderTheStateDirectoryAndRemovesStaleOnes) {
  Outcome wrapped = Corral({"wrap", "--json", "--backend", "native", "--", "true"});
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.Describe();
  std::vector<std::string> argv = nlohmann::json::parse(wrapped.out)["argv"].get<std::vector<std::string>>();
  ASSERT_GE(argv.size(), 4u);
  std::string dir = state_ / "corral/policies";
  EXPECT_TRUE(argv[3].starts_with(dir + "/")) << wrapped.out;
  EXPECT_EQ(ModeOf(argv[3]), 0600u);
  EXPECT_EQ(ModeOf(dir), 0700u);

  const std::string stale = dir + "/" + std::string(64, 'a') + "-" + std::string(16, 'b') + ".json";
  const std::string recent = dir + "/" + std::string(64, 'c') + "-" + std::string(16, 'd') + ".json";
  const std::string other = dir + "/notes.txt";
  for (const std::string& path : {stale, recent, other}) WriteFile(path, "{}", 0600);
  struct timeval old[2] = {{::time(nullptr) - 8 * 24 * 3600, 0}, {::time(nullptr) - 8 * 24 * 3600, 0}};
  ASSERT_EQ(::utimes(stale.c_str(), old), 0);
  ASSERT_EQ(::utimes(other.c_str(), old), 0);
  wrapped = Corral({"wrap", "--json", "--backend", "native", "--", "echo", "again"});
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.Describe();
  EXPECT_FALSE(Exists(stale));
  EXPECT_TRUE(Exists(recent));
  EXPECT_TRUE(Exists(other));
  EXPECT_TRUE(Exists(argv[3]));
  Outcome ran = Execute(argv, Defaults({}));
  EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
}

}  // namespace
}  // namespace corral_it
