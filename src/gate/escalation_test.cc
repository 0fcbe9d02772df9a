#include "gate/escalation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>

#include "resolve/resolution.h"
#include "state/session_log.h"
#include "testing/gate_test_support.h"

namespace corral {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// A fake for either approver interface: one canned answer, every question
// recorded.
template <typename Interface, typename Question, typename Answer>
class Canned : public Interface {
 public:
  explicit Canned(Result<Answer> answer) : answer_(std::move(answer)) {}
  Result<Answer> Request(const Question& question) override {
    asked.push_back(question);
    return answer_;
  }
  std::vector<Question> asked;

 private:
  Result<Answer> answer_;
};
using FakeEscalationApprover = Canned<EscalationApprover, EscalationQuestion, EscalationAnswer>;
using OneAnswer = Canned<Approver, ApprovalRequest, ApprovalAnswer>;

EscalationRequest Ask(Mode current, std::optional<std::string> target, std::optional<std::string> why) {
  return EscalationRequest{current, std::move(target), std::move(why), "write build/out", std::nullopt};
}

TEST(Escalation, NeitherArgumentMeansNoEscalation) {
  FakeEscalationApprover approver(EscalationAnswer::kApprove);
  Result<EscalationGrant> grant = ApproveEscalation(Ask(Mode::kReadOnly, std::nullopt, std::nullopt), &approver);
  ASSERT_TRUE(grant.ok());
  EXPECT_EQ(grant->outcome, EscalationOutcome::kNotRequested);
  EXPECT_EQ(grant->mode, Mode::kReadOnly);
  EXPECT_TRUE(approver.asked.empty());
}

TEST(Escalation, ArgumentsComeTogetherOrNotAtAll) {
  struct Row {
    std::optional<std::string> target;
    std::optional<std::string> why;
  };
  const Row rows[] = {
      {"workspace-write", std::nullopt}, {std::nullopt, "I need to write"}, {"workspace-write", ""},
      {"workspace-write", " \t\n"},      {"", "I need to write"},           {"  ", "I need to write"},
      // Malformed beats not-wider: the pairing is checked first.
      {"read-only", std::nullopt},
  };
  for (const Row& row : rows) {
    FakeEscalationApprover approver(EscalationAnswer::kApprove);
    Result<EscalationGrant> grant = ApproveEscalation(Ask(Mode::kReadOnly, row.target, row.why), &approver);
    ASSERT_FALSE(grant.ok()) << row.target.value_or("<none>") << " / " << row.why.value_or("<none>");
    EXPECT_EQ(grant.error().kind(), ErrorKind::kUsage);
    EXPECT_EQ(grant.error().code(), "escalation_invalid_args");
    EXPECT_TRUE(approver.asked.empty());
  }
}

TEST(Escalation, NotStrictlyWiderIsRefusedBeforeAnyoneIsAsked) {
  struct Row {
    Mode current;
    const char* target;
  };
  const Row rows[] = {
      {Mode::kReadOnly, "read-only"},          // read-only is never a target
      {Mode::kWorkspaceWrite, "workspace-write"},
      {Mode::kWorkspaceWrite, "read-only"},
      {Mode::kDangerFullAccess, "danger-full-access"},
      {Mode::kDangerFullAccess, "workspace-write"},
      {Mode::kReadOnly, "root"},               // outside the closed vocabulary
      {Mode::kReadOnly, "Workspace-Write"},
      {Mode::kReadOnly, " workspace-write"},
  };
  for (const Row& row : rows) {
    FakeEscalationApprover approver(EscalationAnswer::kApprove);
    Result<EscalationGrant> grant = ApproveEscalation(Ask(row.current, row.target, "because"), &approver);
    ASSERT_FALSE(grant.ok()) << row.target;
    EXPECT_EQ(grant.error().kind(), ErrorKind::kDenied);
    EXPECT_EQ(grant.error().code(), "escalation_not_wider") << row.target;
    // Nothing was denied a file access: the request itself is wrong.
    EXPECT_THAT(grant.error().message(), StartsWith("escalation refused: "));
    EXPECT_THAT(grant.error().message(), Not(HasSubstr("file access denied")));
    EXPECT_TRUE(approver.asked.empty()) << row.target;
  }
  // Checked before the approver's presence, too.
  EXPECT_EQ(ApproveEscalation(Ask(Mode::kWorkspaceWrite, "read-only", "x"), nullptr).error().code(),
            "escalation_not_wider");
}

TEST(Escalation, BeyondTheCeilingIsRefusedBeforeAnyoneIsAsked) {
  FakeEscalationApprover approver(EscalationAnswer::kApprove);
  EscalationRequest request = Ask(Mode::kReadOnly, "danger-full-access", "needs everything");
  request.ceiling = Mode::kWorkspaceWrite;
  Result<EscalationGrant> grant = ApproveEscalation(request, &approver);
  ASSERT_FALSE(grant.ok());
  EXPECT_EQ(grant.error().code(), "escalation_beyond_ceiling");
  EXPECT_THAT(grant.error().message(), HasSubstr("at most workspace-write"));
  EXPECT_TRUE(approver.asked.empty());

  // Within the ceiling, the approver decides as usual.
  request.sandbox_permissions = "workspace-write";
  Result<EscalationGrant> within = ApproveEscalation(request, &approver);
  ASSERT_TRUE(within.ok()) << within.error().ToString();
  EXPECT_EQ(within->mode, Mode::kWorkspaceWrite);
  EXPECT_EQ(approver.asked.size(), 1u);
}

TEST(Escalation, NoApproverMeansUnavailable) {
  Result<EscalationGrant> grant = ApproveEscalation(Ask(Mode::kReadOnly, "workspace-write", "write output"), nullptr);
  ASSERT_FALSE(grant.ok());
  EXPECT_EQ(grant.error().kind(), ErrorKind::kDenied);
  EXPECT_EQ(grant.error().code(), "escalation_unavailable");
  EXPECT_EQ(EscalationOutcomeOf(grant.error()), EscalationOutcome::kUnavailable);
}

TEST(Escalation, EachApproverOutcome) {
  struct Row {
    Result<EscalationAnswer> answer;
    const char* code;  // nullptr: allowed once
    EscalationOutcome outcome;
  };
  const Row rows[] = {
      {EscalationAnswer::kApprove, nullptr, EscalationOutcome::kAllowedOnce},
      {EscalationAnswer::kReject, "escalation_rejected", EscalationOutcome::kRejected},
      {EscalationAnswer::kCancel, "escalation_cancelled", EscalationOutcome::kCancelled},
      {Error(ErrorKind::kDenied, "terminal gone"), "escalation_unavailable", EscalationOutcome::kUnavailable},
  };
  for (const Row& row : rows) {
    FakeEscalationApprover approver(row.answer);
    Result<EscalationGrant> grant = ApproveEscalation(Ask(Mode::kReadOnly, "workspace-write", "write output"), &approver);
    ASSERT_EQ(approver.asked.size(), 1u);
    EXPECT_EQ(approver.asked[0].target, Mode::kWorkspaceWrite);
    EXPECT_EQ(approver.asked[0].justification, "write output");
    if (row.code == nullptr) {
      ASSERT_TRUE(grant.ok());
      EXPECT_EQ(grant->outcome, EscalationOutcome::kAllowedOnce);
      EXPECT_EQ(grant->mode, Mode::kWorkspaceWrite);
      continue;
    }
    ASSERT_FALSE(grant.ok()) << row.code;
    EXPECT_EQ(grant.error().kind(), ErrorKind::kDenied);
    EXPECT_EQ(grant.error().code(), row.code);
    EXPECT_EQ(EscalationOutcomeOf(grant.error()), row.outcome);
    EXPECT_THAT(grant.error().message(), StartsWith("[sandbox: file access denied under read-only mode]"));
  }
}

TEST(Escalation, ReadOnlyMayJumpStraightToDanger) {
  FakeEscalationApprover approver(EscalationAnswer::kApprove);
  Result<EscalationGrant> grant = ApproveEscalation(Ask(Mode::kReadOnly, "danger-full-access", "needs docker"), &approver);
  ASSERT_TRUE(grant.ok());
  EXPECT_EQ(grant->mode, Mode::kDangerFullAccess);
}

TEST(Escalation, AllowedOnceNeverChangesTheSessionMode) {
  testing::ScratchDir scratch;
  ASSERT_TRUE(scratch.ok());
  Result<SessionStore> store = SessionStore::Open(scratch.Join("sessions"));
  ASSERT_TRUE(store.ok());
  Result<Session> session = store->Create("s", "/src/app");
  ASSERT_TRUE(session.ok());
  ASSERT_TRUE(session->RecordMode(Mode::kReadOnly, ModeSource::kUser).ok());
  PolicyService service(Mode::kReadOnly, std::nullopt);

  FakeEscalationApprover approver(EscalationAnswer::kApprove);
  Result<EscalationGrant> grant = ApproveEscalation(Ask(Mode::kReadOnly, "workspace-write", "write output"), &approver);
  ASSERT_TRUE(grant.ok());
  // The approved call runs with the target as its override...
  EXPECT_EQ(service.Resolve({grant->mode, &*session}).mode, Mode::kWorkspaceWrite);
  // ...and the next call is back under the session's mode, on disk too.
  EXPECT_EQ(service.Resolve({std::nullopt, &*session}).mode, Mode::kReadOnly);
  EXPECT_EQ(session->events().size(), 2u);
  EXPECT_EQ(store->Load("s")->mode(), Mode::kReadOnly);
}

TEST(Escalation, ThroughTheApprovalChannel) {
  struct Row {
    Result<ApprovalAnswer> answer;
    const char* code;
  };
  const Row rows[] = {
      {ApprovalAnswer::kAllowOnce, nullptr},
      {ApprovalAnswer::kAllowForRun, nullptr},  // still once: escalations are never remembered
      {ApprovalAnswer::kDeny, "escalation_rejected"},
      {Error(ErrorKind::kDenied, "no tty").WithCode("approval_no_tty"), "escalation_unavailable"},
  };
  for (const Row& row : rows) {
    OneAnswer approver(row.answer);
    ApproverEscalationChannel channel(approver);
    for (int call = 0; call < 2; ++call) {
      Result<EscalationGrant> grant =
          ApproveEscalation(Ask(Mode::kWorkspaceWrite, "danger-full-access", "run the installer"), &channel);
      if (row.code == nullptr) {
        ASSERT_TRUE(grant.ok());
        EXPECT_EQ(grant->outcome, EscalationOutcome::kAllowedOnce);
      } else {
        ASSERT_FALSE(grant.ok());
        EXPECT_EQ(grant.error().code(), row.code);
      }
    }
    ASSERT_EQ(approver.asked.size(), 2u);  // every escalation is asked about
    EXPECT_THAT(approver.asked[0].summary, HasSubstr("from workspace-write to danger-full-access for this one call"));
    EXPECT_THAT(approver.asked[0].summary, HasSubstr("write build/out"));
    EXPECT_THAT(approver.asked[0].rationale, HasSubstr("run the installer"));
  }
}

TEST(Escalation, DenialMarkerIsExact) {
  EXPECT_EQ(DenialMarker(Mode::kReadOnly), "[sandbox: file access denied under read-only mode]");
  EXPECT_EQ(DenialMarker(Mode::kWorkspaceWrite), "[sandbox: file access denied under workspace-write mode]");
  EXPECT_EQ(DenialMarker(Mode::kDangerFullAccess), "[sandbox: file access denied under danger-full-access mode]");
}

TEST(Escalation, HintNamesTheWiderModes) {
  std::string read_only = EscalationHint(Mode::kReadOnly);
  EXPECT_THAT(read_only, HasSubstr("sandbox_permissions"));
  EXPECT_THAT(read_only, HasSubstr("justification"));
  EXPECT_THAT(read_only, HasSubstr("workspace-write or danger-full-access"));
  std::string workspace = EscalationHint(Mode::kWorkspaceWrite);
  EXPECT_THAT(workspace, HasSubstr("set to danger-full-access together"));
  EXPECT_THAT(workspace, ::testing::Not(HasSubstr("workspace-write or")));
  EXPECT_THAT(EscalationHint(Mode::kDangerFullAccess), HasSubstr("cannot be escalated"));
  EXPECT_EQ(WiderModes(Mode::kReadOnly), (std::vector<Mode>{Mode::kWorkspaceWrite, Mode::kDangerFullAccess}));
  EXPECT_TRUE(WiderModes(Mode::kDangerFullAccess).empty());
}

TEST(Escalation, OutcomeNames) {
  EXPECT_EQ(EscalationOutcomeName(EscalationOutcome::kAllowedOnce), "allowed-once");
  EXPECT_EQ(EscalationOutcomeName(EscalationOutcome::kRejected), "rejected");
  EXPECT_EQ(EscalationOutcomeName(EscalationOutcome::kCancelled), "cancelled");
  EXPECT_EQ(EscalationOutcomeName(EscalationOutcome::kUnavailable), "unavailable");
  EXPECT_FALSE(EscalationOutcomeOf(Error(ErrorKind::kDenied, "x").WithCode("escalation_not_wider")).has_value());
}

}  // namespace
}  // namespace corral
