// The bubblewrap backend: its argv against golden files, and the properties
// that keep it honest (mount order, scrubbed environment, partial report,
// refusing a policy that requires what bwrap cannot give). bwrap wraps only
// best-effort policies, so every other test builds one.
#include "confine/bubblewrap_provider.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/golden_file.h"
#include "testing/provider_test_support.h"

namespace corral {
namespace {

using testing::BuildBestEffortTestPolicy;
using testing::TestTree;

BubblewrapProvider FixedProvider() {
  BubblewrapOptions options;
  options.bwrap_path = "/usr/bin/bwrap";
  options.environment = testing::FixedEnvironment();
  return BubblewrapProvider(std::move(options));
}

// The argv one word per line, the tree's path replaced by @TREE@.
std::string Golden(const ConfinedArgv& confined, const TestTree& tree) {
  std::string text;
  for (const std::string& word : confined.argv) text += word + "\n";
  return testing::ReplaceAll(text, tree.path(), testing::kTreePlaceholder);
}

ConfinedArgv MustConfine(const Policy& policy, const std::vector<std::string>& argv = {"make", "test"}) {
  Result<ConfinedArgv> confined = FixedProvider().Confine(argv, policy);
  EXPECT_TRUE(confined.ok()) << confined.error().ToString();
  return confined.ok() ? std::move(confined).value() : ConfinedArgv{};
}

TEST(BubblewrapGolden, DefaultWorkspaceWrite) {
  TestTree tree;
  Result<Policy> policy = BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  testing::ExpectGolden("bwrap_default.txt", Golden(MustConfine(*policy), tree));
}

TEST(BubblewrapGolden, ReadOnlyModeWithExtraGrants) {
  TestTree tree;
  std::string data = tree.Dir("data"), tools = tree.Dir("tools"), out = tree.Dir("out");
  Result<Policy> policy = BuildBestEffortTestPolicy(tree.Dir("ws"), [&](PolicyBuilder& builder) {
    builder.SetMode(Mode::kReadOnly).AllowRead(data).AllowExec(tools).AllowWrite(out);
  });
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  testing::ExpectGolden("bwrap_readonly.txt", Golden(MustConfine(*policy), tree));
}

TEST(BubblewrapGolden, ProtectedPathsMasksAndNetwork) {
  TestTree tree;
  std::string workspace = testing::ProjectWorkspace(tree);
  Result<Policy> policy = BuildBestEffortTestPolicy(workspace, [&](PolicyBuilder& builder) {
    builder.Network(NetworkMode::kAll).ForbidRead("**/.env").ForbidRead(workspace + "/secrets");
  });
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  testing::ExpectGolden("bwrap_protected.txt", Golden(MustConfine(*policy, {"sh", "-c", "git status"}), tree));
}

// Where the consecutive `words` start in `argv`, or -1.
long Position(const std::vector<std::string>& argv, const std::vector<std::string>& words) {
  auto at = std::search(argv.begin(), argv.end(), words.begin(), words.end());
  return at == argv.end() ? -1 : static_cast<long>(at - argv.begin());
}

TEST(BubblewrapProvider, ParentsAreMountedBeforeChildren) {
  // A workspace under /tmp and a home holding a grant: the private tmpfs
  // must come first, or it would hide what is bound below it.
  TestTree tree;
  std::string workspace = tree.Dir("ws");
  HostContext host = testing::FixedHost(workspace);
  host.home = tree.path();  // the grant below lies inside the (isolated) home
  PolicyBuilder builder(host);
  builder.WithoutSystemRoots().SetEnforcement(Enforcement::kBestEffort);
  Result<Policy> policy = builder.Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::vector<std::string> argv = MustConfine(*policy).argv;
  long tmp = Position(argv, {"--tmpfs", "/tmp"});
  long home = Position(argv, {"--tmpfs", tree.path()});
  long bind = Position(argv, {"--bind", workspace, workspace});
  ASSERT_GE(tmp, 0);
  ASSERT_GE(home, 0);
  ASSERT_GE(bind, 0);
  EXPECT_LT(tmp, home);
  EXPECT_LT(home, bind);
}

TEST(BubblewrapProvider, RecreatesTheSystemSymlinks) {
  TestTree tree;
  PolicyBuilder builder(testing::FixedHost(tree.Dir("ws")));  // with this host's system trees
  builder.SetEnforcement(Enforcement::kBestEffort);
  Result<Policy> policy = builder.Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::vector<std::string> argv = MustConfine(*policy).argv;
  for (const SystemSymlink& link : policy->symlinks()) {
    EXPECT_GE(Position(argv, {"--symlink", link.target, link.path}), 0) << link.path;
  }
  for (const PathGrant& grant : policy->grants()) {
    std::string flag = Has(grant.access, Access::kWrite) ? "--bind" : "--ro-bind";
    EXPECT_GE(Position(argv, {flag, grant.path.path, grant.path.path}), 0) << grant.path.path;
  }
  for (const MaskedPath& mask : policy->masks()) {
    EXPECT_GE(mask.is_dir ? Position(argv, {"--tmpfs", mask.path, "--remount-ro", mask.path})
                          : Position(argv, {"--ro-bind", "/dev/null", mask.path}),
              0)
        << mask.path;
  }
  // Never the whole host.
  EXPECT_EQ(Position(argv, {"--ro-bind", "/", "/"}), -1);
  EXPECT_EQ(Position(argv, {"--bind", "/", "/"}), -1);
}

TEST(BubblewrapProvider, PassesOnlyTheScrubbedEnvironment) {
  TestTree tree;
  Result<Policy> policy = BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::vector<std::string> argv = MustConfine(*policy).argv;
  ASSERT_NE(std::find(argv.begin(), argv.end(), "--clearenv"), argv.end());
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "do-not-leak"), argv.end());
  long home = Position(argv, {"--setenv", "HOME", "/home/agent"});
  ASSERT_GE(home, 0);
  EXPECT_GE(Position(argv, {"--setenv", "PATH", "/usr/bin:/bin"}), 0);
  // --clearenv comes before every --setenv.
  EXPECT_LT(std::find(argv.begin(), argv.end(), "--clearenv") - argv.begin(), home);
}

