// Bad input and refusals: a clear `corral:` error, a documented exit code,
// and no child: the command would have created a canary in the workspace.
#include <unistd.h>

#include <regex>

#include "harness.h"

namespace corral_it {
namespace {

class BadInput : public SandboxTest {
 protected:
  BadInput() { workspace_.Mkdir("sub"); }

  // `corral ARGS` fails with `code` before anything runs.
  Outcome ExpectRefused(const std::vector<std::string>& args, int code, SpawnOptions options = {}) {
    std::vector<std::string> all = args;
    all.insert(all.begin() + 1, {"--audit", audit_path()});
    Outcome outcome = Corral(all, std::move(options));
    EXPECT_EQ(outcome.exit_code, code) << outcome.Describe();
    EXPECT_TRUE(outcome.err.starts_with("corral: ")) << outcome.Describe();
    EXPECT_EQ(outcome.out, "");
    EXPECT_FALSE(Exists(workspace_ / "canary"));
    EXPECT_EQ(AuditEvents("spawned").size(), 0u);
    // Even a run whose flags could not be parsed leaves its failed record.
    if (args[0] == "run") {
      std::vector<nlohmann::json> failed = AuditEvents("failed");
      EXPECT_EQ(failed.size(), 1u) << outcome.Describe();
      if (!failed.empty()) {
        EXPECT_EQ(failed[0]["source"], "corral");
        if (code == 64) {
          EXPECT_EQ(failed[0]["reason"], "usage");
        }
      }
    }
    return outcome;
  }
  Outcome ExpectUsageError(const std::vector<std::string>& grants) {
    std::vector<std::string> args = {"run"};
    args.insert(args.end(), grants.begin(), grants.end());
    args.insert(args.end(), {"--", "touch", "canary"});
    return ExpectRefused(args, 64);
  }
};

TEST_F(BadInput, ControlTheCanaryCommandDoesRun) {
  Outcome outcome = Corral({"run", "--audit", audit_path(), "--", "touch", "canary"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
}

TEST_F(BadInput, UnknownFlag) { ExpectUsageError({"--allow-everything", "/"}); }

TEST_F(BadInput, MissingSeparator) {
  Outcome outcome = ExpectRefused({"run", "touch", "canary"}, 64);
  EXPECT_NE(outcome.err.find("--"), std::string::npos);
}

TEST_F(BadInput, NonexistentGrantPath) { ExpectUsageError({"--allow-read", outside_ / "missing"}); }

TEST_F(BadInput, RelativeGrantPath) { ExpectUsageError({"--allow-read", "sub"}); }

TEST_F(BadInput, GrantPathWithDotDot) { ExpectUsageError({"--allow-write", workspace_ / "sub/../sub"}); }

TEST_F(BadInput, GrantThroughASymlink) {
  ASSERT_EQ(::symlink((workspace_ / "sub").c_str(), (outside_ / "link").c_str()), 0);
  Outcome outcome = ExpectUsageError({"--allow-read", outside_ / "link"});
  EXPECT_NE(outcome.err.find("symlink"), std::string::npos) << outcome.Describe();
}

TEST_F(BadInput, EmptyCommand) { ExpectRefused({"run", "--"}, 64); }

TEST_F(BadInput, BadNetworkValue) { ExpectUsageError({"--network", "sometimes"}); }

TEST_F(BadInput, BadTimeoutValue) { ExpectUsageError({"--timeout", "soon"}); }

TEST_F(BadInput, HomeAsTheWorkspaceIsRefused) {
  TempDir home("corral-home");
  SpawnOptions options = WithEnv({{"HOME", home.path()}});
  options.cwd = home.path();
  Outcome outcome = ExpectRefused({"run", "--", "touch", "canary"}, 77, options);
  EXPECT_NE(outcome.err.find("--workspace"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(home / "canary"));
}

// `corral run -- CMD` with no flag at all is not parsed (cli/main.cc): its
// flags keep the values they start with. Its policy is exactly a parsed
// run's: the spawned records of a bare run and of one naming the default
// mode agree in everything but the run's id and time (the policy's digest
// included), and a bare empty command is refused as a parsed one is.
TEST_F(BadInput, ARunWithNoFlagIsTheParsedDefault) {
  Outcome bare = Corral({"run", "--", "true"});
  ASSERT_EQ(bare.exit_code, 0) << bare.Describe();
  Outcome parsed = Corral({"run", "--mode", "workspace-write", "--", "true"});
  ASSERT_EQ(parsed.exit_code, 0) << parsed.Describe();
  std::vector<nlohmann::json> spawned;
  for (nlohmann::json record : ReadAudit(state_.path() + "/corral/audit.jsonl")) {
    if (record["event"] != "spawned") continue;
    record.erase("run");
    record.erase("ts");
    spawned.push_back(record);
  }
  ASSERT_EQ(spawned.size(), 2u);
  EXPECT_EQ(spawned[0], spawned[1]);
  Outcome empty = Corral({"run", "--"});
  EXPECT_EQ(empty.exit_code, 64) << empty.Describe();
  EXPECT_NE(empty.err.find("empty command after `--`"), std::string::npos) << empty.Describe();
}

class Pin : public BadInput {
 protected:
  std::string Hash(const std::string& path) {
    Outcome outcome = Corral({"hash", path});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    return outcome.out.substr(0, outcome.out.find('\n'));
  }
};

TEST_F(Pin, HashPrintsASha256) {
  Outcome outcome = Corral({"hash", "/usr/bin/true"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(std::regex_match(outcome.out, std::regex("[0-9a-f]{64}\n"))) << outcome.out;
}

TEST_F(Pin, TheRightDigestRuns) {
  Outcome outcome = Corral({"run", "--audit", audit_path(), "--pin-sha256", Hash("/usr/bin/touch"), "--",
                            "/usr/bin/touch", "canary"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
}

TEST_F(Pin, AWrongDigestRunsNothing) {
  ExpectRefused({"run", "--pin-sha256", Hash("/usr/bin/true"), "--", "/usr/bin/touch", "canary"}, 77);
}

TEST_F(Pin, AScriptIsRefused) {
  workspace_.Write("script", "#!/bin/sh\ntouch canary\n", 0755);
  Outcome outcome = ExpectRefused({"run", "--pin-sha256", Hash(workspace_ / "script"), "--", workspace_ / "script"}, 77);
  EXPECT_NE(outcome.err.find("#!"), std::string::npos) << outcome.Describe();
}

}  // namespace
}  // namespace corral_it
