#include "resolve/resolution.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/gate_test_support.h"

namespace corral {
namespace {

using ::testing::HasSubstr;

class ResolutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(scratch_.ok());
    Result<SessionStore> store = SessionStore::Open(scratch_.Join("sessions"));
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    store_.emplace(std::move(store).value());
    Result<Session> with_mode = store_->Create("with-mode", "/src/app");
    ASSERT_TRUE(with_mode.ok());
    ASSERT_TRUE(with_mode->RecordMode(Mode::kReadOnly, ModeSource::kUser).ok());
    ASSERT_TRUE(with_mode->RecordMode(Mode::kWorkspaceWrite, ModeSource::kDelegation).ok());
    with_mode_.emplace(std::move(with_mode).value());
    Result<Session> without_mode = store_->Create("without-mode", "/src/other");
    ASSERT_TRUE(without_mode.ok());
    without_mode_.emplace(std::move(without_mode).value());
  }

  testing::ScratchDir scratch_;
  std::optional<SessionStore> store_;
  std::optional<Session> with_mode_;     // cwd /src/app, last mode workspace-write
  std::optional<Session> without_mode_;  // cwd /src/other, no sandbox/mode event
};

// The mode precedence table: override > session > default.
TEST_F(ResolutionTest, ModePrecedenceTable) {
  struct Row {
    std::optional<Mode> override_mode;
    const Session* session;
    Mode want;
    ModeLayer layer;
  };
  const Session* logged = &*with_mode_;
  const Session* silent = &*without_mode_;
  const Row rows[] = {
      {std::nullopt, nullptr, Mode::kReadOnly, ModeLayer::kDefault},
      {std::nullopt, silent, Mode::kReadOnly, ModeLayer::kDefault},
      {std::nullopt, logged, Mode::kWorkspaceWrite, ModeLayer::kSession},
      {Mode::kReadOnly, logged, Mode::kReadOnly, ModeLayer::kOverride},
      {Mode::kDangerFullAccess, logged, Mode::kDangerFullAccess, ModeLayer::kOverride},
      {Mode::kWorkspaceWrite, nullptr, Mode::kWorkspaceWrite, ModeLayer::kOverride},
      {Mode::kDangerFullAccess, silent, Mode::kDangerFullAccess, ModeLayer::kOverride},
  };
  PolicyService service(Mode::kReadOnly, "/fallback/root");
  for (size_t i = 0; i < std::size(rows); ++i) {
    Resolution resolution = service.Explain({rows[i].override_mode, rows[i].session});
    EXPECT_EQ(resolution.policy.mode, rows[i].want) << "row " << i;
    EXPECT_EQ(resolution.mode_layer, rows[i].layer) << "row " << i;
    EXPECT_EQ(service.Resolve({rows[i].override_mode, rows[i].session}), resolution.policy) << "row " << i;
  }
}

TEST_F(ResolutionTest, DefaultIsTheDeploymentsChoice) {
  PolicyService service(Mode::kWorkspaceWrite, std::nullopt);
  EXPECT_EQ(service.Resolve({}).mode, Mode::kWorkspaceWrite);
  EXPECT_EQ(service.Resolve({std::nullopt, &*without_mode_}).mode, Mode::kWorkspaceWrite);
}

// The workspace root table: session cwd > fallback root > none.
TEST_F(ResolutionTest, WorkspaceRootPrecedenceTable) {
  PolicyService with_fallback(Mode::kReadOnly, "/fallback/root");
  PolicyService without_fallback(Mode::kReadOnly, std::nullopt);

  Resolution from_session = with_fallback.Explain({std::nullopt, &*with_mode_});
  EXPECT_EQ(from_session.policy.workspace_root, "/src/app");
  EXPECT_EQ(from_session.root_layer, RootLayer::kSession);
  EXPECT_EQ(from_session.policy.session_id, "with-mode");

  // An override changes the mode, never the root.
  Resolution overridden = with_fallback.Explain({Mode::kDangerFullAccess, &*without_mode_});
  EXPECT_EQ(overridden.policy.workspace_root, "/src/other");
  EXPECT_EQ(overridden.root_layer, RootLayer::kSession);

  Resolution agentless = with_fallback.Explain({});
  EXPECT_EQ(agentless.policy.workspace_root, "/fallback/root");
  EXPECT_EQ(agentless.root_layer, RootLayer::kFallback);
  EXPECT_FALSE(agentless.policy.session_id.has_value());

  Resolution nothing = without_fallback.Explain({});
  EXPECT_FALSE(nothing.policy.workspace_root.has_value());
  EXPECT_EQ(nothing.root_layer, RootLayer::kNone);
}

