// The headless approval channel through the `corral` binary, driven as a
// harness drives it: a socketpair, one end passed as --approval-fd, the
// test answering on the other (docs/approval.md). Every denial is judged
// from outside: the canary the command would write is absent, the trail
// has no `spawned` record, and the harness's end of the socket shows what
// corral (and only corral) wrote to it.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <functional>

#include "harness.h"

namespace corral_it {
namespace {

constexpr int kExitUsage = 64;
constexpr int kExitPolicy = 77;

// The harness's end of a socketpair; corral's end is inherited by the next
// Process only (the test's copy is closed once corral holds it).
class Channel {
 public:
  Channel() {
    int ends[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, ends), 0);
    harness_ = ends[0];
    corral_ = ends[1];
    ::fcntl(harness_, F_SETFD, FD_CLOEXEC);
  }
  ~Channel() {
    CloseHarness();
    DropCorralsEnd();
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  std::string corral_fd() const { return std::to_string(corral_); }
  // Once corral runs: only its copy keeps its end open, so its closing is an EOF here.
  void DropCorralsEnd() {
    if (corral_ >= 0) ::close(corral_);
    corral_ = -1;
  }
  void CloseHarness() {
    if (harness_ >= 0) ::close(harness_);
    harness_ = -1;
  }

  // The next request line, parsed; nullopt at end of input (corral closed
  // its end without asking). Waits at most a minute, so a hang fails the test.
  std::optional<nlohmann::json> NextRequest() {
    std::string line;
    for (;;) {
      struct pollfd entry = {harness_, POLLIN, 0};
      if (::poll(&entry, 1, 60000) != 1) {
        ADD_FAILURE() << "corral neither asked nor closed the channel";
        return std::nullopt;
      }
      char c;
      ssize_t got = ::read(harness_, &c, 1);
      if (got <= 0) {
        EXPECT_EQ(line, "") << "a request line cut short";
        return std::nullopt;
      }
      if (c == '\n') break;
      line += c;
    }
    nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
    EXPECT_FALSE(request.is_discarded()) << line;
    return request;
  }
  void Send(const std::string& text) const {
    EXPECT_EQ(::write(harness_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  void Answer(const nlohmann::json& request, const std::string& answer) const {
    Send(nlohmann::json({{"v", 1}, {"id", request["id"]}, {"answer", answer}}).dump() + "\n");
  }
  // Everything still readable up to the end of input (after corral exited).
  std::string Rest() const {
    std::string rest;
    char buffer[4096];
    for (ssize_t got; (got = ::read(harness_, buffer, sizeof buffer)) > 0;) rest.append(buffer, static_cast<size_t>(got));
    return rest;
  }

 private:
  int harness_ = -1;
  int corral_ = -1;
};

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
}

}  // namespace
}  // namespace corral_it
