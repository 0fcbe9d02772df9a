#include "gate/tty_approver.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A pseudo-terminal: the test holds the master side; the approver opens the
// slave by path, as it would /dev/tty.
class Pty {
 public:
  Pty() {
    master_ = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master_ < 0 || ::grantpt(master_) != 0 || ::unlockpt(master_) != 0) return;
    char name[128];
    if (::ptsname_r(master_, name, sizeof name) == 0) slave_path_ = name;
  }
  ~Pty() { CloseMaster(); }
  bool ok() const { return master_ >= 0 && !slave_path_.empty(); }
  const std::string& slave_path() const { return slave_path_; }
  void CloseMaster() {
    if (master_ >= 0) ::close(master_);
    master_ = -1;
  }
  void Type(std::string_view text) { ASSERT_EQ(::write(master_, text.data(), text.size()), static_cast<ssize_t>(text.size())); }
  // Everything the terminal shows until `needle` appears (or 10 s pass).
  std::string ReadUntil(std::string_view needle) {
    for (int waited = 0; seen_.find(needle) == std::string::npos && waited < 100; ++waited) {
      struct pollfd poll_fd = {master_, POLLIN, 0};
      if (::poll(&poll_fd, 1, 100) <= 0) continue;
      char buffer[512];
      ssize_t got = ::read(master_, buffer, sizeof buffer);
      if (got <= 0) break;
      seen_.append(buffer, static_cast<size_t>(got));
    }
    return seen_;
  }

 private:
  int master_ = -1;
  std::string slave_path_;
  std::string seen_;
};

const ApprovalRequest kPushRequest{"command: git push", "git push publishes commits to a remote", "command:git-push"};

// A network question (gate/network_approval.h) names the connection and
// what "a" covers, and gives up at its deadline.
TEST(ApprovalTty, ANetworkQuestionIsAskedAsAConnectionAndEndsAtItsDeadline) {
  Pty pty;
  ASSERT_TRUE(pty.ok());
  TtyApprover approver(pty.slave_path());
  ApprovalRequest network;
  network.kind = QuestionKind::kNetwork;
  network.summary = "a connection to registry.test:443 from: command: npm install";
  network.rationale = "registry.test:443 is not in --allow-host";
  network.class_key = "network:registry.test:443";
  network.deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  auto answer = std::async(std::launch::async, [&] { return approver.Request(network); });
  std::string shown = pty.ReadUntil("> ");
  EXPECT_THAT(shown, HasSubstr("allow a connection to registry.test:443 from: command: npm install?"));
  EXPECT_THAT(shown, HasSubstr("[y] this connection  [n] refuse  [a] network:registry.test:443 for the rest of this run"));
  Result<ApprovalAnswer> result = answer.get();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), "approval_tty_timeout");
}

TEST(ApprovalTty, AsksOnTheTerminalAndReadsEachAnswer) {
  struct Row {
    const char* typed;
    ApprovalAnswer want;
  };
  for (const Row& row : {Row{"y\n", ApprovalAnswer::kAllowOnce}, Row{"n\n", ApprovalAnswer::kDeny},
                         Row{"a\n", ApprovalAnswer::kAllowForRun}, Row{"  YES \n", ApprovalAnswer::kAllowOnce},
                         Row{"always\r", ApprovalAnswer::kAllowForRun}}) {
    Pty pty;
    ASSERT_TRUE(pty.ok());
    TtyApprover approver(pty.slave_path());
    auto answer = std::async(std::launch::async, [&] { return approver.Request(kPushRequest); });
    std::string shown = pty.ReadUntil("> ");
    EXPECT_THAT(shown, HasSubstr("approve command: git push?"));
    EXPECT_THAT(shown, HasSubstr("why: git push publishes commits to a remote"));
    EXPECT_THAT(shown, HasSubstr("[a] every command:git-push call for the rest of this run"));
    pty.Type(row.typed);
    Result<ApprovalAnswer> result = answer.get();
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    EXPECT_EQ(*result, row.want) << row.typed;
  }
}

TEST(ApprovalTty, AsksAgainAfterAnUnclearAnswerThenRefuses) {
  Pty pty;
  ASSERT_TRUE(pty.ok());
  TtyApprover approver(pty.slave_path(), /*max_attempts=*/2);
  auto answer = std::async(std::launch::async, [&] { return approver.Request(kPushRequest); });
  pty.ReadUntil("> ");
  pty.Type("maybe\n");
  pty.ReadUntil("please answer y, n or a");
  pty.Type("sure\n");
  Result<ApprovalAnswer> result = answer.get();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, ApprovalAnswer::kDeny);
  EXPECT_THAT(pty.ReadUntil("refused"), HasSubstr("no answer; refused"));
}

