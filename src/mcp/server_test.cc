// The MCP server in process, over pipes: the protocol's errors, the tool
// rule's "ask" with and without elicitation, and an escalation that covers
// its one call only. Checked from outside: the files on disk.
#include "mcp/server.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <sstream>
#include <thread>

#include "mcp/json_rpc.h"
#include "testing/test_scratch_dir.h"

namespace corral::mcp {
namespace {

using ::corral::testing::TestTree;

class ServerTest : public ::testing::Test {
 protected:
  ServerTest() : ws_(tree_.Dir("ws")), home_(tree_.Dir("home")) {}
  ~ServerTest() override { Stop(); }

  void Start(RunRequest request) {
    int in[2], out[2];
    ASSERT_EQ(::pipe2(in, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(out, O_CLOEXEC), 0);
    to_server_ = in[1];
    from_server_ = out[0];
    options_.request = std::move(request);
    options_.request.no_config = true;
    options_.request.overrides.workspace = ws_;
    options_.host = HostContext{ws_, home_, ::getuid(), ::getgid(), {}, {}, {}};
    options_.trail = &trail_;
    options_.state_home = tree_.Dir("state");
    options_.in_fd = in[0];
    options_.out_fd = out[1];
    server_in_ = in[0];
    server_out_ = out[1];
    thread_ = std::thread([this] { Serve(options_); });
  }
  void Stop() {
    if (to_server_ >= 0) ::close(to_server_);
    to_server_ = -1;
    if (thread_.joinable()) thread_.join();
    for (int* fd : {&from_server_, &server_in_, &server_out_}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }
  void Send(const nlohmann::json& message) {
    std::string line = message.dump() + "\n";
    ASSERT_EQ(::write(to_server_, line.data(), line.size()), static_cast<ssize_t>(line.size()));
  }
  void SendRaw(const std::string& line) { ASSERT_EQ(::write(to_server_, line.data(), line.size()), static_cast<ssize_t>(line.size())); }
  // The next message; log messages are skipped unless keep_logs_.
  nlohmann::json Receive() {
    for (;;) {
      size_t newline = buffer_.find('\n');
      if (newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        nlohmann::json message = nlohmann::json::parse(line);
        if (!keep_logs_ && message.value("method", "") == "notifications/message") continue;
        return message;
      }
      struct pollfd pfd = {from_server_, POLLIN, 0};
      if (::poll(&pfd, 1, 30000) <= 0) {
        ADD_FAILURE() << "no message from the server in 30s";
        return nullptr;
      }
      char chunk[65536];
      ssize_t n = ::read(from_server_, chunk, sizeof chunk);
      if (n <= 0) return nullptr;
      buffer_.append(chunk, static_cast<size_t>(n));
    }
  }
  void Initialize(bool elicitation) {
    nlohmann::json capabilities = nlohmann::json::object();
    if (elicitation) capabilities["elicitation"] = nlohmann::json::object();
    Send({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
          {"params", {{"protocolVersion", "2025-06-18"}, {"capabilities", capabilities},
                      {"clientInfo", {{"name", "test"}, {"version", "1"}}}}}});
    nlohmann::json reply = Receive();
    ASSERT_EQ(reply["result"]["protocolVersion"], "2025-06-18") << reply.dump();
    Send({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}});
  }
  nlohmann::json CallTool(int id, const std::string& name, nlohmann::json arguments) {
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"}, {"params", {{"name", name}, {"arguments", arguments}}}});
    return Receive();
  }
  // Answers the elicitation the server sends next.
  void AnswerElicitation(const std::string& action) {
    nlohmann::json ask = Receive();
    ASSERT_EQ(ask["method"], "elicitation/create") << ask.dump();
    nlohmann::json result = {{"action", action}};
    if (action == "accept") result["content"] = {{"approve", true}};
    Send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", result}});
  }

  TestTree tree_;
  std::string ws_, home_;
  AuditTrail trail_ = AuditTrail::Discard();
  ServerOptions options_;
  std::thread thread_;
  int to_server_ = -1, from_server_ = -1, server_in_ = -1, server_out_ = -1;
  std::string buffer_;
  bool keep_logs_ = false;
};

TEST_F(ServerTest, BadMessagesGetTheirErrorsAndTheSessionGoesOn) {
  Start(RunRequest{});
  SendRaw("{not json\n");
  EXPECT_EQ(Receive()["error"]["code"], kParseError);
  Send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/list"}});
  EXPECT_EQ(Receive()["error"]["code"], kInvalidRequest);  // before initialize
  Initialize(false);
  Send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "no/such"}});
  EXPECT_EQ(Receive()["error"]["code"], kMethodNotFound);
  nlohmann::json unknown = CallTool(3, "rm", nlohmann::json::object());
  EXPECT_EQ(unknown["error"]["code"], kInvalidParams);
  nlohmann::json bad = CallTool(4, "read", {{"path", 5}});
  EXPECT_EQ(bad["error"]["code"], kInvalidParams);
  Send({{"jsonrpc", "2.0"}, {"id", 5}, {"method", "ping"}});
  nlohmann::json pong = Receive();
  EXPECT_EQ(pong["id"], 5);
  EXPECT_TRUE(pong["result"].is_object());
}

