// The headless approval channel through the `corral` binary, driven as a
// harness drives it: a socketpair, one end passed as --approval-fd, the
// test answering on the other (docs/approval.md). Every denial is judged
// from outside: the canary the command would write is absent, the trail
// has no `spawned` record, and the harness's end of the socket shows what
// corral (and only corral) wrote to it.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "approval_channel.h"
#include "harness.h"

namespace corral_it {
namespace {

constexpr int kExitUsage = 64;
constexpr int kExitPolicy = 77;

class ApprovalChannel : public SandboxTest {
 protected:
  // A command the classifier cannot read (a redirection), so ask-dangerous asks.
  const std::vector<std::string> kWriteCanary = {"sh", "-c", "echo hi > canary"};

  std::vector<std::string> AskingRun(Channel& channel, const std::vector<std::string>& command,
                                     const std::vector<std::string>& more = {}) {
    std::vector<std::string> flags = {"--approval", "ask-dangerous", "--approval-fd", channel.corral_fd()};
    flags.insert(flags.end(), more.begin(), more.end());
    return RunArgv(flags, command);
  }

  // Starts `argv`, answers its one question with `reply(request)`, and
  // returns corral's outcome and the request.
  std::pair<Outcome, nlohmann::json> AskAndAnswer(Channel& channel, const std::vector<std::string>& argv,
                                                  const std::function<void(const nlohmann::json&)>& reply) {
    Process process(argv, Defaults({}));
    channel.DropCorralsEnd();
    std::optional<nlohmann::json> request = channel.NextRequest();
    EXPECT_TRUE(request.has_value()) << "corral did not ask";
    if (request) reply(*request);
    Outcome outcome = process.Wait();
    return {outcome, request.value_or(nlohmann::json())};
  }

  void ExpectRefused(const Outcome& outcome, const std::string& why) {
    EXPECT_EQ(outcome.exit_code, kExitPolicy) << outcome.Describe();
    EXPECT_NE(outcome.err.find(why), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(workspace_ / "canary"));
    EXPECT_EQ(AuditEvents("spawned").size(), 0u);
  }

  std::string NewSession() {
    Outcome outcome = Corral({"session", "new", "--cwd", workspace_.path()});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    return outcome.out.substr(0, outcome.out.find('\n'));
  }
};

TEST_F(ApprovalChannel, AllowOnceRunsTheCommandAndTheRequestSaysWhatIsAsked) {
  Channel channel;
  auto [outcome, request] = AskAndAnswer(channel, AskingRun(channel, kWriteCanary),
                                         [&](const nlohmann::json& r) { channel.Answer(r, "allow-once"); });
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "canary").value_or(""), "hi\n");
  EXPECT_EQ(request["v"], 1);
  EXPECT_EQ(request["type"], "approval/request");
  EXPECT_EQ(request["kind"], "approval");
  EXPECT_EQ(request["argv"], nlohmann::json(kWriteCanary));
  EXPECT_EQ(request["policy"], "ask-dangerous");
  EXPECT_EQ(request["mode"], "workspace-write");
  EXPECT_EQ(request["workspace"], workspace_.path());
  EXPECT_EQ(request["cwd"], workspace_.path());
  EXPECT_TRUE(request["session"].is_null());
  EXPECT_EQ(request["answers"], nlohmann::json({"allow-once", "deny"}));
  EXPECT_EQ(channel.Rest(), "");  // one question, then the end of input
  std::vector<nlohmann::json> approval = AuditEvents("approval");
  ASSERT_EQ(approval.size(), 1u);
  EXPECT_EQ(approval[0]["basis"], "answered-once");
}

TEST_F(ApprovalChannel, DenyRunsNothing) {
  Channel channel;
  auto [outcome, request] = AskAndAnswer(channel, AskingRun(channel, kWriteCanary),
                                         [&](const nlohmann::json& r) { channel.Answer(r, "deny"); });
  ExpectRefused(outcome, "approval: ");
  EXPECT_EQ(AuditEvents("approval").at(0)["basis"], "answered-deny");
}

