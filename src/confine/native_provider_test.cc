// The native backend: the argv runs corral on a compiled policy file that
// round-trips, full only on a host that gives every guarantee, and its rules
// recognise corral's own refusals.
#include "confine/native_provider.h"

#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iterator>

#include "testing/provider_test_support.h"
#include "policy/policy_file.h"

namespace corral {
namespace {

using testing::TestTree;

HostSupport FullHost() {
  HostSupport host;
  host.landlock_abi = 6;
  host.user_namespaces = true;
  host.seccomp = true;
  return host;
}

HostSupport NoLandlockHost() {
  HostSupport host = FullHost();
  host.landlock_abi = 0;
  return host;
}

// A policy for `workspace` as this user, so LoadPolicyFile accepts it.
Result<Policy> OwnPolicy(const std::string& workspace, Enforcement enforcement = Enforcement::kRequired) {
  HostContext host = testing::FixedHost(workspace);
  host.uid = ::getuid();
  host.gid = ::getgid();
  PolicyBuilder builder(host);
  builder.WithoutSystemRoots().SetEnforcement(enforcement);
  return builder.Build();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(NativeProvider, ArgvRunsCorralOnThePolicyFile) {
  TestTree tree;
  Result<Policy> policy = OwnPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  HostSupport host = FullHost();
  NativeProvider provider(NativeOptions{"/opt/corral/bin/corral", tree.Dir("policies"), &host, std::nullopt});
  Result<ConfinedArgv> confined = provider.Confine({"make", "-j", "test"}, *policy);
  ASSERT_TRUE(confined.ok()) << confined.error().ToString();
  const std::vector<std::string>& argv = confined->argv;
  ASSERT_EQ(argv.size(), 8u);
  EXPECT_EQ(argv[0], "/opt/corral/bin/corral");
  EXPECT_EQ(argv[1], "run");
  EXPECT_EQ(argv[2], "--policy-file");
  EXPECT_EQ(argv[3], tree.Join("policies/" + policy->fingerprint() + "-" +
                               ArgvDigest({"make", "-j", "test"}).substr(0, 16) + ".json"));
  EXPECT_EQ(argv[4], "--");
  EXPECT_EQ(std::vector<std::string>(argv.begin() + 5, argv.end()), (std::vector<std::string>{"make", "-j", "test"}));
  EXPECT_EQ(confined->coverage, ConfinedArgv::Coverage::kFull);
  EXPECT_TRUE(confined->gaps.empty());
  EXPECT_EQ(confined->backend, "native");
  EXPECT_EQ(confined->denial_signatures, NativeDenialSignatures());
  EXPECT_EQ(confined->runner_failure_rules, NativeRunnerFailureRules());
}

TEST(NativeProvider, PolicyFileRoundTripsThroughLoadPolicyFile) {
  TestTree tree;
  Result<Policy> policy = OwnPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  HostSupport host = FullHost();
  NativeProvider provider(NativeOptions{"/usr/bin/corral", tree.Dir("policies"), &host, std::nullopt});
  Result<ConfinedArgv> confined = provider.Confine({"true"}, *policy);
  ASSERT_TRUE(confined.ok()) << confined.error().ToString();
  std::string text = ReadAll(confined->argv[3]);
  EXPECT_EQ(text, SerializePolicyFile(*policy, {"true"}));
  Result<Policy> loaded = LoadPolicyFile(text, {"true"}, policy->host());
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  EXPECT_EQ(loaded->fingerprint(), policy->fingerprint());
  EXPECT_EQ(loaded->CanonicalJson(), policy->CanonicalJson());
}

// A workspace whose name is not UTF-8 compiles losslessly: the file is JSON,
// and the loaded policy is the same one, byte for byte.
TEST(NativeProvider, PolicyFileKeepsAWorkspaceNameThatIsNotUtf8) {
  TestTree tree;
  std::string workspace = tree.Dir(std::string("ws\x9b"));
  Result<Policy> policy = OwnPolicy(workspace);
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::string text = SerializePolicyFile(*policy, {"true"});
  EXPECT_FALSE(nlohmann::json::parse(text).is_discarded());
  Result<Policy> loaded = LoadPolicyFile(text, {"true"}, policy->host());
  ASSERT_TRUE(loaded.ok()) << loaded.error().ToString();
  ASSERT_TRUE(loaded->workspace().has_value());
  EXPECT_EQ(loaded->workspace()->path, workspace);
  EXPECT_EQ(loaded->fingerprint(), policy->fingerprint());
}

TEST(NativeProvider, SwappedWorkspaceMakesThePolicyFileRefused) {
  TestTree tree;
  std::string workspace = tree.Dir("ws");
  Result<Policy> policy = OwnPolicy(workspace);
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  HostSupport host = FullHost();
  NativeProvider provider(NativeOptions{"/usr/bin/corral", tree.Dir("policies"), &host, std::nullopt});
  Result<ConfinedArgv> confined = provider.Confine({"true"}, *policy);
  ASSERT_TRUE(confined.ok()) << confined.error().ToString();
  std::filesystem::rename(workspace, tree.Join("ws-old"));
  tree.Dir("ws");
  Result<Policy> loaded = LoadPolicyFile(ReadAll(confined->argv[3]), {"true"}, policy->host());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().kind(), ErrorKind::kPolicy);
}

// A policy file is data a harness hands back to corral: one edited to ask for
// danger-full-access, or with a field of the wrong type, runs nothing.
TEST(NativeProvider, AnEditedPolicyFileNeverRunsUnconfined) {
  TestTree tree;
  Result<Policy> policy = OwnPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  nlohmann::json edited = nlohmann::json::parse(SerializePolicyFile(*policy, {"true"}));
  edited["spec"]["mode"] = "danger-full-access";
  edited["spec"]["acknowledge_danger"] = true;
  Result<Policy> danger = LoadPolicyFile(edited.dump(), {"true"}, policy->host());
  ASSERT_FALSE(danger.ok());
  EXPECT_NE(danger.error().message().find("danger-full-access"), std::string::npos) << danger.error().ToString();

  nlohmann::json mistyped = nlohmann::json::parse(SerializePolicyFile(*policy, {"true"}));
  mistyped["fingerprint"] = 42;
  mistyped["pins"] = "all";
  EXPECT_FALSE(LoadPolicyFile(mistyped.dump(), {"true"}, policy->host()).ok());
}

TEST(NativeProvider, RefusesAHostThatCannotEnforceEverything) {
  TestTree tree;
  Result<Policy> policy = OwnPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  HostSupport host = NoLandlockHost();
  NativeProvider provider(NativeOptions{"/usr/bin/corral", tree.Dir("policies"), &host, std::nullopt});
  Result<ConfinedArgv> confined = provider.Confine({"true"}, *policy);
  ASSERT_FALSE(confined.ok());
  EXPECT_EQ(confined.error().kind(), ErrorKind::kUnsupported);
  EXPECT_NE(confined.error().message().find("landlock"), std::string::npos) << confined.error().message();
  EXPECT_TRUE(std::filesystem::is_empty(tree.Join("policies")));  // nothing written for a refusal
}

TEST(NativeProvider, BestEffortIsPartialAndNamesTheDroppedMechanisms) {
  TestTree tree;
  Result<Policy> policy = OwnPolicy(tree.Dir("ws"), Enforcement::kBestEffort);
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  HostSupport host = NoLandlockHost();
  NativeProvider provider(NativeOptions{"/usr/bin/corral", tree.Dir("policies"), &host, std::nullopt});
  Result<ConfinedArgv> confined = provider.Confine({"true"}, *policy);
  ASSERT_TRUE(confined.ok()) << confined.error().ToString();
  EXPECT_EQ(confined->coverage, ConfinedArgv::Coverage::kPartial);
  ASSERT_FALSE(confined->gaps.empty());
  EXPECT_EQ(confined->gaps[0].rfind("landlock:", 0), 0u) << confined->gaps[0];
}

TEST(NativeProvider, NeedsAnAbsoluteCorralPath) {
  TestTree tree;
  Result<Policy> policy = OwnPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  HostSupport host = FullHost();
  for (const char* path : {"", "corral", "bin/corral"}) {
    NativeProvider provider(NativeOptions{path, tree.Dir("policies"), &host, std::nullopt});
    Result<ConfinedArgv> confined = provider.Confine({"true"}, *policy);
    ASSERT_FALSE(confined.ok()) << path;
    EXPECT_EQ(confined.error().kind(), ErrorKind::kUsage);
  }
}

// The texts below are what `corral run` prints (exec/spawn.cc, policy_file.cc).
std::optional<std::string> AnyRule(int code, const std::string& stderr_text) {
  for (const RunnerFailureRule& rule : NativeRunnerFailureRules()) {
    if (auto matched = rule.Matches(code, stderr_text)) return matched;
  }
  return std::nullopt;
}

TEST(NativeProvider, RunnerRulesRecogniseCorralsRefusals) {
  EXPECT_EQ(AnyRule(77, "corral: compiled policy: /w is no longer the file it was when the policy was compiled; "
                        "the command was not run\n"),
            "the command was not run");
  EXPECT_EQ(AnyRule(125, "corral: mount view: cannot mount a fresh /proc; the command was not run: mount: EPERM\n"),
            "the command was not run");
  EXPECT_EQ(AnyRule(125, "corral: landlock: this kernel does not offer Landlock. The command was not run. Use ...\n"),
            "the command was not run");
  EXPECT_EQ(AnyRule(64, "corral: --policy-file /x.json: cannot read it\n"), "corral: --policy-file");
  // The command's own failures are not runner failures, whatever the code.
  EXPECT_EQ(AnyRule(77, "myapp: configuration refused\n"), std::nullopt);
  EXPECT_EQ(AnyRule(1, "the command was not run\n"), std::nullopt);
  EXPECT_EQ(AnyRule(0, "corral: landlock: the command was not run\n"), std::nullopt);
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

// A policy file admits the one command `corral wrap` judged: another argv,
// even one that differs in a single argument, is refused; so is one
// compiled for another home (the credential-store masks and corral's own
// state follow the home), whether edited into the file or met at load.
TEST(NativeProvider, APolicyFileServesOnlyItsCommandAndItsHome) {
  TestTree tree;
  Result<Policy> policy = OwnPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::string text = SerializePolicyFile(*policy, {"make", "test"});
  ASSERT_TRUE(LoadPolicyFile(text, {"make", "test"}, policy->host()).ok());
  for (const std::vector<std::string>& other : std::vector<std::vector<std::string>>{
           {"make", "test", "x"}, {"make", "tes"}, {"maketest"}, {"sh", "-c", "make test"}, {}}) {
    Result<Policy> loaded = LoadPolicyFile(text, other, policy->host());
    ASSERT_FALSE(loaded.ok());
    EXPECT_NE(loaded.error().message().find("another command"), std::string::npos) << loaded.error().ToString();
  }
  EXPECT_NE(ArgvDigest({"ab", "c"}), ArgvDigest({"a", "bc"}));

  HostContext elsewhere = policy->host();
  elsewhere.home = tree.Dir("other-home");
  Result<Policy> moved = LoadPolicyFile(text, {"make", "test"}, elsewhere);
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.error().message().find("home"), std::string::npos) << moved.error().ToString();
  nlohmann::json edited = nlohmann::json::parse(text);
  edited["host"]["home"] = tree.Dir("fake-home");
  EXPECT_FALSE(LoadPolicyFile(edited.dump(), {"make", "test"}, policy->host()).ok());
  edited = nlohmann::json::parse(text);
  edited["host"].erase("passwd_home");
  EXPECT_FALSE(LoadPolicyFile(edited.dump(), {"make", "test"}, policy->host()).ok());
  edited = nlohmann::json::parse(text);
  edited.erase("command_sha256");
  EXPECT_FALSE(LoadPolicyFile(edited.dump(), {"make", "test"}, policy->host()).ok());
}

}  // namespace
}  // namespace corral