TEST_F(ServerTest, OlderAndUnknownProtocolVersionsAreAnswered) {
  Start(RunRequest{});
  Send({{"jsonrpc", "2.0"}, {"id", 0}, {"method", "initialize"},
        {"params", {{"protocolVersion", "2024-11-05"}, {"capabilities", nlohmann::json::object()}}}});
  EXPECT_EQ(Receive()["result"]["protocolVersion"], "2024-11-05");
  Send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "initialize"},
        {"params", {{"protocolVersion", "1999-01-01"}, {"capabilities", nlohmann::json::object()}}}});
  EXPECT_EQ(Receive()["result"]["protocolVersion"], "2025-06-18");
}

TEST_F(ServerTest, AskWithoutElicitationIsADenialAndNothingIsWritten) {
  Start(RunRequest{});
  Initialize(false);
  nlohmann::json reply = CallTool(1, "write", {{"path", "new.txt"}, {"content", "x"}});
  EXPECT_EQ(reply["result"]["isError"], true);
  EXPECT_EQ(reply["result"]["structuredContent"]["outcome"], "denied");
  std::string text = reply["result"]["content"][0]["text"];
  EXPECT_EQ(text.rfind("[sandbox: ", 0), 0u) << text;
  EXPECT_NE(text.find("did not declare the elicitation capability"), std::string::npos) << text;
  EXPECT_FALSE(TestTree::Exists(tree_.Join("ws/new.txt")));
  // Read-only tools need no answer.
  tree_.File("ws/a.txt", "hello\n");
  nlohmann::json read = CallTool(2, "read", {{"path", "a.txt"}});
  EXPECT_EQ(read["result"]["isError"], false) << read.dump();
}

// A denied call is also a warning log message (before its result), naming
// the tool and the reason, never contents; logging/setLevel raises the bar,
// and a level MCP does not know is an error.
TEST_F(ServerTest, LogMessagesFollowTheLevelTheClientSets) {
  keep_logs_ = true;
  Start(RunRequest{});
  Initialize(false);
  Send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
        {"params", {{"name", "write"}, {"arguments", {{"path", "new.txt"}, {"content", "secret-bytes"}}}}}});
  nlohmann::json log = Receive();
  ASSERT_EQ(log["method"], "notifications/message") << log.dump();
  EXPECT_EQ(log["params"]["level"], "warning");
  EXPECT_EQ(log["params"]["logger"], "corral");
  EXPECT_EQ(log["params"]["data"]["tool"], "write");
  EXPECT_EQ(log["params"]["data"]["outcome"], "denied");
  EXPECT_EQ(log.dump().find("secret-bytes"), std::string::npos) << log.dump();
  EXPECT_EQ(Receive()["id"], 1);
  Send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "logging/setLevel"}, {"params", {{"level", "loud"}}}});
  EXPECT_EQ(Receive()["error"]["code"], kInvalidParams);
  Send({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "logging/setLevel"}, {"params", {{"level", "error"}}}});
  EXPECT_TRUE(Receive()["result"].is_object());
  nlohmann::json quiet = CallTool(4, "write", {{"path", "new.txt"}, {"content", "x"}});
  EXPECT_EQ(quiet["id"], 4) << quiet.dump();  // no log message came first
  EXPECT_FALSE(TestTree::Exists(tree_.Join("ws/new.txt")));
}

TEST_F(ServerTest, ElicitationAcceptRunsTheCallAndDeclineDoesNot) {
  Start(RunRequest{});
  Initialize(true);
  Send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
        {"params", {{"name", "write"}, {"arguments", {{"path", "yes.txt"}, {"content", "ok"}}}}}});
  AnswerElicitation("accept");
  EXPECT_EQ(Receive()["result"]["isError"], false);
  EXPECT_EQ(TestTree::Read(tree_.Join("ws/yes.txt")), "ok");
  Send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"},
        {"params", {{"name", "write"}, {"arguments", {{"path", "no.txt"}, {"content", "no"}}}}}});
  AnswerElicitation("decline");
  nlohmann::json declined = Receive();
  EXPECT_EQ(declined["result"]["structuredContent"]["outcome"], "denied");
  EXPECT_FALSE(TestTree::Exists(tree_.Join("ws/no.txt")));
}

