// `corral mcp` driven by the official MCP TypeScript SDK's client
// (tests/mcp_sdk, pinned by its package-lock.json; `make deps` installs it),
// and a third-party stdio MCP server confined by `corral run`. Every denial
// is judged from outside: the files on disk, the processes left, the trail.
//
// The SDK is found through $CORRAL_MCP_SDK (the staged copy for uid 65534),
// else the source tree's tests/mcp_sdk. A missing node or SDK fails the test: it never skips.
#include <unistd.h>

#include <sstream>
#include <thread>

#include "harness.h"

namespace corral_it {
namespace {

std::string SdkDir() {
  const char* given = std::getenv("CORRAL_MCP_SDK");
  if (given != nullptr && given[0] != '\0') return given;
  return CORRAL_DEFAULT_MCP_SDK;
}

// The node on $PATH (the harness execs an absolute path).
std::string Node() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/node";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  ADD_FAILURE() << "node is not on $PATH: run `make deps`";
  return "node";
}

nlohmann::json RunClient(const std::vector<std::string>& argv, const std::string& cwd) {
  std::string sdk = SdkDir();
  EXPECT_TRUE(Exists(sdk + "/node_modules/@modelcontextprotocol/sdk/package.json"))
      << "the MCP SDK is not installed in " << sdk << ": run `make deps`";
  SpawnOptions options;
  options.cwd = cwd;
  options.timeout = 180s;
  Outcome outcome = Execute(argv, options);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  std::string last;
  std::istringstream lines(outcome.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) last = line;
  }
  nlohmann::json report = nlohmann::json::parse(last, nullptr, false);
  EXPECT_FALSE(report.is_discarded()) << outcome.Describe();
  return report.is_discarded() ? nlohmann::json::object() : report;
}

class McpSdkTest : public ::testing::Test {
 protected:
  McpSdkTest() {
    ws_.Write("a.txt", "hello world\n");
    ws_.Write(".git/hooks/pre-commit", "#!/bin/sh\n", 0755);
    ws_.Write(".git/config", "[core]\n");
    outside_.Write("secret.txt", "top secret\n");
  }
  TempDir ws_{"corral-mcp-ws"};
  TempDir outside_{"corral-mcp-out"};
};

void ExpectDenied(const nlohmann::json& call, const std::string& label) {
  SCOPED_TRACE(label + ": " + call.dump());
  EXPECT_EQ(call.value("outcome", ""), "denied");
  EXPECT_TRUE(call.value("isError", false));
  EXPECT_EQ(call.value("text", "").rfind("[sandbox: file access denied under workspace-write mode]", 0), 0u);
  EXPECT_EQ(call.value("text", "").find("top secret"), std::string::npos);
}

