#include "policy/profile.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

constexpr Access3 kDeny = Access3::kDeny;
constexpr Access3 kGated = Access3::kGated;
constexpr Access3 kAllow = Access3::kAllow;

ProfileConfig Workspace(Access3 read, Access3 write) {
  ProfileConfig config;
  config.workspace_root = "/w";
  config.workspace_read = read;
  config.workspace_write = write;
  config.command = kAllow;
  return config;
}

Profile Make(const ProfileConfig& config) {
  Result<Profile> profile = NewProfile(config);
  EXPECT_TRUE(profile.ok()) << profile.error().message();
  return profile.value();
}

std::string CodeOf(const ProfileConfig& config) {
  Result<Profile> profile = NewProfile(config);
  EXPECT_FALSE(profile.ok());
  return profile.ok() ? "" : profile.error().code();
}

TEST(ProfileValidation, DefaultsDenyEverything) {
  Profile profile = Make(ProfileConfig{});
  for (Dimension dimension : kAllDimensions) EXPECT_EQ(profile.access(dimension), kDeny) << DimensionName(dimension);
  EXPECT_EQ(profile.home(), HomeMode::kIsolated);
  EXPECT_EQ(profile.isolation(), Isolation::kSandboxed);
}

TEST(ProfileValidation, AccessLevelsAreOrderedDenyGatedAllow) {
  EXPECT_LT(kDeny, kGated);
  EXPECT_LT(kGated, kAllow);
  for (Access3 access : {kDeny, kGated, kAllow}) EXPECT_EQ(ParseAccess3(Access3Name(access)), access);
  EXPECT_EQ(ParseAccess3("Allow"), std::nullopt);
}

TEST(ProfileValidation, WorkspaceWriteAboveReadIsRefusedNotRaised) {
  EXPECT_EQ(CodeOf(Workspace(kDeny, kAllow)), "profile_write_without_read");
  EXPECT_EQ(CodeOf(Workspace(kGated, kAllow)), "profile_write_without_read");
  EXPECT_EQ(CodeOf(Workspace(kDeny, kGated)), "profile_write_without_read");
  Result<Profile> refused = NewProfile(Workspace(kDeny, kAllow));
  EXPECT_NE(refused.error().message().find("raise workspace_read"), std::string::npos);
  EXPECT_EQ(refused.error().kind(), ErrorKind::kUsage);
  // Equal or lower write is fine.
  EXPECT_TRUE(NewProfile(Workspace(kAllow, kAllow)).ok());
  EXPECT_TRUE(NewProfile(Workspace(kGated, kGated)).ok());
  EXPECT_TRUE(NewProfile(Workspace(kAllow, kDeny)).ok());
}

TEST(ProfileValidation, HostWriteNeedsReadLevelAndCoveringReadRoot) {
  ProfileConfig config;
  config.host_read = kGated;
  config.host_write = kAllow;
  config.host_read_roots = {"/srv"};
  config.host_write_roots = {"/srv/out"};
  EXPECT_EQ(CodeOf(config), "profile_write_without_read");
  config.host_read = kAllow;
  EXPECT_TRUE(NewProfile(config).ok());
  config.host_write_roots = {"/var/out"};
  EXPECT_EQ(CodeOf(config), "profile_write_without_read");
}

TEST(ProfileValidation, WorkspaceRootRequiredUnlessBothWorkspaceDimensionsDeny) {
  ProfileConfig config = Workspace(kGated, kDeny);
  config.workspace_root.clear();
  EXPECT_EQ(CodeOf(config), "profile_missing_workspace_root");
  ProfileConfig none = Workspace(kDeny, kDeny);
  none.workspace_root.clear();
  EXPECT_TRUE(NewProfile(none).ok());
  // With both Deny, a given root is irrelevant and is cleared.
  EXPECT_EQ(Make(Workspace(kDeny, kDeny)).workspace_root(), "");
}

TEST(ProfileValidation, HostDimensionsAboveDenyNeedRoots) {
  ProfileConfig config;
  config.host_read = kAllow;
  EXPECT_EQ(CodeOf(config), "profile_missing_roots");
  config.host_read_roots = {"/srv"};
  config.host_write = kGated;
  EXPECT_EQ(CodeOf(config), "profile_missing_roots");
  // At Deny, roots are cleared.
  ProfileConfig denied;
  denied.host_read_roots = {"/srv"};
  EXPECT_TRUE(Make(denied).host_read_roots().empty());
}