// Asked once: the second run of the session finds the answer in the
// session's log, and the harness sees no question at all.
TEST_F(ApprovalChannel, AllowForSessionIsAskedOnceForTheWholeSession) {
  std::string id = NewSession();
  Channel first;
  auto [outcome, request] = AskAndAnswer(first, AskingRun(first, kWriteCanary, {"--session", id}),
                                         [&](const nlohmann::json& r) { first.Answer(r, "allow-for-session"); });
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(request["session"], id);
  EXPECT_EQ(request["answers"], nlohmann::json({"allow-once", "allow-for-session", "deny"}));
  EXPECT_TRUE(Exists(workspace_ / "canary"));
  std::string log = ReadFile(state_ / ("corral/sessions/" + id + ".jsonl")).value_or("");
  EXPECT_NE(log.find(R"("type":"approval/allow")"), std::string::npos) << log;
  EXPECT_EQ(AuditEvents("approval").at(0)["basis"], "answered-for-session");

  ASSERT_EQ(::unlink((workspace_ / "canary").c_str()), 0);
  Channel second;
  Process process(AskingRun(second, kWriteCanary, {"--session", id}), Defaults({}));
  second.DropCorralsEnd();
  EXPECT_FALSE(second.NextRequest().has_value());  // end of input, never asked
  Outcome again = process.Wait();
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
  EXPECT_EQ(AuditEvents("approval").at(0)["basis"], "remembered-for-session");
}

TEST_F(ApprovalChannel, GarbageAnswersDenyEachWithItsOwnMessage) {
  const std::pair<std::function<void(Channel&, const nlohmann::json&)>, std::string> cases[] = {
      {[](Channel& c, const nlohmann::json&) { c.Send("yes please\n"); }, "is not JSON"},
      {[](Channel& c, const nlohmann::json&) { c.Send(R"({"v":1,"id":"0000","answer":"allow-once"})" "\n"); },
       "not for the question asked"},
      {[](Channel& c, const nlohmann::json& r) { c.Answer(r, "always"); }, "unknown answer"},
      {[](Channel& c, const nlohmann::json& r) { c.Answer(r, "allow-for-session"); }, "was not offered"},
      {[](Channel& c, const nlohmann::json&) { c.Send(std::string(5000, '{') + "\n"); }, "longer than 4096 bytes"},
      {[](Channel& c, const nlohmann::json&) { c.Send(R"({"v":1,"id")"); c.CloseHarness(); }, "closed in the middle"},
      {[](Channel& c, const nlohmann::json&) { c.CloseHarness(); }, "closed before an answer"},
  };
  for (const auto& [reply, why] : cases) {
    Channel channel;
    auto [outcome, request] = AskAndAnswer(channel, AskingRun(channel, kWriteCanary),
                                           [&](const nlohmann::json& r) { reply(channel, r); });
    ExpectRefused(outcome, why);
    EXPECT_EQ(AuditEvents("approval").at(0)["basis"], "approver-failed") << why;
  }
}

// The command runs after the gate: the channel is closed before it starts,
// so it cannot answer its own next question or forge lines for the
// harness. A probe writes to every descriptor from 3 to 1023 (through a
// shell line the classifier cannot read, so the question is asked and
// answered first); the harness's end sees corral's request and nothing else.
TEST_F(ApprovalChannel, TheCommandCannotWriteToTheChannel) {
  Channel channel;
  const std::vector<std::string> forge = {"sh", "-c", "\"$0\" FORGED > canary", ProbePath("write_fds")};
  auto [outcome, request] = AskAndAnswer(channel, AskingRun(channel, forge, {"--allow-exec", ProbesDir()}),
                                         [&](const nlohmann::json& r) { channel.Answer(r, "allow-once"); });
  EXPECT_EQ(outcome.exit_code, kProbeBlocked) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));  // the probe ran...
  EXPECT_EQ(channel.Rest(), "");  // ...and nothing it wrote reached the harness
}

