// The seatbelt backend, as text: SBPL profiles against golden files, the
// argv around them, and quoting. (sandbox-exec itself exists only on macOS.)
#include "confine/seatbelt_provider.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "testing/golden_file.h"
#include "testing/provider_test_support.h"

namespace corral {
namespace {

using testing::BuildTestPolicy;
using testing::TestTree;

constexpr const char* kPrivateTmp = "/private/tmp/corral-test";

SeatbeltProvider FixedProvider() {
  SeatbeltOptions options;
  options.private_tmp = kPrivateTmp;
  options.environment = testing::FixedEnvironment();
  return SeatbeltProvider(std::move(options));
}

std::string Profile(const Policy& policy, const TestTree& tree) {
  Result<std::string> profile = SeatbeltProfile(policy, kPrivateTmp);
  EXPECT_TRUE(profile.ok()) << profile.error().ToString();
  return testing::ReplaceAll(profile.ok() ? *profile : "", tree.path(), testing::kTreePlaceholder);
}

TEST(SeatbeltGolden, DefaultWorkspaceWrite) {
  TestTree tree;
  Result<Policy> policy = BuildTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  testing::ExpectGolden("seatbelt_default.sb", Profile(*policy, tree));
}

TEST(SeatbeltGolden, NetworkAllWithExtraGrants) {
  TestTree tree;
  std::string data = tree.Dir("data"), tools = tree.Dir("tools"), cache = tree.Dir("cache");
  std::string config = tree.File("app.conf", "x=1\n");
  Result<Policy> policy = BuildTestPolicy(tree.Dir("ws"), [&](PolicyBuilder& builder) {
    builder.Network(NetworkMode::kAll).AllowRead(data).AllowRead(config).AllowExec(tools).AllowWrite(cache);
  });
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  testing::ExpectGolden("seatbelt_network.sb", Profile(*policy, tree));
}

TEST(SeatbeltGolden, ReadOnlyWithMasksAndProtectedPaths) {
  TestTree tree;
  std::string workspace = testing::ProjectWorkspace(tree);
  Result<Policy> policy = BuildTestPolicy(workspace, [&](PolicyBuilder& builder) {
    builder.SetMode(Mode::kReadOnly).ForbidRead("**/.env").ForbidRead(workspace + "/secrets");
  });
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  testing::ExpectGolden("seatbelt_readonly.sb", Profile(*policy, tree));
}

TEST(SeatbeltGolden, WorkspaceWriteProtectsGitEvenWhenMissing) {
  TestTree tree;
  std::string workspace = tree.Dir("ws");
  tree.Dir("ws/.git/hooks");
  tree.File("ws/.env", "TOKEN=secret\n");
  Result<Policy> policy =
      BuildTestPolicy(workspace, [&](PolicyBuilder& builder) { builder.ForbidRead("**/.env"); });
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  testing::ExpectGolden("seatbelt_protected.sb", Profile(*policy, tree));
}

TEST(SeatbeltProvider, ArgvRunsSandboxExecWithTheProfileAndAScrubbedEnvironment) {
  TestTree tree;
  Result<Policy> policy = testing::BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  Result<ConfinedArgv> confined = FixedProvider().Confine({"make", "test"}, *policy);
  ASSERT_TRUE(confined.ok()) << confined.error().ToString();
  std::vector<std::string> expected = {"/usr/bin/sandbox-exec", "-p", *SeatbeltProfile(*policy, kPrivateTmp), "--",
                                       "/usr/bin/env", "-i", "HOME=/home/agent", "LANG=C.UTF-8",
                                       "PATH=/usr/bin:/bin", std::string("TMPDIR=") + kPrivateTmp, "make", "test"};
  EXPECT_EQ(confined->argv, expected);
  EXPECT_EQ(confined->coverage, ConfinedArgv::Coverage::kPartial);
  EXPECT_EQ(confined->backend, "seatbelt");
  std::string gaps;
  for (const std::string& gap : confined->gaps) gaps += gap + "\n";
  for (const char* needle : {"process boundary:", "mount view:", "seccomp:", "privilege drop:"}) {
    EXPECT_NE(gaps.find(needle), std::string::npos) << needle;
  }
  ASSERT_EQ(confined->runner_failure_rules.size(), 1u);
  EXPECT_EQ(confined->runner_failure_rules[0].Matches(71, "sandbox-exec: sandbox_apply: Operation not permitted\n"),
            "sandbox-exec: ");
}

TEST(SeatbeltProvider, RefusesAPolicyThatRequiresWhatSeatbeltCannotGive) {
  TestTree tree;
  Result<Policy> policy = BuildTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  Result<ConfinedArgv> confined = FixedProvider().Confine({"make", "test"}, *policy);
  ASSERT_FALSE(confined.ok());
  EXPECT_EQ(confined.error().kind(), ErrorKind::kUnsupported);
  EXPECT_EQ(confined.error().code(), kPartialEnforcementCode);
  for (const char* needle : {"seatbelt backend", "process_boundary", "syscall_filter", "--best-effort"}) {
    EXPECT_NE(confined.error().message().find(needle), std::string::npos) << confined.error().message();
  }
  // Best-effort accepts the same gaps, and says which guarantees are missing.
  Result<Policy> accepted = testing::BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(accepted.ok()) << accepted.error().ToString();
  Result<ConfinedArgv> partial = FixedProvider().Confine({"make", "test"}, *accepted);
  ASSERT_TRUE(partial.ok()) << partial.error().ToString();
  EXPECT_EQ(partial->required.Missing(partial->provided).Names(),
            (std::vector<std::string>{"process_boundary", "syscall_filter", "privilege_drop", "resource_limits"}));
}

TEST(SeatbeltProvider, DenialsComeAfterEveryAllow) {
  // In SBPL the last matching rule wins, so a mask before a grant would be void.
  TestTree tree;
  std::string workspace = tree.Dir("ws");
  tree.File("ws/.env", "TOKEN=secret\n");
  Result<Policy> policy = BuildTestPolicy(workspace, [](PolicyBuilder& b) { b.ForbidRead("**/.env"); });
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::string profile = *SeatbeltProfile(*policy, kPrivateTmp);
  size_t last_allow = profile.rfind("(allow ");
  size_t first_deny = profile.find("(deny file-");
  ASSERT_NE(first_deny, std::string::npos);
  EXPECT_LT(last_allow, first_deny);
  EXPECT_NE(profile.find("(deny file-read* file-write*\n  (literal \"" + workspace + "/.env\"))"), std::string::npos)
      << profile;
}

TEST(SeatbeltProvider, QuotesPathsAndRefusesControlCharacters) {
  TestTree tree;
  std::string odd = tree.Dir("we \"said\" \\ok");
  Result<Policy> policy = BuildTestPolicy(odd);
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::string profile = *SeatbeltProfile(*policy, kPrivateTmp);
  EXPECT_NE(profile.find("(subpath \"" + tree.path() + "/we \\\"said\\\" \\\\ok\")"), std::string::npos) << profile;

  std::string newline = tree.Dir("line\nbreak");
  Result<Policy> broken = testing::BuildBestEffortTestPolicy(newline);
  ASSERT_TRUE(broken.ok()) << broken.error().ToString();
  Result<ConfinedArgv> confined = FixedProvider().Confine({"true"}, *broken);
  ASSERT_FALSE(confined.ok());
  EXPECT_EQ(confined.error().kind(), ErrorKind::kUsage);
}

TEST(SeatbeltProvider, RefusesAProgramNameEnvWouldMisread) {
  TestTree tree;
  Result<Policy> policy = testing::BuildBestEffortTestPolicy(tree.Dir("ws"));
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  EXPECT_FALSE(FixedProvider().Confine({"FOO=bar", "x"}, *policy).ok());
  EXPECT_FALSE(FixedProvider().Confine({"-u", "x"}, *policy).ok());
}

}  // namespace
}  // namespace corral
