// The provider seam: RunnerFailureRule::Matches stage by stage, the
// ConfinedArgv JSON shape, and the refusals every backend shares.
#include "confine/provider.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <nlohmann/json.hpp>

#include "confine/bubblewrap_provider.h"
#include "confine/native_provider.h"
#include "testing/provider_test_support.h"
#include "testing/source_dir.h"
#include "confine/seatbelt_provider.h"
#include "confine/unavailable_provider.h"

namespace corral {
namespace {

using testing::BuildTestPolicy;
using testing::TestTree;

RunnerFailureRule SeedRule() {
  return RunnerFailureRule{{125}, {"cannot start sandbox runner", "exec format error"},
                           {"landlock: fallback to baseline"}};
}

TEST(RunnerFailureRule, SeedExampleMatchesAfterDroppingTheInformationalLine) {
  std::optional<std::string> matched = SeedRule().Matches(
      125, "landlock: fallback to baseline\ncannot start sandbox runner: permission denied\n");
  EXPECT_EQ(matched, "cannot start sandbox runner");
}

TEST(RunnerFailureRule, ExitZeroNeverMatches) {
  EXPECT_EQ(SeedRule().Matches(0, "cannot start sandbox runner\n"), std::nullopt);
  RunnerFailureRule any{{}, {"x"}, {}};
  EXPECT_EQ(any.Matches(0, "x\n"), std::nullopt);
}

TEST(RunnerFailureRule, CodeOutsideTheAllowedListNeverMatches) {
  EXPECT_EQ(SeedRule().Matches(1, "cannot start sandbox runner\n"), std::nullopt);
  EXPECT_EQ(SeedRule().Matches(126, "cannot start sandbox runner\n"), std::nullopt);
}

TEST(RunnerFailureRule, EmptyAllowedListAcceptsAnyNonZeroCode) {
  RunnerFailureRule rule{{}, {"boom"}, {}};
  EXPECT_EQ(rule.Matches(1, "boom\n"), "boom");
  EXPECT_EQ(rule.Matches(-1, "boom"), "boom");
}

TEST(RunnerFailureRule, InformationalLineIsDroppedBeforeMatching) {
  // The only line carrying the signature is informational: no match.
  RunnerFailureRule rule{{125}, {"fallback"}, {"landlock: fallback to baseline"}};
  EXPECT_EQ(rule.Matches(125, "landlock: fallback to baseline\n"), std::nullopt);
  // Dropped case-insensitively and trimmed.
  EXPECT_EQ(rule.Matches(125, "  LANDLOCK: Fallback To Baseline \t\n"), std::nullopt);
  // Only whole lines are dropped: a longer line still counts.
  EXPECT_EQ(rule.Matches(125, "landlock: fallback to baseline failed\n"), "fallback");
}

TEST(RunnerFailureRule, SignaturesMatchCaseInsensitively) {
  EXPECT_EQ(SeedRule().Matches(125, "FATAL: Cannot Start Sandbox Runner\n"), "cannot start sandbox runner");
  RunnerFailureRule upper{{125}, {"EXEC FORMAT ERROR"}, {}};
  EXPECT_EQ(upper.Matches(125, "exec format error\n"), "EXEC FORMAT ERROR");
}

TEST(RunnerFailureRule, NoSignatureNoMatch) {
  EXPECT_EQ(SeedRule().Matches(125, "make: *** [all] Error 2\n"), std::nullopt);
  EXPECT_EQ(SeedRule().Matches(125, ""), std::nullopt);
  RunnerFailureRule none{{125}, {}, {}};
  EXPECT_EQ(none.Matches(125, "cannot start sandbox runner"), std::nullopt);
}

TEST(RunnerFailureRule, SignaturesAreTriedInOrder) {
  RunnerFailureRule rule{{}, {"second", "first"}, {}};
  EXPECT_EQ(rule.Matches(3, "first\nsecond\n"), "second");
}

TEST(ConfinedArgvJson, HasTheSeedShape) {
  ConfinedArgv confined;
  confined.argv = {"bwrap", "--", "true"};
  confined.coverage = ConfinedArgv::Coverage::kPartial;
  confined.denial_signatures = {"Permission denied"};
  confined.runner_failure_rules = {RunnerFailureRule{{1}, {"bwrap: "}, {"note"}}};
  confined.gaps = {"seccomp: no syscall filter"};
  confined.backend = "bubblewrap";
  confined.required.Add(Guarantee::kSyscallFilter);
  confined.required.Add(Guarantee::kWriteBoundary);
  confined.provided.Add(Guarantee::kWriteBoundary);
  nlohmann::json expected = nlohmann::json::parse(R"({
    "argv": ["bwrap", "--", "true"],
    "enforcement": "partial",
    "denialSignatures": ["Permission denied"],
    "runnerFailureRules": [{"allowedExitCodes": [1], "fatalSignatures": ["bwrap: "], "informationalLines": ["note"]}],
    "gaps": ["seccomp: no syscall filter"],
    "backend": "bubblewrap",
    "requiredGuarantees": ["write_boundary", "syscall_filter"],
    "providedGuarantees": ["write_boundary"]
  })");
  EXPECT_EQ(ConfinedArgvToJson(confined), expected);