TEST(ProfileValidation, RootsMustBeAbsoluteCanonical) {
  for (std::string bad : std::vector<std::string>{"relative", "", "/a/../b", "/a/./b", "~/x", "/a\nb"}) {
    ProfileConfig config;
    config.host_read = kAllow;
    config.host_read_roots = {bad};
    EXPECT_EQ(CodeOf(config), "profile_bad_path") << bad;
    ProfileConfig workspace = Workspace(kAllow, kDeny);
    workspace.workspace_root = bad;
    EXPECT_FALSE(NewProfile(workspace).ok()) << bad;
  }
}

TEST(ProfileValidation, RootsAreNormalisedSortedAndMinimal) {
  ProfileConfig config;
  config.host_read = kAllow;
  config.host_read_roots = {"/srv/data/", "/opt//tools", "/srv", "/srv/x", "/opt/tools"};
  config.workspace_root = "/w//proj/";
  config.workspace_read = kAllow;
  config.command = kAllow;
  Profile profile = Make(config);
  EXPECT_EQ(profile.host_read_roots(), (std::vector<std::string>{"/opt/tools", "/srv"}));
  EXPECT_EQ(profile.workspace_root(), "/w/proj");
}

TEST(ProfileValidation, NormalisingIsIdempotent) {
  ProfileConfig config = Workspace(kAllow, kGated);
  config.host_read = kAllow;
  config.host_read_roots = {"/b/", "/a", "/a/c"};
  Profile once = Make(config);
  Profile twice = Make(once.config());
  EXPECT_EQ(once, twice);
}

TEST(ProfileValidation, UnconfinedNeedsAcknowledgement) {
  ProfileConfig config;
  config.isolation = Isolation::kUnconfined;
  EXPECT_EQ(CodeOf(config), "unconfined_not_acknowledged");
  config.acknowledge_unconfined = true;
  EXPECT_EQ(Make(config).isolation(), Isolation::kUnconfined);
}

TEST(ProfileValidation, AcknowledgementIsClearedWhenSandboxed) {
  ProfileConfig config;
  config.acknowledge_unconfined = true;
  EXPECT_FALSE(Make(config).config().acknowledge_unconfined);
  EXPECT_EQ(Make(config), Make(ProfileConfig{}));
}

TEST(ProfileRestrict, TakesTheMinimumOfEachLevel) {
  ProfileConfig a = Workspace(kAllow, kGated);
  a.network = kAllow;
  a.command = kGated;
  ProfileConfig b = Workspace(kGated, kDeny);
  b.network = kDeny;
  b.command = kAllow;
  Profile meet = Restrict(Make(a), Make(b));
  EXPECT_EQ(meet.access(Dimension::kWorkspaceRead), kGated);
  EXPECT_EQ(meet.access(Dimension::kWorkspaceWrite), kDeny);
  EXPECT_EQ(meet.access(Dimension::kNetwork), kDeny);
  EXPECT_EQ(meet.access(Dimension::kCommand), kGated);
}

TEST(ProfileRestrict, IsolatedHomeAndSandboxedWin) {
  ProfileConfig real;
  real.home = HomeMode::kReal;
  real.isolation = Isolation::kUnconfined;
  real.acknowledge_unconfined = true;
  Profile wide = Make(real);
  Profile narrow = Make(ProfileConfig{});
  EXPECT_EQ(Restrict(wide, narrow).home(), HomeMode::kIsolated);
  EXPECT_EQ(Restrict(wide, narrow).isolation(), Isolation::kSandboxed);
  EXPECT_FALSE(Restrict(wide, narrow).config().acknowledge_unconfined);
  EXPECT_EQ(Restrict(wide, wide), wide);
}