// An "accept" whose content is not the schema's (approve a string, a number,
// content not an object) is no approval: fail closed. A response for an id
// the server never sent is dropped and approves nothing. Judged on disk.
TEST_F(ServerTest, AMalformedOrForgedElicitationAnswerApprovesNothing) {
  Start(RunRequest{});
  Initialize(true);
  Send({{"jsonrpc", "2.0"}, {"id", "corral-1"}, {"result", {{"action", "accept"}}}});
  Send({{"jsonrpc", "2.0"}, {"id", "corral-2"}, {"result", {{"action", "accept"}}}});
  int id = 1;
  for (const nlohmann::json& content : {nlohmann::json{{"approve", "false"}}, nlohmann::json{{"approve", 0}},
                                        nlohmann::json{{"approve", nullptr}}, nlohmann::json("yes"),
                                        nlohmann::json::array({true})}) {
    std::string name = "forged" + std::to_string(id) + ".txt";
    Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
          {"params", {{"name", "write"}, {"arguments", {{"path", name}, {"content", "x"}}}}}});
    nlohmann::json ask = Receive();
    ASSERT_EQ(ask["method"], "elicitation/create") << ask.dump();
    Send({{"jsonrpc", "2.0"}, {"id", ask["id"].get<std::string>() + "-other"}, {"result", {{"action", "accept"}}}});
    Send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", {{"action", "accept"}, {"content", content}}}});
    nlohmann::json answer = Receive();
    EXPECT_EQ(answer["result"]["structuredContent"]["outcome"], "denied") << content.dump() << answer.dump();
    EXPECT_FALSE(TestTree::Exists(tree_.Join("ws/" + name))) << content.dump();
    ++id;
  }
  // Without content (the schema's default) and with approve true, the call runs.
  Send({{"jsonrpc", "2.0"}, {"id", id}, {"method", "tools/call"},
        {"params", {{"name", "write"}, {"arguments", {{"path", "plain.txt"}, {"content", "ok"}}}}}});
  nlohmann::json ask = Receive();
  Send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", {{"action", "accept"}}}});
  EXPECT_EQ(Receive()["result"]["isError"], false);
  EXPECT_EQ(TestTree::Read(tree_.Join("ws/plain.txt")), "ok");
}

// The question the user answers shows what will run: a command that hides
// its tail behind 500 bytes of padding, or a carriage return and an erase-line
// escape, is shown whole or said to be cut, with every control escaped.
TEST_F(ServerTest, TheApprovalQuestionShowsTheWholeCommandWithControlsEscaped) {
  Start(RunRequest{});
  Initialize(true);
  std::string command = "echo harmless\r\x1b[2K\n" + std::string(600, ' ') + "; touch pwned";
  Send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
        {"params", {{"name", "bash"}, {"arguments", {{"command", command}}}}}});
  nlohmann::json ask = Receive();
  ASSERT_EQ(ask["method"], "elicitation/create") << ask.dump();
  std::string message = ask["params"]["message"].get<std::string>();
  EXPECT_NE(message.find("touch pwned"), std::string::npos) << message;
  for (char control : {'\r', '\n', '\x1b'}) EXPECT_EQ(message.find(control), std::string::npos) << message;
  Send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", {{"action", "decline"}}}});
  EXPECT_EQ(Receive()["result"]["structuredContent"]["outcome"], "denied");
  // One too long to show whole says so, and how long it is.
  std::string huge = "echo harmless;" + std::string(20000, ' ') + "touch pwned";
  Send({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "tools/call"},
        {"params", {{"name", "bash"}, {"arguments", {{"command", huge}}}}}});
  ask = Receive();
  ASSERT_EQ(ask["method"], "elicitation/create") << ask.dump();
  message = ask["params"]["message"].get<std::string>();
  EXPECT_NE(message.find("NOT SHOWN"), std::string::npos) << message;
  EXPECT_NE(message.find(std::to_string(huge.size()) + " bytes"), std::string::npos) << message;
  Send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", {{"action", "decline"}}}});
  EXPECT_EQ(Receive()["result"]["structuredContent"]["outcome"], "denied");
  EXPECT_FALSE(TestTree::Exists(tree_.Join("ws/pwned")));
}