TEST_F(McpSdkTest, EveryToolAllowedAndDeniedThroughTheOfficialClient) {
  std::string mark = RandomToken("corral-cancel");
  nlohmann::json report =
      RunClient({Node(), SdkDir() + "/client.mjs", CorralBin(), ws_.path(), outside_.path(), mark}, ws_.path());
  ASSERT_TRUE(report.contains("calls")) << report.dump();
  const nlohmann::json& calls = report["calls"];
  EXPECT_EQ(report["tools"], nlohmann::json({"bash", "edit", "find", "grep", "ls", "read", "sandbox_info", "write"}));

  EXPECT_NE(calls["read_ok"].value("text", "").find("hello world"), std::string::npos) << calls["read_ok"];
  EXPECT_NE(calls["ls_ok"].value("text", "").find("a.txt"), std::string::npos) << calls["ls_ok"];
  EXPECT_NE(calls["find_ok"].value("text", "").find(ws_ / "a.txt"), std::string::npos) << calls["find_ok"];
  EXPECT_NE(calls["grep_ok"].value("text", "").find("a.txt:1:hello world"), std::string::npos) << calls["grep_ok"];
  EXPECT_NE(calls["info"].value("text", "").find("mode: workspace-write"), std::string::npos) << calls["info"];
  for (const char* label : {"read_denied", "ls_denied", "find_denied", "grep_denied", "write_denied", "write_outside",
                            "edit_denied", "write_declined", "bash_declined"}) {
    ExpectDenied(calls[label], label);
  }
  // From outside: what was allowed happened, and nothing denied did.
  EXPECT_EQ(ReadFile(ws_ / "written.txt"), "from the agent\n");
  EXPECT_EQ(ReadFile(ws_ / "a.txt"), "goodbye world\n");
  EXPECT_FALSE(Exists(ws_ / "decline-me.txt"));
  EXPECT_EQ(ReadFile(ws_ / ".git/hooks/pre-commit"), "#!/bin/sh\n");
  EXPECT_EQ(ReadFile(ws_ / ".git/config"), "[core]\n");
  EXPECT_FALSE(Exists(outside_ / "planted.txt"));
  EXPECT_FALSE(Exists(outside_ / "from-bash.txt"));
  EXPECT_FALSE(Exists(ws_ / "bash-declined.txt"));

  // bash: through the sandbox, output sanitised; a failed write is the command's failure.
  std::string bash = calls["bash_ok"].value("text", "");
  EXPECT_EQ(calls["bash_ok"].value("outcome", ""), "ok") << calls["bash_ok"];
  EXPECT_NE(bash.find("hi from bash\nred\n"), std::string::npos) << bash;
  EXPECT_EQ(bash.find('\x1b'), std::string::npos);
  EXPECT_EQ(bash.find('\r'), std::string::npos);
  EXPECT_TRUE(calls["bash_denied"].value("isError", false)) << calls["bash_denied"];
  // A timeout is corral's own failure; the output gathered so far is shown to the agent.
  EXPECT_EQ(calls["bash_timeout"].value("outcome", ""), "failed") << calls["bash_timeout"];
  EXPECT_NE(calls["bash_timeout"].value("text", "").find("output of a timed-out bash"), std::string::npos)
      << calls["bash_timeout"];
  EXPECT_NE(calls["bad_args"].value("thrown", "").find("-32602"), std::string::npos) << calls["bad_args"];

  // Elicitation: one accepted, one declined, as the client answered.
  bool accepted = false, declined = false;
  for (const nlohmann::json& asked : report["elicitations"]) {
    accepted = accepted || asked["answer"] == "accept";
    declined = declined || asked["answer"] == "decline";
  }
  EXPECT_TRUE(accepted && declined) << report["elicitations"];

  // Cancellation: the call was given up and its whole tree is gone.
  EXPECT_EQ(report["cancel"].value("result", "").rfind("rejected", 0), 0u) << report["cancel"];
  EXPECT_LT(report["cancel"].value("seconds", 999.0), 60.0);
  EXPECT_GE(report["cancel"].value("before", 0), 2) << "the sleeps never started: " << report["cancel"];
  EXPECT_EQ(report["cancel"].value("survivors", -1), 0) << report["cancel"];
  EXPECT_EQ(calls["after_cancel"].value("outcome", ""), "ok") << calls["after_cancel"];
  EXPECT_TRUE(ProcessesMatching(mark).empty()) << "the cancelled bash tree survived";

  // One audit record per call, with no contents in any.
  std::optional<std::string> trail = ReadFile(outside_ / "audit.jsonl");
  ASSERT_TRUE(trail);
  int tool_records = 0, warm_spawns = 0;
  std::istringstream lines(*trail);
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
    // bash runs in the server's warm sandbox (a cancelled call's tree goes,
    // the sandbox stays for the next call).
    // (A call the warm sandbox refuses gets a second spawned record, with
    // cold_because.)
    if (record.is_object() && record.value("event", "") == "spawned") {
      warm_spawns += record.value("warm", false) ? 1 : record.contains("cold_because") ? -1 : 0;
    }
    if (record.is_object() && record.value("event", "") == "tool") {
      ++tool_records;
      EXPECT_TRUE(record.contains("outcome") && record.contains("decision")) << line;
    }
  }
  EXPECT_GE(tool_records, 20);
  EXPECT_GE(warm_spawns, 3) << "the bash calls did not run warm";
  EXPECT_EQ(trail->find("top secret"), std::string::npos);
  EXPECT_EQ(trail->find("from the agent"), std::string::npos);
  EXPECT_EQ(trail->find("hi from bash"), std::string::npos);
  EXPECT_EQ(trail->find("output of a timed-out bash"), std::string::npos);
}

TEST_F(McpSdkTest, AThirdPartyServerRunsConfinedBehindCorralRun) {
  std::string server = SdkDir() + "/tiny_server.py";
  nlohmann::json report =
      RunClient({Node(), SdkDir() + "/wrap_client.mjs", CorralBin(), ws_.path(), server, outside_ / "planted.txt"},
                ws_.path());
  EXPECT_EQ(report["tools"], nlohmann::json({"echo", "plant"})) << report.dump();
  EXPECT_EQ(report["echo"], "through corral");
  EXPECT_EQ(report["inside"]["isError"], false) << report.dump();
  EXPECT_EQ(ReadFile(ws_ / "inside.txt"), "planted\n");
  EXPECT_EQ(report["outside"]["isError"], true) << report.dump();
  EXPECT_FALSE(Exists(outside_ / "planted.txt"));
}

}  // namespace
}  // namespace corral_it
