#include "resolve/presets.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace corral {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(Presets, TheFourPresets) {
  struct Row {
    const char* name;
    Mode mode;
    ApprovalPolicy approval;
  };
  const Row rows[] = {
      {"safe", Mode::kReadOnly, ApprovalPolicy::kAskDangerous},
      {"review", Mode::kReadOnly, ApprovalPolicy::kAskDangerousToolEdit},
      {"custom", Mode::kWorkspaceWrite, ApprovalPolicy::kAskDangerous},
      {"danger", Mode::kDangerFullAccess, ApprovalPolicy::kAllowAll},
  };
  for (const Row& row : rows) {
    Result<Preset> preset = ResolvePreset(row.name);
    ASSERT_TRUE(preset.ok()) << row.name;
    EXPECT_EQ(preset->name, row.name);
    EXPECT_EQ(preset->mode, row.mode) << row.name;
    EXPECT_EQ(preset->approval, row.approval) << row.name;
  }
  EXPECT_EQ(AllPresets().size(), 4u);
}

TEST(Presets, UnknownNameIsATypedError) {
  for (const char* name : {"Safe", "", "yolo", "danger-full-access"}) {
    Result<Preset> preset = ResolvePreset(name);
    ASSERT_FALSE(preset.ok()) << name;
    EXPECT_EQ(preset.error().kind(), ErrorKind::kUsage);
    EXPECT_EQ(preset.error().code(), "unknown_preset");
  }
}

TEST(Presets, NoOverrideKeepsThePresetName) {
  PermissionState state = DerivedState(ResolvePreset("review").value(), std::nullopt, std::nullopt);
  EXPECT_EQ(state.name, "review");
  EXPECT_FALSE(state.derived);
  EXPECT_THAT(state.overridden, IsEmpty());
  EXPECT_EQ(state.Describe(), "review: read-only + ask-dangerous-tool-edit");
}

TEST(Presets, AnOverrideEqualToThePresetIsNotDerived) {
  PermissionState state =
      DerivedState(ResolvePreset("safe").value(), Mode::kReadOnly, ApprovalPolicy::kAskDangerous);
  EXPECT_EQ(state.name, "safe");
  EXPECT_FALSE(state.derived);
}

TEST(Presets, OverridesAreReportedAsDerivedCustom) {
  PermissionState mode_only = DerivedState(ResolvePreset("safe").value(), Mode::kWorkspaceWrite, std::nullopt);
  EXPECT_EQ(mode_only.name, "custom");
  EXPECT_TRUE(mode_only.derived);
  EXPECT_EQ(mode_only.base_preset, "safe");
  EXPECT_THAT(mode_only.overridden, ElementsAre("mode"));
  EXPECT_EQ(mode_only.mode, Mode::kWorkspaceWrite);
  EXPECT_EQ(mode_only.approval, ApprovalPolicy::kAskDangerous);
  EXPECT_EQ(mode_only.Describe(), "custom (derived from safe; mode overridden): workspace-write + ask-dangerous");

  PermissionState both =
      DerivedState(ResolvePreset("review").value(), Mode::kWorkspaceWrite, ApprovalPolicy::kDenyAll);
  EXPECT_THAT(both.overridden, ElementsAre("mode", "approval"));

  // The custom preset itself, overridden, is still reported as derived.
  PermissionState custom = DerivedState(ResolvePreset("custom").value(), std::nullopt, ApprovalPolicy::kAllowAll);
  EXPECT_EQ(custom.name, "custom");
  EXPECT_TRUE(custom.derived);
  EXPECT_THAT(custom.overridden, ElementsAre("approval"));
}

TEST(Presets, DangerNeverAcknowledgesItself) {
  PermissionState danger = DerivedState(ResolvePreset("danger").value(), std::nullopt, std::nullopt);
  EXPECT_TRUE(danger.needs_danger_acknowledgement);
  EXPECT_THAT(danger.Describe(), ::testing::HasSubstr("needs --i-understand-danger-full-access"));
  PolicySpec spec;
  danger.ApplyTo(spec);
  EXPECT_EQ(spec.mode, Mode::kDangerFullAccess);
  EXPECT_FALSE(spec.acknowledge_danger);
  // An override into danger needs it too.
  EXPECT_TRUE(DerivedState(ResolvePreset("safe").value(), Mode::kDangerFullAccess, std::nullopt)
                  .needs_danger_acknowledgement);
  EXPECT_FALSE(DerivedState(ResolvePreset("danger").value(), Mode::kReadOnly, std::nullopt)
                   .needs_danger_acknowledgement);
}

TEST(Presets, ApplyToSetsOnlyTheMode) {
  PolicySpec spec;
  spec.workspace = "/w";
  spec.acknowledge_danger = true;  // the user's own acknowledgement is left alone
  DerivedState(ResolvePreset("safe").value(), std::nullopt, std::nullopt).ApplyTo(spec);
  EXPECT_EQ(spec.mode, Mode::kReadOnly);
  EXPECT_EQ(spec.workspace, "/w");
  EXPECT_TRUE(spec.acknowledge_danger);
}

}  // namespace
}  // namespace corral