TEST(BubblewrapProvider, SharesTheNetworkOnlyWhenGranted) {
  TestTree tree;
  Result<Policy> none = BuildBestEffortTestPolicy(tree.Dir("ws"));
  Result<Policy> all = BuildBestEffortTestPolicy(tree.Dir("ws"), [](PolicyBuilder& b) { b.Network(NetworkMode::kAll); });
  ASSERT_TRUE(none.ok() && all.ok());
  std::vector<std::string> closed = MustConfine(*none).argv, open = MustConfine(*all).argv;
  EXPECT_EQ(std::count(closed.begin(), closed.end(), "--share-net"), 0);
  EXPECT_EQ(std::count(open.begin(), open.end(), "--share-net"), 1);
  EXPECT_EQ(std::count(open.begin(), open.end(), "--unshare-all"), 1);
}

TEST(BubblewrapProvider, IsPartialAndNamesWhatBwrapCannotGive) {
  TestTree tree;
  Result<Policy> policy = BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  ConfinedArgv confined = MustConfine(*policy);
  EXPECT_EQ(confined.coverage, ConfinedArgv::Coverage::kPartial);
  EXPECT_EQ(confined.backend, "bubblewrap");
  std::string all;
  for (const std::string& gap : confined.gaps) all += gap + "\n";
  for (const char* needle : {"landlock:", "seccomp:", "hardening:", "pins:", "masks:", "exec boundary:",
                             "protected paths:"}) {
    EXPECT_NE(all.find(needle), std::string::npos) << needle << " missing from\n" << all;
  }
  EXPECT_EQ(all.find("timeout:"), std::string::npos);  // only when the policy has one
  Result<Policy> timed = BuildBestEffortTestPolicy(tree.Dir("ws"), [](PolicyBuilder& b) { b.Timeout(std::chrono::seconds(5)); });
  ASSERT_TRUE(timed.ok());
  std::vector<std::string> gaps = MustConfine(*timed).gaps;
  EXPECT_TRUE(std::any_of(gaps.begin(), gaps.end(), [](const std::string& g) { return g.starts_with("timeout:"); }));
  EXPECT_EQ(all.find("environment:"), std::string::npos);  // only with --allow-env
  Result<Policy> env = BuildBestEffortTestPolicy(tree.Dir("ws"), [](PolicyBuilder& b) { b.AllowEnv("API_TOKEN"); });
  ASSERT_TRUE(env.ok());
  gaps = MustConfine(*env).gaps;
  EXPECT_TRUE(
      std::any_of(gaps.begin(), gaps.end(), [](const std::string& g) { return g.starts_with("environment:"); }));
  // The limits, --max-cpus among them: bwrap sets no rlimit and no cgroup.
  Result<Policy> limited =
      BuildBestEffortTestPolicy(tree.Dir("ws"), [](PolicyBuilder& b) { b.MaxOpenFiles(64).MaxCpus(500); });
  ASSERT_TRUE(limited.ok());
  gaps = MustConfine(*limited).gaps;
  EXPECT_TRUE(std::any_of(gaps.begin(), gaps.end(), [](const std::string& g) {
    return g.starts_with("limits: ") && g.find("open files 64, cpus 0.5 not applied") != std::string::npos;
  })) << ::testing::PrintToString(gaps);
}

