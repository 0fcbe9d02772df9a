#include "gate/channel_approver.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gate/approval_protocol.h"

namespace corral {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A socketpair: the approver gets one end, the test plays the harness on the other.
class Channel {
 public:
  Channel() {
    int ends[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends), 0);
    corral_end_ = ends[0];
    harness_end_ = UniqueFd(ends[1]);
  }

  static ApprovalRequest Question(SessionAnswer offered = SessionAnswer::kNotOffered) {
    ApprovalRequest request;
    request.summary = "command: rm -rf x";
    request.rationale = "recursive delete";
    request.class_key = "command:rm-rf";
    request.argv = {"rm", "-rf", "x"};
    request.context = {"ask-dangerous", "workspace-write", "/src/app", "/src/app", ""};
    request.session_answer = offered;
    return request;
  }

  // One request line from corral's side.
  std::string ReadRequest() {
    std::string line;
    char c;
    while (::read(harness_end_.get(), &c, 1) == 1 && c != '\n') line += c;
    return line;
  }

  // Asks `request` while a harness thread reads the question and sends
  // `reply(id)` (the id the request carried).
  Result<ApprovalAnswer> Ask(ChannelApprover& approver, const ApprovalRequest& request,
                             const std::function<std::string(const std::string& id)>& reply) {
    std::thread harness([&] {
      std::string line = ReadRequest();
      asked_ = nlohmann::json::parse(line, nullptr, false);
      std::string id = asked_.is_object() && asked_.contains("id") ? asked_["id"].get<std::string>() : "";
      std::string answer = reply(id);
      if (!answer.empty()) (void)!::write(harness_end_.get(), answer.data(), answer.size());
    });
    Result<ApprovalAnswer> answer = approver.Request(request);
    harness.join();
    return answer;
  }

  ChannelApprover Approver(std::chrono::milliseconds timeout = 10s) {
    Result<ChannelApprover> approver = ChannelApprover::FromFd(corral_end_, timeout);
    EXPECT_TRUE(approver.ok()) << approver.error().ToString();
    return std::move(approver).value();
  }

  static std::string Answer(const std::string& id, const std::string& answer) {
    return R"({"v":1,"id":")" + id + R"(","answer":")" + answer + "\"}\n";
  }

  int corral_end_ = -1;
  UniqueFd harness_end_;
  nlohmann::json asked_;
};

class ChannelApproverTest : public ::testing::Test, public Channel {};

TEST_F(ChannelApproverTest, TheRequestSaysWhatIsAskedAndTheAnswerIsTaken) {
  ChannelApprover approver = Approver();
  Result<ApprovalAnswer> answer = Ask(approver, Question(), [](const std::string& id) { return Answer(id, "allow-once"); });
  ASSERT_TRUE(answer.ok()) << answer.error().ToString();
  EXPECT_EQ(*answer, ApprovalAnswer::kAllowOnce);
  EXPECT_EQ(asked_["v"], 1);
  EXPECT_EQ(asked_["type"], "approval/request");
  EXPECT_EQ(asked_["kind"], "approval");
  EXPECT_EQ(asked_["argv"], nlohmann::json({"rm", "-rf", "x"}));
  EXPECT_EQ(asked_["class"], "command:rm-rf");
  EXPECT_EQ(asked_["why"], "recursive delete");
  EXPECT_EQ(asked_["policy"], "ask-dangerous");
  EXPECT_EQ(asked_["mode"], "workspace-write");
  EXPECT_EQ(asked_["cwd"], "/src/app");
  EXPECT_EQ(asked_["workspace"], "/src/app");
  EXPECT_TRUE(asked_["session"].is_null());
  EXPECT_EQ(asked_["answers"], nlohmann::json({"allow-once", "deny"}));
  EXPECT_EQ(asked_["id"].get<std::string>().size(), 24u);
}

TEST_F(ChannelApproverTest, AllowForSessionIsTakenOnlyWhereOffered) {
  ChannelApprover approver = Approver();
  Result<ApprovalAnswer> answer = Ask(approver, Question(SessionAnswer::kOffered),
                                      [](const std::string& id) { return Answer(id, "allow-for-session"); });
  ASSERT_TRUE(answer.ok()) << answer.error().ToString();
  EXPECT_EQ(*answer, ApprovalAnswer::kAllowForSession);
  EXPECT_EQ(asked_["answers"], nlohmann::json({"allow-once", "allow-for-session", "deny"}));
  Result<ApprovalAnswer> refused =
      Ask(approver, Question(), [](const std::string& id) { return Answer(id, "allow-for-session"); });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), "approval_answer_not_offered");
}

// A network question (gate/network_approval.h) names the place and offers
// allow-for-run, which no other question does; its deadline bounds the wait.
TEST_F(ChannelApproverTest, ANetworkQuestionNamesThePlaceAndOffersAllowForRun) {
  ChannelApprover approver = Approver();
  ApprovalRequest network = Question();
  network.kind = QuestionKind::kNetwork;
  network.class_key = "network:registry.test:443";
  network.host = "registry.test";
  network.port = 443;
  network.run_answer = RunAnswer::kOffered;
  Result<ApprovalAnswer> answer =
      Ask(approver, network, [](const std::string& id) { return Answer(id, "allow-for-run"); });
  ASSERT_TRUE(answer.ok()) << answer.error().ToString();
  EXPECT_EQ(*answer, ApprovalAnswer::kAllowForRun);
  EXPECT_EQ(asked_["kind"], "network");
  EXPECT_EQ(asked_["host"], "registry.test");
  EXPECT_EQ(asked_["port"], 443);
  EXPECT_EQ(asked_["answers"], nlohmann::json({"allow-once", "allow-for-run", "deny"}));
  Result<ApprovalAnswer> refused =
      Ask(approver, Question(), [](const std::string& id) { return Answer(id, "allow-for-run"); });
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), "approval_answer_not_offered");
  EXPECT_FALSE(asked_.contains("host"));  // only a network question names a place
}