  ConfinedArgv full;
  full.coverage = ConfinedArgv::Coverage::kFull;
  nlohmann::json empty = ConfinedArgvToJson(full);
  EXPECT_EQ(empty["enforcement"], "full");
  EXPECT_TRUE(empty["gaps"].is_array());  // empty lists stay lists
  EXPECT_TRUE(empty["runnerFailureRules"].is_array());
  EXPECT_TRUE(empty["argv"].is_array());
  EXPECT_TRUE(empty["requiredGuarantees"].is_array());
  EXPECT_TRUE(empty["providedGuarantees"].is_array());
}

TEST(CheckEnforceable, RefusesMissingGuaranteesUnlessBestEffort) {
  TestTree tree;
  Result<Policy> required = BuildTestPolicy(tree.Dir("ws"));
  Result<Policy> best_effort = testing::BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(required.ok() && best_effort.ok());
  ConfinedArgv confined;
  confined.backend = "example";
  confined.gaps = {"seccomp: none", "timeout: none"};
  confined.required = RequiredGuarantees(*required);
  confined.provided = confined.required;
  EXPECT_TRUE(CheckEnforceable(confined, *required).ok());  // everything provided

  confined.provided.Remove(Guarantee::kSyscallFilter);
  confined.provided.Remove(Guarantee::kResourceLimits);
  Status refused = CheckEnforceable(confined, *required);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(refused.error().code(), kPartialEnforcementCode);
  EXPECT_NE(refused.error().message().find("the example backend cannot provide syscall_filter, resource_limits"),
            std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find("seccomp: none; timeout: none"), std::string::npos);
  EXPECT_NE(refused.error().message().find("--best-effort"), std::string::npos);
  EXPECT_TRUE(CheckEnforceable(confined, *best_effort).ok());

  // Guarantees beyond the required ones do not matter.
  confined.required.Remove(Guarantee::kSyscallFilter);
  confined.required.Remove(Guarantee::kResourceLimits);
  EXPECT_TRUE(CheckEnforceable(confined, *required).ok());
}

std::vector<std::unique_ptr<Provider>> EveryBackend(const std::string& policy_dir) {
  std::vector<std::unique_ptr<Provider>> all;
  all.push_back(std::make_unique<NativeProvider>(NativeOptions{"/usr/bin/corral", policy_dir, nullptr, std::nullopt}));
  all.push_back(std::make_unique<BubblewrapProvider>());
  SeatbeltOptions seatbelt;
  seatbelt.private_tmp = "/private/tmp/corral-test";
  all.push_back(std::make_unique<SeatbeltProvider>(seatbelt));
  return all;
}

TEST(Providers, EveryBackendRefusesDangerFullAccess) {
  TestTree tree;
  std::string workspace = tree.Dir("ws");
  Result<Policy> danger = BuildTestPolicy(workspace, [](PolicyBuilder& builder) {
    builder.SetMode(Mode::kDangerFullAccess).AcknowledgeDangerFullAccess();
  });
  ASSERT_TRUE(danger.ok()) << danger.error().ToString();
  for (const auto& provider : EveryBackend(tree.Dir("policies"))) {
    Result<ConfinedArgv> confined = provider->Confine({"true"}, *danger);
    ASSERT_FALSE(confined.ok()) << provider->name();
    EXPECT_EQ(confined.error().code(), "cannot_confine_danger") << provider->name();
    EXPECT_EQ(confined.error().kind(), ErrorKind::kPolicy) << provider->name();
  }
  // Nothing was written for the refused policy.
  EXPECT_TRUE(std::filesystem::is_empty(tree.Join("policies")));
}

TEST(Providers, EveryBackendRefusesAnEmptyCommand) {
  TestTree tree;
  Result<Policy> policy = BuildTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  for (const auto& provider : EveryBackend(tree.Dir("policies"))) {
    EXPECT_FALSE(provider->Confine({}, *policy).ok()) << provider->name();
    EXPECT_FALSE(provider->Confine({""}, *policy).ok()) << provider->name();
  }
}

TEST(UnavailableProvider, AlwaysFailsWithSandboxUnavailable) {
  TestTree tree;
  Result<Policy> policy = BuildTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  for (UnavailableProvider provider : {UnavailableProvider(), UnavailableProvider("bwrap is missing")}) {
    Result<ConfinedArgv> confined = provider.Confine({"true"}, *policy);
    ASSERT_FALSE(confined.ok());
    EXPECT_EQ(confined.error().code(), "SANDBOX_UNAVAILABLE");
    EXPECT_EQ(confined.error().kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(confined.error().message().rfind("no usable sandbox backend", 0), 0u) << confined.error().message();
  }
  EXPECT_EQ(UnavailableProvider().name(), "unavailable");
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

// README.md's "What `wrap --json` prints" names every key a ConfinedArgv and
// a runner failure rule carry, and the native backend's exit codes.
TEST(ConfinedArgvDocs, TheReadmeExplainsEveryKey) {
  std::ifstream in(testing::SourceDir() / "README.md");
  ASSERT_TRUE(in.good()) << "README.md not found under " << testing::SourceDir();
  std::stringstream text;
  text << in.rdbuf();
  std::string readme = text.str();
  size_t section = readme.find("### What `wrap --json` prints");
  ASSERT_NE(section, std::string::npos);
  readme = readme.substr(section, readme.find("\n## ", section) - section);
  ConfinedArgv confined;
  confined.runner_failure_rules = NativeRunnerFailureRules();
  nlohmann::json json = ConfinedArgvToJson(confined);
  for (const auto& [key, value] : json.items()) {
    EXPECT_NE(readme.find("`" + key + "`"), std::string::npos) << key;
  }
  for (const auto& [key, value] : json["runnerFailureRules"][0].items()) {
    EXPECT_NE(readme.find("`" + key + "`"), std::string::npos) << key;
  }
  for (const RunnerFailureRule& rule : NativeRunnerFailureRules()) {
    for (int code : rule.allowed_exit_codes) {
      EXPECT_NE(readme.find(std::to_string(code)), std::string::npos) << code;
    }
  }
}

}  // namespace
}  // namespace corral