// From outside, while the command runs: the harness's end reads end of
// input (so no process holds corral's end any more), and the sandboxed
// process's /proc/PID/fd (listed as root) names no descriptor of it.
TEST_F(ApprovalChannel, WhileTheCommandRunsNoProcessHoldsTheChannel) {
  Channel channel;
  std::string link = channel.corral_link();
  std::string token = RandomToken("held");
  const std::vector<std::string> waiting = {
      "sh", "-c", "touch started; while [ ! -e release ]; do sleep 0.05; done; : " + token};
  Process process(AskingRun(channel, waiting), Defaults({}));
  channel.DropCorralsEnd();
  std::optional<nlohmann::json> request = channel.NextRequest();
  ASSERT_TRUE(request.has_value());
  channel.Answer(*request, "allow-once");
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "started"); }, 30s)) << process.OutputSoFar();
  EXPECT_TRUE(channel.EndOfInputWithin(10s)) << "a copy of corral's end is still open while the command runs";
  // corral's own process and the sandboxed ones: each command line holds the token.
  std::vector<pid_t> sandboxed = ProcessesMatching(token);
  ASSERT_GE(sandboxed.size(), 2u) << "corral and the sandboxed shell are not visible from outside";
  for (pid_t pid : sandboxed) {
    std::error_code error;
    size_t listed = 0;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", error)) {
      ++listed;
      std::error_code unreadable;
      EXPECT_NE(std::filesystem::read_symlink(entry.path(), unreadable).string(), link) << entry.path();
    }
    if (!error) {
      EXPECT_GE(listed, 3u) << "/proc/" << pid << "/fd lists fewer than stdin, stdout and stderr";
    } else {
      // corral and its sandbox are listed as root; as another user, the
      // kernel refuses the sandboxed (non-dumpable) processes' listings, and
      // the end of input above is the proof for them.
      EXPECT_NE(::geteuid(), 0u) << "/proc/" << pid << "/fd: " << error.message();
      EXPECT_EQ(error, std::errc::permission_denied) << "/proc/" << pid << "/fd: " << error.message();
    }
  }
  EXPECT_TRUE(process.Running());
  WriteFile(workspace_ / "release", "");
  EXPECT_EQ(process.Wait().exit_code, 0) << process.Wait().Describe();
}

// What the command cannot do to the session's log, judged from outside:
// write an approval/allow line into it (its directory is hidden even under
// a grant that shows the state directory's parent), or get a grant that
// could (a write grant on corral's state, or a workspace holding it, runs
// nothing). The log is byte for byte what corral wrote, and the next run of
// the session is asked again.
TEST_F(ApprovalChannel, TheCommandCannotForgeAnAllowForSessionInTheSessionLog) {
  std::string id = NewSession();
  std::string log_path = state_ / ("corral/sessions/" + id + ".jsonl");
  std::string before = ReadFile(log_path).value_or("");
  ASSERT_FALSE(before.empty());
  std::string forged = R"({"v":1,"type":"approval/allow","ts":"t","data":{"class":"command:unparsed-shell",)"
                       R"("mode":"workspace-write","workspace":")" + workspace_.path() + R"("}})";
  const std::vector<std::string> forge = {
      "sh", "-c", "if printf '%s\\n' \"$0\" >> \"$1\"; then echo wrote; else echo refused; fi > canary", forged,
      log_path};
  Channel channel;
  auto [outcome, request] =
      AskAndAnswer(channel, AskingRun(channel, forge, {"--session", id, "--allow-read", state_.path()}),
                   [&](const nlohmann::json& r) { channel.Answer(r, "allow-once"); });
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));  // it ran, and tried
  EXPECT_EQ(ReadFile(log_path).value_or(""), before);

  for (const std::vector<std::string>& grant : {std::vector<std::string>{"--allow-write", state_.path()},
                                                std::vector<std::string>{"--workspace", state_.path()}}) {
    Outcome refused = Execute(RunArgv(grant, {"sh", "-c", "echo x >> \"$0\"", log_path}), Defaults({}));
    EXPECT_EQ(refused.exit_code, kExitPolicy) << refused.Describe();
    EXPECT_EQ(ReadFile(log_path).value_or(""), before);
  }

  Channel next;
  auto [again, asked] = AskAndAnswer(next, AskingRun(next, kWriteCanary, {"--session", id}),
                                     [&](const nlohmann::json& r) { next.Answer(r, "deny"); });
  EXPECT_EQ(again.exit_code, kExitPolicy) << again.Describe();
  EXPECT_EQ(asked["class"], "command:unparsed-shell");
}

