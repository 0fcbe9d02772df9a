// The audit trail, read from the --audit file after each run.
#include <regex>

#include "harness.h"

namespace corral_it {
namespace {

class Audit : public SandboxTest {
 protected:
  // The records of one run: `spawned` first, then exactly one ending.
  void ExpectOneSpawnedThen(const std::string& ending) {
    std::vector<nlohmann::json> records = SandboxTest::Audit();
    ASSERT_EQ(records.size(), 2u) << ReadFile(audit_path()).value_or("");
    const nlohmann::json& spawned = records[0];
    EXPECT_EQ(spawned["event"], "spawned");
    EXPECT_TRUE(std::regex_match(spawned.value("policy", ""), std::regex("[0-9a-f]{64}"))) << spawned;
    for (const char* key : {"readable", "writable", "executable", "network", "ts", "run"}) {
      EXPECT_TRUE(spawned.contains(key)) << key;
    }
    EXPECT_EQ(records[1]["event"], ending);
    EXPECT_EQ(records[1]["run"], spawned["run"]);
  }

  void ExpectAuditLacks(const std::string& text) {
    EXPECT_EQ(ReadFile(audit_path()).value_or("").find(text), std::string::npos) << text;
  }
};

TEST_F(Audit, ARunIsOneSpawnedThenOneExited) {
  std::string output = RandomToken("OUTPUT");
  workspace_.Write("data.txt", output);
  Outcome outcome = RunIn({}, {"cat", "data.txt"});
  EXPECT_EQ(outcome.out, output) << outcome.Describe();
  ExpectOneSpawnedThen("exited");
  EXPECT_EQ(SandboxTest::Audit()[1]["code"], 0);
  EXPECT_EQ(SandboxTest::Audit()[1]["source"], "command");
  ExpectAuditLacks(output);
}

TEST_F(Audit, AFailedRunIsOneSpawnedThenOneFailed) {
  Outcome outcome = RunIn({"--timeout", "1"}, {"sleep", "30"});
  EXPECT_EQ(outcome.exit_code, 124) << outcome.Describe();
  ExpectOneSpawnedThen("failed");
  EXPECT_EQ(SandboxTest::Audit()[1]["reason"], "timeout");
  EXPECT_EQ(SandboxTest::Audit()[1]["source"], "corral");

  outcome = RunIn({}, {"no-such-command-in-the-sandbox"});
  EXPECT_EQ(outcome.exit_code, 127) << outcome.Describe();
  ExpectOneSpawnedThen("failed");
  EXPECT_EQ(SandboxTest::Audit()[1]["reason"], "not_found");
}

TEST_F(Audit, TheTrailHoldsNoEnvironmentValue) {
  std::string secret = RandomToken("ENVVALUE");
  Outcome outcome = RunIn({"--allow-env", "SECRET_TOKEN"}, {"env"}, WithEnv({{"SECRET_TOKEN", secret}}));
  EXPECT_NE(outcome.out.find(secret), std::string::npos) << outcome.Describe();  // it did reach the command
  ExpectOneSpawnedThen("exited");
  ExpectAuditLacks(secret);
}

// The arguments may carry a secret the caller's shell expanded: the trail
// keeps the program and the argument count only.
TEST_F(Audit, TheTrailHoldsNoArgument) {
  std::string secret = RandomToken("ARGVALUE");
  Outcome outcome = RunIn({}, {"echo", "Authorization: Bearer " + secret});
  EXPECT_NE(outcome.out.find(secret), std::string::npos) << outcome.Describe();
  ExpectOneSpawnedThen("exited");
  EXPECT_EQ(SandboxTest::Audit()[0]["argc"], 2);  // echo and its one argument
  ExpectAuditLacks(secret);
}

// An --audit file inside the workspace, named relatively, is still out of
// the command's reach: judged afterwards, the file holds corral's two
// records and nothing the command wrote.
TEST_F(Audit, ARelativeAuditFileInTheWorkspaceCannotBeRewritten) {
  std::string forged = RandomToken("FORGED");
  SpawnOptions options;
  options.cwd = workspace_.path();
  Outcome outcome = Corral({"run", "--audit", "trail.jsonl", "--", "sh", "-c",
                            "printf '{\"event\":\"" + forged + "\"}\\n' > trail.jsonl; "
                            "printf '{\"event\":\"" + forged + "\"}\\n' >> trail.jsonl; rm -f trail.jsonl; exit 0"},
                           options);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  std::vector<nlohmann::json> records = ReadAudit(workspace_ / "trail.jsonl");
  ASSERT_EQ(records.size(), 2u) << ReadFile(workspace_ / "trail.jsonl").value_or("(missing)");
  EXPECT_EQ(records[0]["event"], "spawned");
  EXPECT_EQ(records[1]["event"], "exited");
  EXPECT_EQ(ReadFile(workspace_ / "trail.jsonl").value_or("").find(forged), std::string::npos);
}

}  // namespace
}  // namespace corral_it