// A call cancelled while its approval question is open ends at once, as a
// denial, and an accept that comes later runs nothing. Judged on disk.
TEST_F(ServerTest, ACancelledCallWaitingForApprovalEndsAndALateAcceptRunsNothing) {
  Start(RunRequest{});
  Initialize(true);
  Send({{"jsonrpc", "2.0"}, {"id", 7}, {"method", "tools/call"},
        {"params", {{"name", "write"}, {"arguments", {{"path", "late.txt"}, {"content", "x"}}}}}});
  nlohmann::json ask = Receive();
  ASSERT_EQ(ask["method"], "elicitation/create") << ask.dump();
  Send({{"jsonrpc", "2.0"}, {"method", "notifications/cancelled"}, {"params", {{"requestId", 7}}}});
  nlohmann::json ended = Receive();
  EXPECT_EQ(ended["id"], 7) << ended.dump();
  EXPECT_EQ(ended["result"]["structuredContent"]["outcome"], "denied") << ended.dump();
  Send({{"jsonrpc", "2.0"}, {"id", ask["id"]}, {"result", {{"action", "accept"}}}});
  nlohmann::json ping = nullptr;
  Send({{"jsonrpc", "2.0"}, {"id", 8}, {"method", "ping"}, {"params", nlohmann::json::object()}});
  ping = Receive();
  EXPECT_EQ(ping["id"], 8) << ping.dump();
  EXPECT_FALSE(TestTree::Exists(tree_.Join("ws/late.txt")));
}

TEST_F(ServerTest, AnEscalationCoversItsOneCallOnly) {
  RunRequest request;
  request.overrides.mode = Mode::kReadOnly;
  request.approval = ApprovalPolicy::kAllowAll;
  Start(request);
  Initialize(true);
  Send({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "tools/call"},
        {"params", {{"name", "write"},
                    {"arguments", {{"path", "esc.txt"}, {"content", "1"}, {"sandbox_permissions", "workspace-write"},
                                   {"justification", "the test writes one file"}}}}}});
  AnswerElicitation("accept");
  nlohmann::json escalated = Receive();
  EXPECT_EQ(escalated["result"]["isError"], false) << escalated.dump();
  EXPECT_EQ(TestTree::Read(tree_.Join("ws/esc.txt")), "1");
  nlohmann::json after = CallTool(2, "write", {{"path", "after.txt"}, {"content", "2"}});
  EXPECT_EQ(after["result"]["structuredContent"]["outcome"], "denied") << after.dump();
  EXPECT_FALSE(TestTree::Exists(tree_.Join("ws/after.txt")));
}

// bash calls run in the server's warm sandbox; a secret one call writes
// where a forbid_read pattern matches is masked from the next (its policy
// masks it, so it cannot take the sandbox the first call left). Judged by
// the secret's bytes, absent from the second call's output, and by the trail.
TEST_F(ServerTest, ASecretOneBashCallWritesIsMaskedFromTheNext) {
  RunRequest request;
  request.approval = ApprovalPolicy::kAllowAll;
  request.overrides.forbid_read = {"**/.env"};
  std::string trail = tree_.Join("trail.jsonl");
  Result<AuditTrail> opened = AuditTrail::ToFile(trail);
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  trail_ = std::move(opened).value();
  Start(request);
  Initialize(false);
  nlohmann::json first = CallTool(1, "bash", {{"command", "mkdir -p sub && printf SECRET-51c9 > sub/.env && echo wrote"}});
  EXPECT_EQ(first["result"]["structuredContent"]["outcome"], "ok") << first.dump();
  EXPECT_EQ(TestTree::Read(tree_.Join("ws/sub/.env")), "SECRET-51c9");  // there, seen from outside
  nlohmann::json next = CallTool(2, "bash", {{"command", "cat sub/.env; echo done"}});
  std::string text = next.dump();
  EXPECT_EQ(text.find("SECRET-51c9"), std::string::npos) << text;
  EXPECT_NE(text.find("done"), std::string::npos) << text;
  nlohmann::json third = CallTool(3, "bash", {{"command", "echo third"}});
  EXPECT_EQ(third["result"]["structuredContent"]["outcome"], "ok") << third.dump();
  Stop();
  // The first call ran warm; the second, whose plan masks the secret, ran
  // cold; the third in a new warm sandbox started under that plan.
  std::vector<bool> warm;
  std::istringstream lines(TestTree::Read(trail));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    if (record.is_object() && record.value("event", "") == "spawned") warm.push_back(record.value("warm", false));
  }
  EXPECT_EQ(warm, (std::vector<bool>{true, false, true}));
}

}  // namespace
}  // namespace corral::mcp
