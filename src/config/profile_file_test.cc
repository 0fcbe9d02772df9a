#include "config/profile_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"
#include "policy/policy.h"

namespace corral {
namespace {

using corral::testing::TestTree;

constexpr char kFile[] = "/p/profile.toml";

Profile Parse(const std::string& text) {
  Result<Profile> profile = ParseProfileText(text, kFile, "/home/u");
  EXPECT_TRUE(profile.ok()) << profile.error().message();
  return profile.ok() ? profile.value() : NewProfile(ProfileConfig{}).value();
}

Error Refusal(const std::string& text) {
  Result<Profile> profile = ParseProfileText(text, kFile, "/home/u");
  EXPECT_FALSE(profile.ok()) << text;
  if (profile.ok()) return Error(ErrorKind::kInternal, "accepted");
  EXPECT_EQ(profile.error().kind(), ErrorKind::kConfig);
  return profile.error();
}

TEST(ProfileToml, EveryKey) {
  Profile profile = Parse(
      "[profile]\nworkspace_root = \"~/src/app\"\nworkspace_read = \"allow\"\nworkspace_write = \"gated\"\n"
      "host_read = \"allow\"\nhost_read_roots = [\"/srv\", \"~/data\"]\nhost_write = \"gated\"\n"
      "host_write_roots = [\"/srv/out\"]\nnetwork = \"gated\"\ncommand = \"allow\"\nhome = \"real\"\n"
      "isolation = \"unconfined\"\nacknowledge_unconfined = true\n");
  ProfileConfig expected;
  expected.workspace_root = "/home/u/src/app";
  expected.workspace_read = Access3::kAllow;
  expected.workspace_write = Access3::kGated;
  expected.host_read = Access3::kAllow;
  expected.host_read_roots = {"/home/u/data", "/srv"};
  expected.host_write = Access3::kGated;
  expected.host_write_roots = {"/srv/out"};
  expected.network = Access3::kGated;
  expected.command = Access3::kAllow;
  expected.home = HomeMode::kReal;
  expected.isolation = Isolation::kUnconfined;
  expected.acknowledge_unconfined = true;
  EXPECT_EQ(profile.config(), expected);
}

TEST(ProfileToml, AnEmptyTableDeniesEverything) {
  Profile profile = Parse("[profile]\n");
  for (Dimension dimension : kAllDimensions) EXPECT_EQ(profile.access(dimension), Access3::kDeny);
}

TEST(ProfileToml, StrictKeysTypesAndValues) {
  EXPECT_EQ(Refusal("[profile]\nnetwrk = \"allow\"\n").message(), "/p/profile.toml:2:1: profile.netwrk: unknown key");
  EXPECT_EQ(Refusal("[profile]\nnetwork = true\n").message(),
            "/p/profile.toml:2:1: profile.network: expected a string, got boolean");
  EXPECT_EQ(Refusal("[profile]\nnetwork = \"maybe\"\n").message(),
            "/p/profile.toml:2:1: profile.network: \"maybe\" is not one of \"deny\", \"gated\", \"allow\"");
  EXPECT_EQ(Refusal("[profile]\nisolation = \"none\"\n").message(),
            "/p/profile.toml:2:1: profile.isolation: \"none\" is not one of \"sandboxed\", \"unconfined\"");
  EXPECT_EQ(Refusal("[profile]\nacknowledge_unconfined = \"yes\"\n").code(), "config_wrong_type");
  EXPECT_EQ(Refusal("[profile]\nhost_read_roots = [\"relative\"]\n").message(),
            "/p/profile.toml:2:20: profile.host_read_roots[0]: \"relative\": relative paths are not allowed in the "
            "profile; write an absolute path or start it with ~/");
  EXPECT_EQ(Refusal("[sandbox]\nmode = \"read-only\"\n").message(), "/p/profile.toml:1:2: sandbox: unknown table");
  EXPECT_EQ(Refusal("command = \"allow\"\n").code(), "config_unknown_key");
  EXPECT_EQ(Refusal("profile = 1\n").message(), "/p/profile.toml:1:1: profile: expected a table, got integer");
  EXPECT_EQ(Refusal("").message(), "/p/profile.toml:1:1: profile: missing: a profile file needs a [profile] table");
  EXPECT_EQ(Refusal("[profile\n").code(), "config_syntax");
}

TEST(ProfileToml, ValidationErrorsPointAtTheTableAndKeepTheCode) {
  Error error = Refusal("\n[profile]\nworkspace_root = \"/w\"\nworkspace_write = \"allow\"\n");
  EXPECT_EQ(error.code(), "profile_write_without_read");
  EXPECT_EQ(error.message().rfind("/p/profile.toml:2:2: profile: workspace_write = allow exceeds workspace_read = deny", 0),
            0U)
      << error.message();
  EXPECT_EQ(Refusal("[profile]\nisolation = \"unconfined\"\n").code(), "unconfined_not_acknowledged");
}

TEST(ProfileToml, SpellingDoesNotChangeTheFingerprint) {
  Profile a = Parse("[profile]\nhost_read = \"allow\"\nhost_read_roots = [\"/srv\", \"/opt\"]\ncommand = \"allow\"\n");
  Profile b = Parse("profile.command = \"allow\"\nprofile.host_read_roots = [\"/opt/\", \"/srv//\"]\n"
                    "profile.host_read = \"allow\"\n");
  EXPECT_EQ(Fingerprint(a), Fingerprint(b));
}

TEST(ProfileToml, LoadRefusesMissingAndInsecureFiles) {
  TestTree dir;
  Result<Profile> missing = LoadProfileFile(dir.path() + "/none.toml", "/home/u", ::geteuid());
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message(), dir.path() + "/none.toml: no such profile file");
  std::string path = dir.File("p.toml", "[profile]\n");
  ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
  Result<Profile> insecure = LoadProfileFile(path, "/home/u", ::geteuid());
  ASSERT_FALSE(insecure.ok());
  EXPECT_EQ(insecure.error().code(), "config_insecure");
}

// A profile file, mapped and built, gives the policy its dimensions describe.
TEST(ProfileToml, EndToEndBuildsThePolicy) {
  TestTree dir;
  std::string workspace = dir.Dir("ws");
  std::string data = dir.Dir("data");
  std::string home = dir.Dir("home");
  std::string path = dir.File("p.toml", "[profile]\nworkspace_root = \"" + workspace +
                                             "\"\nworkspace_read = \"allow\"\nworkspace_write = \"allow\"\n"
                                             "host_read = \"allow\"\nhost_read_roots = [\"" + data +
                                             "\"]\nnetwork = \"deny\"\ncommand = \"gated\"\n");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  Result<Profile> profile = LoadProfileFile(path, home, ::geteuid());
  ASSERT_TRUE(profile.ok()) << profile.error().message();
  Result<ProfileSpec> mapped = ToPolicySpec(profile.value());
  ASSERT_TRUE(mapped.ok()) << mapped.error().message();
  EXPECT_EQ(mapped->gated, std::vector<Dimension>{Dimension::kCommand});
  HostContext host{workspace, home, ::getuid(), ::getgid(), {}, {}, {}};
  Result<Policy> policy = BuildPolicy(host, mapped->spec);
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  EXPECT_EQ(policy->mode(), Mode::kWorkspaceWrite);
  EXPECT_EQ(policy->network(), NetworkMode::kNone);
  ASSERT_TRUE(policy->workspace());
  EXPECT_EQ(policy->workspace()->path, workspace);
  ASSERT_NE(policy->GrantFor(data), nullptr);
  EXPECT_EQ(policy->GrantFor(data)->access, Access::kRead);
  EXPECT_EQ(policy->WritableRoots(), std::vector<std::string>{workspace});
}

}  // namespace
}  // namespace corral
