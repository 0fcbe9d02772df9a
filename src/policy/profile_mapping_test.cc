#include <gtest/gtest.h>

#include "policy/profile.h"

namespace corral {
namespace {

constexpr Access3 kDeny = Access3::kDeny;
constexpr Access3 kGated = Access3::kGated;
constexpr Access3 kAllow = Access3::kAllow;

ProfileConfig Base() {
  ProfileConfig config;
  config.workspace_root = "/w";
  config.command = kAllow;
  return config;
}

ProfileSpec Map(const ProfileConfig& config) {
  Result<Profile> profile = NewProfile(config);
  EXPECT_TRUE(profile.ok()) << profile.error().message();
  Result<ProfileSpec> mapped = ToPolicySpec(profile.value());
  EXPECT_TRUE(mapped.ok()) << mapped.error().message();
  return mapped.value();
}

Error MapError(const ProfileConfig& config) {
  Result<Profile> profile = NewProfile(config);
  EXPECT_TRUE(profile.ok()) << profile.error().message();
  Result<ProfileSpec> mapped = ToPolicySpec(profile.value());
  EXPECT_FALSE(mapped.ok());
  return mapped.ok() ? Error(ErrorKind::kInternal, "mapped") : mapped.error();
}

TEST(ProfileMapping, CommandDenyMeansNoChildAtAll) {
  ProfileConfig config = Base();
  config.command = kDeny;
  Error error = MapError(config);
  EXPECT_EQ(error.code(), "command_denied");
  EXPECT_EQ(error.kind(), ErrorKind::kPolicy);
}

TEST(ProfileMapping, WorkspaceReadOnlyGivesReadOnlyMode) {
  ProfileConfig config = Base();
  config.workspace_read = kAllow;
  ProfileSpec mapped = Map(config);
  EXPECT_EQ(mapped.spec.workspace, "/w");
  EXPECT_FALSE(mapped.spec.no_workspace);
  EXPECT_EQ(mapped.spec.mode, Mode::kReadOnly);
  EXPECT_TRUE(mapped.gated.empty());
}

TEST(ProfileMapping, WorkspaceWriteGivesWorkspaceWriteMode) {
  ProfileConfig config = Base();
  config.workspace_read = config.workspace_write = kAllow;
  ProfileSpec mapped = Map(config);
  EXPECT_EQ(mapped.spec.workspace, "/w");
  EXPECT_EQ(mapped.spec.mode, Mode::kWorkspaceWrite);
}

TEST(ProfileMapping, WorkspaceDenyGivesNoWorkspace) {
  ProfileSpec mapped = Map(Base());
  EXPECT_TRUE(mapped.spec.no_workspace);
  EXPECT_EQ(mapped.spec.workspace, std::nullopt);
  EXPECT_EQ(mapped.spec.mode, Mode::kReadOnly);
}

TEST(ProfileMapping, HostRootsBecomeReadAndWriteGrants) {
  ProfileConfig config = Base();
  config.host_read = config.host_write = kAllow;
  config.host_read_roots = {"/srv", "/opt"};
  config.host_write_roots = {"/srv/out"};
  ProfileSpec mapped = Map(config);
  EXPECT_EQ(mapped.spec.allow_read, (std::vector<std::string>{"/opt", "/srv"}));
  EXPECT_EQ(mapped.spec.allow_write, (std::vector<std::string>{"/srv/out"}));
  EXPECT_TRUE(mapped.spec.allow_exec.empty());
  EXPECT_TRUE(mapped.spec.no_workspace);
  EXPECT_EQ(mapped.spec.mode, Mode::kWorkspaceWrite);  // else the host writes would be read-only
}

TEST(ProfileMapping, ReadOnlyWorkspaceWithHostWritesIsRefused) {
  ProfileConfig config = Base();
  config.workspace_read = kAllow;
  config.host_read = config.host_write = kAllow;
  config.host_read_roots = config.host_write_roots = {"/srv"};
  EXPECT_EQ(MapError(config).code(), "profile_not_expressible");
}

TEST(ProfileMapping, NetworkAllowIsAllAndDenyIsNone) {
  ProfileConfig config = Base();
  EXPECT_EQ(Map(config).spec.network, NetworkMode::kNone);
  config.network = kAllow;
  EXPECT_EQ(Map(config).spec.network, NetworkMode::kAll);
}

TEST(ProfileMapping, HomeIsCarriedOver) {
  ProfileConfig config = Base();
  EXPECT_EQ(Map(config).spec.home, HomeMode::kIsolated);
  config.home = HomeMode::kReal;
  EXPECT_EQ(Map(config).spec.home, HomeMode::kReal);
}

TEST(ProfileMapping, GatedMapsLikeAllowAndIsListed) {
  ProfileConfig config = Base();
  config.workspace_read = kAllow;
  config.workspace_write = kGated;
  config.network = kGated;
  config.command = kGated;
  ProfileSpec mapped = Map(config);
  EXPECT_EQ(mapped.spec.mode, Mode::kWorkspaceWrite);
  EXPECT_EQ(mapped.spec.network, NetworkMode::kAll);
  EXPECT_EQ(mapped.gated,
            (std::vector<Dimension>{Dimension::kWorkspaceWrite, Dimension::kNetwork, Dimension::kCommand}));
}

TEST(ProfileMapping, UnconfinedIsAcknowledgedDangerFullAccess) {
  ProfileConfig config = Base();
  config.workspace_read = config.workspace_write = config.network = kAllow;
  config.host_read = config.host_write = kAllow;
  config.host_read_roots = config.host_write_roots = {"/"};
  config.isolation = Isolation::kUnconfined;
  config.acknowledge_unconfined = true;
  ProfileSpec mapped = Map(config);
  EXPECT_EQ(mapped.spec.mode, Mode::kDangerFullAccess);
  EXPECT_TRUE(mapped.spec.acknowledge_danger);
}

TEST(ProfileMapping, UnconfinedWithADeniedDimensionIsAFalseClaim) {
  ProfileConfig config = Base();
  config.workspace_read = config.workspace_write = kAllow;
  config.host_read = config.host_write = kAllow;
  config.host_read_roots = config.host_write_roots = {"/"};
  config.isolation = Isolation::kUnconfined;
  config.acknowledge_unconfined = true;
  // network stays Deny: nothing would enforce it.
  Error error = MapError(config);
  EXPECT_EQ(error.code(), "profile_not_expressible");
  EXPECT_NE(error.message().find("network = deny"), std::string::npos);
}

TEST(ProfileMapping, SandboxedNeverYieldsDangerMode) {
  ProfileConfig config = Base();
  config.workspace_read = config.workspace_write = config.network = kAllow;
  EXPECT_NE(Map(config).spec.mode, Mode::kDangerFullAccess);
  EXPECT_FALSE(Map(config).spec.acknowledge_danger);
}

}  // namespace
}  // namespace corral