TEST(ApprovalTty, TypeAheadDoesNotAnswer) {
  Pty pty;
  ASSERT_TRUE(pty.ok());
  pty.Type("y\n");  // typed before the question exists
  TtyApprover approver(pty.slave_path());
  auto answer = std::async(std::launch::async, [&] { return approver.Request(kPushRequest); });
  pty.ReadUntil("> ");
  pty.Type("n\n");
  Result<ApprovalAnswer> result = answer.get();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, ApprovalAnswer::kDeny);
}

TEST(ApprovalTty, ControlBytesAreShownNotSent) {
  Pty pty;
  ASSERT_TRUE(pty.ok());
  TtyApprover approver(pty.slave_path());
  ApprovalRequest request{"command: printf '\x1b]0;title\x07\x1b[2K'", "why\r", "command:x"};
  auto answer = std::async(std::launch::async, [&] { return approver.Request(request); });
  std::string shown = pty.ReadUntil("> ");
  pty.Type("n\n");
  ASSERT_TRUE(answer.get().ok());
  EXPECT_THAT(shown, HasSubstr("\\x1b]0;title\\x07\\x1b[2K"));
  EXPECT_THAT(shown, HasSubstr("why\\x0d"));
  EXPECT_EQ(shown.find('\x1b'), std::string::npos);
  EXPECT_EQ(shown.find('\x07'), std::string::npos);
}

TEST(ApprovalTty, HangUpIsAnErrorAndTheGateDenies) {
  Pty pty;
  ASSERT_TRUE(pty.ok());
  TtyApprover approver(pty.slave_path());
  ApprovalGate gate(ApprovalPolicy::kAskDangerous, &approver);
  auto record = std::async(std::launch::async, [&] { return gate.Check(Action::Command({"git", "push"})); });
  pty.ReadUntil("> ");
  pty.CloseMaster();
  ApprovalRecord result = record.get();
  EXPECT_FALSE(result.allowed);
  EXPECT_EQ(result.basis, ApprovalBasis::kApproverFailed);
}

TEST(ApprovalTty, NoTerminalIsAnErrorNeverAnAllow) {
  for (const char* path : {"/nonexistent/tty", "/dev/null"}) {
    TtyApprover approver(path);
    Result<ApprovalAnswer> result = approver.Request(kPushRequest);
    ASSERT_FALSE(result.ok()) << path;
    EXPECT_EQ(result.error().kind(), ErrorKind::kDenied);
    EXPECT_EQ(result.error().code(), "approval_no_tty");
    ApprovalGate gate(ApprovalPolicy::kAskDangerous, &approver);
    EXPECT_FALSE(gate.Check(Action::Command({"git", "push"})).allowed) << path;
  }
}

TEST(ApprovalTty, AllowForRunThroughTheGateAsksOnce) {
  Pty pty;
  ASSERT_TRUE(pty.ok());
  TtyApprover approver(pty.slave_path());
  ApprovalGate gate(ApprovalPolicy::kAskDangerousToolEdit, &approver);
  auto first = std::async(std::launch::async, [&] { return gate.Check(Action::Tool("write", {"a.txt"})); });
  pty.ReadUntil("> ");
  pty.Type("a\n");
  EXPECT_TRUE(first.get().allowed);
  // The second write is not asked about: no terminal interaction needed.
  ApprovalRecord second = gate.Check(Action::Tool("write", {"b.txt"}));
  EXPECT_TRUE(second.allowed);
  EXPECT_EQ(second.basis, ApprovalBasis::kRemembered);
}

TEST(ApprovalTty, EscapeForTerminalTable) {
  EXPECT_EQ(EscapeForTerminal("plain"), "plain");
  EXPECT_EQ(EscapeForTerminal("a\nb"), "a\\x0ab");
  EXPECT_EQ(EscapeForTerminal("\x7f"), "\\x7f");
  EXPECT_EQ(EscapeForTerminal("back\\slash"), "back\\\\slash");
  EXPECT_EQ(EscapeForTerminal("caf\xc3\xa9"), "caf\xc3\xa9");
}

}  // namespace
}  // namespace corral