TEST(ProfileRestrict, WorkspaceRootsIntersect) {
  ProfileConfig outer = Workspace(kAllow, kAllow);
  outer.workspace_root = "/w";
  ProfileConfig inner = Workspace(kAllow, kAllow);
  inner.workspace_root = "/w/sub";
  EXPECT_EQ(Restrict(Make(outer), Make(inner)).workspace_root(), "/w/sub");
  EXPECT_EQ(Restrict(Make(inner), Make(outer)).workspace_root(), "/w/sub");
  ProfileConfig other = Workspace(kAllow, kAllow);
  other.workspace_root = "/elsewhere";
  Profile disjoint = Restrict(Make(outer), Make(other));
  EXPECT_EQ(disjoint.workspace_root(), "");
  EXPECT_EQ(disjoint.access(Dimension::kWorkspaceRead), kDeny);
  EXPECT_EQ(disjoint.access(Dimension::kWorkspaceWrite), kDeny);
  // "/w" and "/wx" share a prefix but not a tree.
  other.workspace_root = "/wx";
  EXPECT_EQ(Restrict(Make(outer), Make(other)).workspace_root(), "");
}

TEST(ProfileRestrict, HostRootsIntersectPathWise) {
  ProfileConfig a;
  a.host_read = kAllow;
  a.host_read_roots = {"/srv", "/opt/a"};
  ProfileConfig b;
  b.host_read = kAllow;
  b.host_read_roots = {"/srv/data", "/opt", "/home"};
  Profile meet = Restrict(Make(a), Make(b));
  EXPECT_EQ(meet.host_read_roots(), (std::vector<std::string>{"/opt/a", "/srv/data"}));
  b.host_read_roots = {"/home"};
  Profile none = Restrict(Make(a), Make(b));
  EXPECT_TRUE(none.host_read_roots().empty());
  EXPECT_EQ(none.access(Dimension::kHostRead), kDeny);
}

TEST(ProfileRestrict, NeverWidensAnExample) {
  ProfileConfig base = Workspace(kAllow, kAllow);
  base.network = kAllow;
  base.host_read = kAllow;
  base.host_read_roots = {"/srv"};
  ProfileConfig ceiling = Workspace(kAllow, kDeny);
  Profile meet = Restrict(Make(base), Make(ceiling));
  EXPECT_TRUE(IsNarrowerOrEqual(meet, Make(base)));
  EXPECT_TRUE(IsNarrowerOrEqual(meet, Make(ceiling)));
  EXPECT_FALSE(IsNarrowerOrEqual(Make(base), Make(ceiling)));
}

TEST(ProfileFingerprint, DependsOnAuthorityNotSpelling) {
  ProfileConfig a = Workspace(kAllow, kGated);
  a.host_read = kAllow;
  a.host_read_roots = {"/srv", "/opt"};
  ProfileConfig b = a;
  b.host_read_roots = {"/opt/", "/srv", "/srv/sub"};
  b.acknowledge_unconfined = true;  // cleared: sandboxed
  EXPECT_EQ(Fingerprint(Make(a)), Fingerprint(Make(b)));
  EXPECT_EQ(Fingerprint(Make(a)).size(), 64U);
  ProfileConfig c = a;
  c.network = kGated;
  EXPECT_NE(Fingerprint(Make(a)), Fingerprint(Make(c)));
  ProfileConfig d = a;
  d.home = HomeMode::kReal;
  EXPECT_NE(Fingerprint(Make(a)), Fingerprint(Make(d)));
}

// A root whose name is not UTF-8 fingerprints (no exception), exactly.
TEST(ProfileFingerprint, KeepsBytesThatAreNotUtf8) {
  ProfileConfig a = Workspace(kAllow, kGated);
  a.host_read = kAllow;
  a.host_read_roots = {std::string("/srv/x\x9b")};
  ProfileConfig b = a;
  b.host_read_roots = {std::string("/srv/x\x9c")};
  EXPECT_EQ(Fingerprint(Make(a)).size(), 64U);
  EXPECT_NE(Fingerprint(Make(a)), Fingerprint(Make(b)));
}

TEST(ProfileFingerprint, IsStable) {
  // A change to the canonical form changes every stored fingerprint: do it on purpose.
  EXPECT_EQ(CanonicalProfileJson(Make(ProfileConfig{})),
            R"({"acknowledge_unconfined":false,"command":"deny","home":"isolated","host_read":"deny",)"
            R"("host_read_roots":[],"host_write":"deny","host_write_roots":[],"isolation":"sandboxed",)"
            R"("network":"deny","version":1,"workspace_read":"deny","workspace_root":"","workspace_write":"deny"})");
}

}  // namespace
}  // namespace corral