// allow-for-session covers what was asked and no more: another class, a
// wider mode, another session and a run with no session are all asked.
TEST_F(ApprovalChannel, AllowForSessionDoesNotWidenBeyondWhatWasAsked) {
  std::string id = NewSession();
  const std::vector<std::string> quiet = {"sh", "-c", "echo ok > /dev/null"};
  Channel first;
  auto [allowed, request] =
      AskAndAnswer(first, AskingRun(first, quiet, {"--session", id, "--mode", "read-only"}),
                   [&](const nlohmann::json& r) { first.Answer(r, "allow-for-session"); });
  ASSERT_EQ(allowed.exit_code, 0) << allowed.Describe();
  EXPECT_EQ(request["mode"], "read-only");
  EXPECT_EQ(request["class"], "command:unparsed-shell");

  struct Case {
    std::string what;
    std::vector<std::string> flags, command;
    std::string class_key;
  };
  std::string other = NewSession();
  const Case cases[] = {
      {"another class", {"--session", id, "--mode", "read-only"}, {"rm", "-rf", "gone"}, ""},
      {"a wider mode", {"--session", id, "--mode", "workspace-write"}, quiet, "command:unparsed-shell"},
      {"another session", {"--session", other, "--mode", "read-only"}, quiet, "command:unparsed-shell"},
      {"no session", {"--mode", "read-only"}, quiet, "command:unparsed-shell"},
  };
  for (const Case& c : cases) {
    Channel channel;
    auto [denied, asked] = AskAndAnswer(channel, AskingRun(channel, c.command, c.flags),
                                        [&](const nlohmann::json& r) { channel.Answer(r, "deny"); });
    EXPECT_EQ(denied.exit_code, kExitPolicy) << c.what << ": " << denied.Describe();
    if (!c.class_key.empty()) {
      EXPECT_EQ(asked["class"], c.class_key) << c.what;
    }
    EXPECT_NE(asked["class"], "") << c.what;
  }
  // And the same class, mode and workspace is not asked.
  Channel same;
  Process process(AskingRun(same, quiet, {"--session", id, "--mode", "read-only"}), Defaults({}));
  same.DropCorralsEnd();
  EXPECT_FALSE(same.NextRequest().has_value());
  EXPECT_EQ(process.Wait().exit_code, 0) << process.Wait().Describe();
}

