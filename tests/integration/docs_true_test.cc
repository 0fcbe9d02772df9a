// What the README and docs/config.md say, checked through the binary: the
// JSON refusals of explain and wrap, the one timeout maximum, a --config
// file that must exist, a project file's mode, escalation's wording, and
// `corral check` inside a sandbox.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "harness.h"

namespace corral_it {
namespace {

constexpr int kExitUsage = 64;
constexpr int kExitPolicy = 77;
constexpr int kExitConfig = 78;

class DocsAreTrue : public SandboxTest {
 protected:
  // `corral ARGS` refuses with `code`; the canary command did not run.
  Outcome ExpectNothingRan(const std::vector<std::string>& args, int code) {
    Outcome outcome = Corral(args);
    EXPECT_EQ(outcome.exit_code, code) << outcome.Describe();
    EXPECT_NE(outcome.err.find("corral: "), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(workspace_ / "canary")) << outcome.Describe();
    return outcome;
  }
  // The {"error": ...} object a --json refusal printed on stdout.
  static nlohmann::json JsonError(const Outcome& outcome) {
    nlohmann::json out = nlohmann::json::parse(outcome.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(out.is_object() && out.contains("error")) << outcome.Describe();
    return out.is_object() && out.contains("error") ? out["error"] : nlohmann::json::object();
  }
};

TEST_F(DocsAreTrue, ExplainAndWrapAnswerABadCommandLineInJsonWithACode) {
  struct Row {
    std::vector<std::string> flags;
    bool separated;
    std::string code;
  };
  const Row rows[] = {
      {{"--allow-everything", "/"}, true, "usage_unknown_flag"},
      {{"--timeout", "soon"}, true, "usage_bad_flag"},
      {{}, false, "usage_missing_separator"},
  };
  for (const std::string subcommand : {"explain", "wrap"}) {
    for (const Row& row : rows) {
      std::vector<std::string> args = {subcommand, "--json"};
      args.insert(args.end(), row.flags.begin(), row.flags.end());
      if (row.separated) args.push_back("--");
      args.insert(args.end(), {"touch", "canary"});
      Outcome outcome = ExpectNothingRan(args, kExitUsage);
      nlohmann::json error = JsonError(outcome);
      EXPECT_EQ(error.value("kind", ""), "usage") << subcommand << " " << row.code;
      EXPECT_EQ(error.value("code", ""), row.code) << outcome.Describe();
      EXPECT_FALSE(error.value("message", "").empty()) << outcome.Describe();
    }
    // Without --json, stdout stays empty.
    Outcome text = ExpectNothingRan({subcommand, "--allow-everything", "/", "--", "touch", "canary"}, kExitUsage);
    EXPECT_EQ(text.out, "");
    // A refusal without a specific code carries its kind's name.
    Outcome policy = ExpectNothingRan({subcommand, "--json", "--mode", "danger-full-access", "--", "touch", "canary"},
                                      kExitPolicy);
    EXPECT_EQ(JsonError(policy).value("code", ""), "policy") << policy.Describe();
  }
}

TEST_F(DocsAreTrue, TheTimeoutMaximumIsOneYearForTheFlagAndTheFile) {
  Outcome over = ExpectNothingRan({"run", "--timeout", "31536001", "--", "touch", "canary"}, kExitUsage);
  EXPECT_NE(over.err.find("31536000"), std::string::npos) << over.Describe();
  EXPECT_EQ(over.err.find("31622400"), std::string::npos) << over.Describe();
  Outcome at = RunIn({"--timeout", "31536000"}, {"touch", "canary"});
  EXPECT_EQ(at.exit_code, 0) << at.Describe();
  ASSERT_TRUE(Exists(workspace_ / "canary"));
  ::unlink((workspace_ / "canary").c_str());
  outside_.Write("user.toml", "[sandbox]\ntimeout = 31536001\n", 0600);
  Outcome file = ExpectNothingRan({"run", "--config", outside_ / "user.toml", "--", "touch", "canary"}, kExitConfig);
  EXPECT_NE(file.err.find("31536000"), std::string::npos) << file.Describe();
}

TEST_F(DocsAreTrue, AConfigFileNamedByTheFlagMustExist) {
  std::string missing = outside_ / "nonexistent.toml";
  for (const std::string subcommand : {"run", "explain"}) {
    Outcome outcome = ExpectNothingRan({subcommand, "--config", missing, "--", "touch", "canary"}, kExitConfig);
    EXPECT_NE(outcome.err.find(missing + ": no such config file"), std::string::npos) << outcome.Describe();
  }
  Outcome json = ExpectNothingRan({"explain", "--json", "--config", missing, "--", "touch", "canary"}, kExitConfig);
  EXPECT_EQ(JsonError(json).value("code", ""), "config_missing") << json.Describe();
  // The default path may be missing: that is no config.
  Outcome plain = RunIn({}, {"touch", "canary"});
  EXPECT_EQ(plain.exit_code, 0) << plain.Describe();
}

// umask 002 makes corral.toml 0664. It can only narrow, so it is read (and
// narrows), and a widening key in it is still refused.
TEST_F(DocsAreTrue, AGroupWritableProjectFileNarrowsAndCannotWiden) {
  workspace_.Write("corral.toml", "[sandbox]\nmode = \"read-only\"\n", 0664);
  ASSERT_EQ(::chmod((workspace_ / "corral.toml").c_str(), 0664), 0);
  Outcome narrowed = RunIn({}, {"touch", "canary"});
  EXPECT_NE(narrowed.exit_code, 0) << narrowed.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));
  EXPECT_NE(narrowed.err.find("[sandbox: file access denied under read-only mode]"), std::string::npos)
      << narrowed.Describe();
  workspace_.Write("corral.toml", "[sandbox]\nnetwork = true\n", 0664);
  ASSERT_EQ(::chmod((workspace_ / "corral.toml").c_str(), 0664), 0);
  Outcome widened = ExpectNothingRan({"run", "--", "touch", "canary"}, kExitConfig);
  EXPECT_NE(widened.err.find("the project config cannot open the network"), std::string::npos) << widened.Describe();
  EXPECT_EQ(widened.err.find("could open the sandbox"), std::string::npos) << widened.Describe();
}

TEST_F(DocsAreTrue, AnEscalationThatIsNotWiderIsNoFileAccessDenial) {
  Outcome outcome = ExpectNothingRan({"run", "--mode", "workspace-write", "--sandbox-permissions", "read-only",
                                      "--justification", "why not", "--", "touch", "canary"},
                                     kExitPolicy);
  EXPECT_NE(outcome.err.find("escalation refused: read-only is not wider than workspace-write"), std::string::npos)
      << outcome.Describe();
  EXPECT_EQ(outcome.err.find("file access denied"), std::string::npos) << outcome.Describe();
}

// Inside a sandbox the sysctls still allow user namespaces, but the seccomp
// filter refuses to create one: `corral check` says so instead of
// "available", and is not full.
TEST_F(DocsAreTrue, CheckSaysUserNamespacesAreRefusedWhenCreatingOneFails) {
  std::string bin_dir = std::filesystem::path(CorralBin()).parent_path();
  Outcome outcome = RunIn({"--allow-exec", bin_dir}, {CorralBin(), "check"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find("user namespaces  refused: "), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.out.find("probe            FAILED"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("user namespaces  available"), std::string::npos) << outcome.Describe();
}

}  // namespace
}  // namespace corral_it