TEST_F(ResolutionTest, TheSeedExamples) {
  PolicyService service(Mode::kReadOnly, "/fallback/root");
  ExecutionPolicy p1 = service.Resolve({std::nullopt, &*with_mode_});
  EXPECT_EQ(p1.mode, Mode::kWorkspaceWrite);
  EXPECT_EQ(p1.workspace_root, with_mode_->cwd());
  ExecutionPolicy p2 = service.Resolve({Mode::kDangerFullAccess, &*with_mode_});
  EXPECT_TRUE(p2.IsDanger());
  ExecutionPolicy p3 = service.Resolve({});
  EXPECT_EQ(p3.mode, Mode::kReadOnly);
  EXPECT_EQ(p3.workspace_root, "/fallback/root");
}

TEST_F(ResolutionTest, SessionChangesAreSeenOnTheNextResolve) {
  PolicyService service(Mode::kReadOnly, std::nullopt);
  EXPECT_EQ(service.Resolve({std::nullopt, &*with_mode_}).mode, Mode::kWorkspaceWrite);
  ASSERT_TRUE(with_mode_->RecordMode(Mode::kReadOnly, ModeSource::kEscalation).ok());
  Resolution resolution = service.Explain({std::nullopt, &*with_mode_});
  EXPECT_EQ(resolution.policy.mode, Mode::kReadOnly);
  EXPECT_EQ(resolution.session_source, ModeSource::kEscalation);
}

TEST(ResolutionToConfined, RefusesDangerWithATypedError) {
  ExecutionPolicy danger{Mode::kDangerFullAccess, "/w", std::nullopt};
  EXPECT_TRUE(danger.IsDanger());
  Result<PolicySpec> spec = danger.ToConfined();
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().kind(), ErrorKind::kPolicy);
  EXPECT_EQ(spec.error().code(), "cannot_confine_danger");
}

TEST(ResolutionToConfined, SetsModeAndWorkspaceOnly) {
  for (Mode mode : {Mode::kReadOnly, Mode::kWorkspaceWrite}) {
    ExecutionPolicy policy{mode, "/src/app", "s1"};
    EXPECT_FALSE(policy.IsDanger());
    Result<PolicySpec> spec = policy.ToConfined();
    ASSERT_TRUE(spec.ok());
    PolicySpec want;
    want.mode = mode;
    want.workspace = "/src/app";
    EXPECT_EQ(*spec, want);
    EXPECT_FALSE(spec->acknowledge_danger);
  }
  ExecutionPolicy rootless{Mode::kReadOnly, std::nullopt, std::nullopt};
  EXPECT_FALSE(rootless.ToConfined()->workspace.has_value());
}

TEST_F(ResolutionTest, DescribeNamesTheWinningLayers) {
  PolicyService service(Mode::kReadOnly, "/fallback/root");
  EXPECT_EQ(service.Explain({std::nullopt, &*with_mode_}).Describe(),
            "mode workspace-write (from the session, set by delegation); workspace /src/app (the session's cwd)");
  EXPECT_EQ(service.Explain({}).Describe(), "mode read-only (the default); workspace /fallback/root (the fallback root)");
  EXPECT_THAT(service.Explain({Mode::kDangerFullAccess, nullptr}).Describe(), HasSubstr("(explicit override)"));
  EXPECT_EQ(ModeLayerName(ModeLayer::kOverride), "override");
  EXPECT_EQ(RootLayerName(RootLayer::kFallback), "fallback");
}

}  // namespace
}  // namespace corral