// `corral wrap` asks at wrap time; the argv it prints runs a policy file
// that never asks again, so it needs no channel.
TEST_F(ApprovalChannel, WrapAsksOverTheChannelAndItsArgvRunsWithoutOne) {
  Channel channel;
  std::vector<std::string> wrap = {CorralBin(), "wrap", "--json", "--backend", "native", "--approval",
                                   "ask-dangerous", "--approval-fd", channel.corral_fd(), "--"};
  wrap.insert(wrap.end(), kWriteCanary.begin(), kWriteCanary.end());
  auto [wrapped, request] =
      AskAndAnswer(channel, wrap, [&](const nlohmann::json& r) { channel.Answer(r, "allow-once"); });
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.Describe();
  EXPECT_EQ(request["argv"], nlohmann::json(kWriteCanary));
  std::vector<std::string> argv = nlohmann::json::parse(wrapped.out)["argv"];
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--approval-fd"), argv.end());
  Outcome ran = Execute(argv, Defaults({}));
  EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));

  Channel refusing;
  wrap[8] = refusing.corral_fd();
  auto [denied, asked] =
      AskAndAnswer(refusing, wrap, [&](const nlohmann::json& r) { refusing.Answer(r, "deny"); });
  EXPECT_EQ(denied.exit_code, kExitPolicy) << denied.Describe();
  EXPECT_EQ(nlohmann::json::parse(denied.out)["error"]["code"], "approval_denied") << denied.out;

  // A descriptor it cannot use: a usage refusal, as JSON too.
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  wrap[8] = std::to_string(ends[0]);
  Outcome unusable = Execute(wrap, Defaults({}));
  ::close(ends[0]);
  ::close(ends[1]);
  EXPECT_EQ(unusable.exit_code, kExitUsage) << unusable.Describe();
  nlohmann::json error = nlohmann::json::parse(unusable.out, nullptr, false);
  ASSERT_TRUE(error.is_object()) << unusable.Describe();
  EXPECT_EQ(error["error"]["code"], "approval_fd_invalid") << unusable.out;
  EXPECT_EQ(error["error"]["kind"], "usage") << unusable.out;
}

TEST_F(ApprovalChannel, ADescriptorThatIsNotAStreamSocketIsRefusedBeforeAnythingRuns) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  Outcome outcome = Execute(RunArgv({"--approval", "ask-dangerous", "--approval-fd", std::to_string(ends[0])},
                                    kWriteCanary),
                            Defaults({}));
  ::close(ends[0]);
  ::close(ends[1]);
  EXPECT_EQ(outcome.exit_code, kExitUsage) << outcome.Describe();
  EXPECT_NE(outcome.err.find("must be a connected stream socket"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));
  Outcome stdio = Execute(RunArgv({"--approval-fd", "1"}, kWriteCanary), Defaults({}));
  EXPECT_EQ(stdio.exit_code, kExitUsage) << stdio.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));

  // A regular file, a descriptor that is not open, and a socket no one is
  // connected to: each refused with its reason, and nothing runs.
  int file = ::open((outside_ / "answers").c_str(), O_RDWR | O_CREAT, 0600);
  ASSERT_GE(file, 0);
  int listening = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(listening, 0);
  const std::pair<int, std::string> bad[] = {
      {file, "must be a connected stream socket"}, {999, "is not an open descriptor"},
      {listening, "not connected"}};
  for (const auto& [fd, why] : bad) {
    Outcome refused = Execute(RunArgv({"--approval", "ask-dangerous", "--approval-fd", std::to_string(fd)},
                                      kWriteCanary),
                              Defaults({}));
    EXPECT_EQ(refused.exit_code, kExitUsage) << refused.Describe();
    EXPECT_NE(refused.err.find(why), std::string::npos) << refused.Describe();
    EXPECT_FALSE(Exists(workspace_ / "canary"));
  }
  ::close(file);
  ::close(listening);

  // The channel's own socket as the command's stdin would hand it to the
  // command: refused too.
  Channel channel;
  SpawnOptions as_stdin = Defaults({});
  as_stdin.stdin_fd = std::stoi(channel.corral_fd());
  Outcome shared = Execute(AskingRun(channel, kWriteCanary), as_stdin);
  EXPECT_EQ(shared.exit_code, kExitUsage) << shared.Describe();
  EXPECT_NE(shared.err.find("same socket as descriptor 0"), std::string::npos) << shared.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));
}

}  // namespace
}  // namespace corral_it