TEST(BubblewrapProvider, RefusesAPolicyThatRequiresWhatBwrapCannotGive) {
  // Without --best-effort the policy requires every guarantee; bwrap lacks
  // three of them, so nothing is wrapped, and the error says which and how
  // to accept them.
  TestTree tree;
  for (NetworkMode network : {NetworkMode::kNone, NetworkMode::kAll}) {
    Result<Policy> policy = testing::BuildTestPolicy(tree.Dir("ws"), [&](PolicyBuilder& b) { b.Network(network); });
    ASSERT_TRUE(policy.ok()) << policy.error().ToString();
    ASSERT_EQ(policy->enforcement(), Enforcement::kRequired);
    Result<ConfinedArgv> confined = FixedProvider().Confine({"make", "test"}, *policy);
    ASSERT_FALSE(confined.ok());
    EXPECT_EQ(confined.error().kind(), ErrorKind::kUnsupported);
    EXPECT_EQ(confined.error().code(), kPartialEnforcementCode);
    const std::string& message = confined.error().message();
    for (const char* needle : {"bubblewrap backend", "exec_boundary", "syscall_filter", "resource_limits",
                               "--best-effort", "seccomp: no syscall filter"}) {
      EXPECT_NE(message.find(needle), std::string::npos) << needle << " missing from " << message;
    }
  }
}

TEST(BubblewrapProvider, ReportsTheRequiredAndTheProvidedGuarantees) {
  TestTree tree;
  Result<Policy> none = BuildBestEffortTestPolicy(tree.Dir("ws"));
  Result<Policy> all = BuildBestEffortTestPolicy(tree.Dir("ws"), [](PolicyBuilder& b) { b.Network(NetworkMode::kAll); });
  ASSERT_TRUE(none.ok() && all.ok());
  ConfinedArgv closed = MustConfine(*none);
  EXPECT_EQ(closed.required.bits(), RequiredGuarantees(*none).bits());
  EXPECT_EQ(closed.required.Missing(closed.provided).Names(),
            (std::vector<std::string>{"exec_boundary", "syscall_filter", "resource_limits"}));
  for (Guarantee g : {Guarantee::kProcessBoundary, Guarantee::kWriteBoundary, Guarantee::kReadBoundary,
                      Guarantee::kNetworkBoundary, Guarantee::kEnvScrub, Guarantee::kPrivilegeDrop}) {
    EXPECT_TRUE(closed.provided.Has(g)) << GuaranteeName(g);
  }
  // --share-net: no network boundary is required, and the host's abstract
  // unix sockets are reachable, so there is no process boundary either.
  ConfinedArgv open = MustConfine(*all);
  EXPECT_FALSE(open.required.Has(Guarantee::kNetworkBoundary));
  EXPECT_FALSE(open.provided.Has(Guarantee::kNetworkBoundary));
  EXPECT_FALSE(open.provided.Has(Guarantee::kProcessBoundary));
}

TEST(BubblewrapProvider, RunnerRuleRecognisesBwrapsOwnErrors) {
  TestTree tree;
  Result<Policy> policy = BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  ConfinedArgv confined = MustConfine(*policy);
  ASSERT_EQ(confined.runner_failure_rules.size(), 1u);
  const RunnerFailureRule& rule = confined.runner_failure_rules[0];
  EXPECT_EQ(rule.Matches(1, "bwrap: No permissions to creating new namespace, likely because the kernel does not "
                            "allow non-privileged user namespaces.\n"),
            "bwrap: No permissions to creating new namespace");
  EXPECT_EQ(rule.Matches(1, "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n"), "bwrap: Can't mount");
  EXPECT_EQ(rule.Matches(1, "grep: no match\n"), std::nullopt);
  EXPECT_EQ(rule.Matches(2, "bwrap: Can't mount proc\n"), std::nullopt);
  EXPECT_NE(std::find(confined.denial_signatures.begin(), confined.denial_signatures.end(), "Permission denied"),
            confined.denial_signatures.end());
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

// bwrap has no egress proxy: host rules would silently become no network at
// all, so the backend refuses them, even under best effort.
TEST(BubblewrapProvider, RefusesHostRules) {
  TestTree tree;
  PolicyBuilder builder(testing::FixedHost(tree.Dir("ws")));
  builder.WithoutSystemRoots().SetEnforcement(Enforcement::kBestEffort).AllowHost("registry.npmjs.org");
  Result<Policy> policy = builder.Build();
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  Result<ConfinedArgv> confined = FixedProvider().Confine({"npm", "install"}, *policy);
  ASSERT_FALSE(confined.ok());
  EXPECT_EQ(confined.error().code(), "backend_lacks_egress");
  EXPECT_NE(confined.error().message().find("cannot give --allow-host (registry.npmjs.org:80,443)"), std::string::npos)
      << confined.error().message();
}

}  // namespace
}  // namespace corral