TEST_F(ChannelApproverTest, ARequestDeadlineEarlierThanTheTimeoutIsKept) {
  ChannelApprover approver = Approver(10s);
  ApprovalRequest request = Question();
  request.deadline = std::chrono::steady_clock::now();
  Result<ApprovalAnswer> answer = approver.Request(request);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code(), "approval_channel_timeout");
}

TEST_F(ChannelApproverTest, BadAnswersAreRefusedEachWithItsCode) {
  const std::pair<std::function<std::string(const std::string&)>, std::string> cases[] = {
      {[](const std::string&) { return std::string("not json\n"); }, "approval_channel_malformed"},
      {[](const std::string&) { return Answer("ffeeddccbbaa998877665544", "allow-once"); }, "approval_channel_wrong_id"},
      {[](const std::string& id) { return Answer(id, "yes"); }, "approval_channel_unknown_answer"},
      {[](const std::string&) { return std::string(kMaxAnswerLineBytes + 1, ' ') + "\n"; }, "approval_channel_oversize"},
      {[](const std::string& id) { return R"({"v":1,"id":")" + id + R"(","answer":"allow-once","x":1})" "\n"; },
       "approval_channel_malformed"},
      {[](const std::string& id) {
         return R"({"v":1,"id":")" + id + R"(","answer":"deny","answer":"allow-once"})" "\n";
       },
       "approval_channel_malformed"},
  };
  for (const auto& [reply, code] : cases) {
    Channel fresh;
    ChannelApprover approver = fresh.Approver();
    Result<ApprovalAnswer> answer = fresh.Ask(approver, Question(), reply);
    ASSERT_FALSE(answer.ok()) << code;
    EXPECT_EQ(answer.error().code(), code);
    EXPECT_EQ(answer.error().kind(), ErrorKind::kDenied);
  }
}

TEST_F(ChannelApproverTest, EndOfInputIsRefused) {
  ChannelApprover approver = Approver();
  Result<ApprovalAnswer> answer = Ask(approver, Question(), [&](const std::string&) {
    harness_end_.Reset();
    return std::string();
  });
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code(), "approval_channel_closed");
}

// A zero timeout: the question is written, no answer is waiting, so the
// deadline has passed when corral looks. No clock is involved.
TEST_F(ChannelApproverTest, NoAnswerBeforeTheDeadlineIsRefused) {
  ChannelApprover approver = Approver(0ms);
  Result<ApprovalAnswer> answer = approver.Request(Question());
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code(), "approval_channel_timeout");
  EXPECT_THAT(ReadRequest(), HasSubstr("\"approval/request\""));
}

TEST_F(ChannelApproverTest, AfterAFailureNothingMoreIsAskedOrTaken) {
  ChannelApprover approver = Approver();
  ASSERT_FALSE(Ask(approver, Question(), [](const std::string& id) { return Answer(id, "maybe"); }).ok());
  // A well-formed answer waiting now must not be taken for the next question.
  std::string late = Answer("x", "allow-once");
  ASSERT_EQ(::write(harness_end_.get(), late.data(), late.size()), static_cast<ssize_t>(late.size()));
  Result<ApprovalAnswer> next = approver.Request(Question());
  ASSERT_FALSE(next.ok());
  EXPECT_EQ(next.error().code(), "approval_channel_failed");
}

TEST_F(ChannelApproverTest, TheDescriptorIsCloseOnExecAndClosedByClose) {
  ChannelApprover approver = Approver();
  EXPECT_EQ(::fcntl(corral_end_, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
  approver.Close();
  char c;
  EXPECT_EQ(::read(harness_end_.get(), &c, 1), 0);  // EOF: corral's end is gone
}

TEST(ChannelApproverFd, OnlyAStreamSocketAboveStdioIsTaken) {
  int pipe_ends[2];
  ASSERT_EQ(::pipe2(pipe_ends, O_CLOEXEC), 0);
  UniqueFd read_end(pipe_ends[0]), write_end(pipe_ends[1]);
  Result<ChannelApprover> from_pipe = ChannelApprover::FromFd(read_end.get(), 1s);
  ASSERT_FALSE(from_pipe.ok());
  EXPECT_EQ(from_pipe.error().code(), "approval_fd_invalid");
  EXPECT_EQ(from_pipe.error().kind(), ErrorKind::kUsage);
  EXPECT_THAT(from_pipe.error().message(), HasSubstr("stream socket"));
  Result<ChannelApprover> stdio = ChannelApprover::FromFd(2, 1s);
  ASSERT_FALSE(stdio.ok());
  EXPECT_THAT(stdio.error().message(), HasSubstr("3 or above"));
  UniqueFd listening(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(listening.valid());
  Result<ChannelApprover> unconnected = ChannelApprover::FromFd(listening.get(), 1s);
  ASSERT_FALSE(unconnected.ok());
  EXPECT_THAT(unconnected.error().message(), HasSubstr("not connected"));
  Result<ChannelApprover> closed = ChannelApprover::FromFd(1000, 1s);
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().code(), "approval_fd_invalid");
}

}  // namespace
}  // namespace corral
