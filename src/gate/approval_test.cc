#include "gate/approval.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <deque>

#include "testing/scripted_approver.h"

namespace corral {
namespace {

using ::corral::testing::ScriptedApprover;

using ::testing::HasSubstr;


const Action kRead = Action::Tool("read", {"src/main.cc"});
const Action kWrite = Action::Tool("write", {"src/main.cc"});
const Action kSafeBash = Action::Tool("bash", {"make", "test"});
const Action kDangerousBash = Action::Tool("bash", {"bash", "-c", "rm -rf build"});
const Action kPush = Action::Command({"git", "push"});
const Action kLs = Action::Command({"ls"});
const Action kMystery = Action::Tool("teleport");

TEST(ApprovalPolicyNames, RoundTripAndRefuseUnknown) {
  for (ApprovalPolicy policy : {ApprovalPolicy::kAllowAll, ApprovalPolicy::kDenyAll, ApprovalPolicy::kAskDangerous,
                                ApprovalPolicy::kAskDangerousToolEdit}) {
    EXPECT_EQ(ParseApprovalPolicy(ApprovalPolicyName(policy)), policy);
  }
  EXPECT_EQ(ApprovalPolicyName(ApprovalPolicy::kAskDangerousToolEdit), "ask-dangerous-tool-edit");
  EXPECT_FALSE(ParseApprovalPolicy("ask").has_value());
  EXPECT_FALSE(ParseApprovalPolicy("Allow-All").has_value());
}

TEST(ApprovalTools, ClassifiesTheSevenTools) {
  for (const char* tool : {"read", "ls", "grep", "find"}) EXPECT_EQ(ClassifyTool(tool), ToolClass::kReadOnly) << tool;
  for (const char* tool : {"write", "edit"}) EXPECT_EQ(ClassifyTool(tool), ToolClass::kEdit) << tool;
  EXPECT_EQ(ClassifyTool("bash"), ToolClass::kCommand);
  EXPECT_EQ(ClassifyTool("Bash"), ToolClass::kUnknown);
  EXPECT_EQ(ToolClassName(ToolClass::kEdit), "edit");
}

// The full decision table: policy x action class.
TEST(ApprovalDecide, Table) {
  struct Row {
    ApprovalPolicy policy;
    const Action* action;
    Decision want;
  };
  using P = ApprovalPolicy;
  using D = Decision;
  const Row rows[] = {
      {P::kAllowAll, &kRead, D::kAllow},          {P::kAllowAll, &kWrite, D::kAllow},
      {P::kAllowAll, &kDangerousBash, D::kAllow}, {P::kAllowAll, &kPush, D::kAllow},
      {P::kAllowAll, &kMystery, D::kAllow},

      {P::kDenyAll, &kRead, D::kDeny},            {P::kDenyAll, &kWrite, D::kDeny},
      {P::kDenyAll, &kSafeBash, D::kDeny},        {P::kDenyAll, &kLs, D::kDeny},

      {P::kAskDangerous, &kRead, D::kAllow},      {P::kAskDangerous, &kWrite, D::kAllow},
      {P::kAskDangerous, &kSafeBash, D::kAllow},  {P::kAskDangerous, &kLs, D::kAllow},
      {P::kAskDangerous, &kDangerousBash, D::kAsk}, {P::kAskDangerous, &kPush, D::kAsk},
      {P::kAskDangerous, &kMystery, D::kAsk},

      {P::kAskDangerousToolEdit, &kRead, D::kAllow},  {P::kAskDangerousToolEdit, &kWrite, D::kAsk},
      {P::kAskDangerousToolEdit, &kSafeBash, D::kAllow}, {P::kAskDangerousToolEdit, &kDangerousBash, D::kAsk},
      {P::kAskDangerousToolEdit, &kPush, D::kAsk},    {P::kAskDangerousToolEdit, &kMystery, D::kAsk},
  };
  for (const Row& row : rows) {
    Verdict verdict = Decide(row.policy, *row.action);
    EXPECT_EQ(verdict.decision, row.want) << ApprovalPolicyName(row.policy) << " / " << row.action->Summary();
    EXPECT_FALSE(verdict.rationale.empty());
  }
  EXPECT_EQ(Decide(ApprovalPolicy::kAskDangerousToolEdit, Action::Tool("edit")).decision, Decision::kAsk);
}

TEST(ApprovalDecide, ClassKeysNameTheToolOrTheDangerCategory) {
  EXPECT_EQ(Decide(ApprovalPolicy::kAskDangerous, kWrite).class_key, "tool:write");
  EXPECT_EQ(Decide(ApprovalPolicy::kAskDangerous, kPush).class_key, "command:git-push");
  EXPECT_EQ(Decide(ApprovalPolicy::kAskDangerous, kDangerousBash).class_key, "command:rm-recursive-or-force");
  EXPECT_THAT(Decide(ApprovalPolicy::kAskDangerous, kPush).rationale, HasSubstr("git push"));
}

TEST(ApprovalAction, SummaryQuotesArgumentsAndIsBounded) {
  EXPECT_EQ(kPush.Summary(), "command: git push");
  EXPECT_EQ(Action::Command({"git", "commit", "-m", "it's done"}).Summary(), "command: git commit -m 'it'\\''s done'");
  EXPECT_EQ(Action::Tool("write").Summary(), "write");
  EXPECT_EQ(Action::Command({"echo", std::string(2000, 'x')}).Summary().size(), 512u);
}

TEST(ApprovalGate, NullApproverDeniesWhatThePolicyAsks) {
  ApprovalGate gate(ApprovalPolicy::kAskDangerous, nullptr);
  ApprovalRecord record = gate.Check(kPush);
  EXPECT_FALSE(record.allowed);
  EXPECT_EQ(record.policy_decision, Decision::kAsk);
  EXPECT_EQ(record.basis, ApprovalBasis::kNoApprover);
  // What the policy allows still runs without an approver.
  EXPECT_TRUE(gate.Check(kLs).allowed);
}

TEST(ApprovalGate, ApproverErrorMeansDeny) {
  ScriptedApprover approver({Error(ErrorKind::kDenied, "no terminal").WithCode("approval_no_tty")});
  ApprovalGate gate(ApprovalPolicy::kAskDangerous, &approver);
  ApprovalRecord record = gate.Check(kPush);
  EXPECT_FALSE(record.allowed);
  EXPECT_EQ(record.basis, ApprovalBasis::kApproverFailed);
  EXPECT_THAT(record.rationale, HasSubstr("no terminal"));
}

TEST(ApprovalGate, PolicyDenyAndAllowNeverReachTheApprover) {
  ScriptedApprover approver({ApprovalAnswer::kAllowForRun});
  ApprovalGate deny_all(ApprovalPolicy::kDenyAll, &approver);
  EXPECT_FALSE(deny_all.Check(kPush).allowed);
  EXPECT_FALSE(deny_all.Check(kRead).allowed);
  ApprovalGate allow_all(ApprovalPolicy::kAllowAll, &approver);
  EXPECT_TRUE(allow_all.Check(kPush).allowed);
  EXPECT_TRUE(approver.asked.empty());
}

TEST(ApprovalGate, AllowOnceCoversOneCallOnly) {
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce, ApprovalAnswer::kDeny});
  ApprovalGate gate(ApprovalPolicy::kAskDangerous, &approver);
  ApprovalRecord first = gate.Check(kPush);
  EXPECT_TRUE(first.allowed);
  EXPECT_EQ(first.basis, ApprovalBasis::kAnsweredOnce);
  ApprovalRecord second = gate.Check(kPush);
  EXPECT_FALSE(second.allowed);
  EXPECT_EQ(second.basis, ApprovalBasis::kAnsweredDeny);
  ASSERT_EQ(approver.asked.size(), 2u);
  EXPECT_EQ(approver.asked[0].summary, "command: git push");
  EXPECT_EQ(approver.asked[0].class_key, "command:git-push");
}

TEST(ApprovalGate, AllowForRunIsRememberedPerClassOnly) {
  ScriptedApprover approver({ApprovalAnswer::kAllowForRun, ApprovalAnswer::kDeny});
  ApprovalGate gate(ApprovalPolicy::kAskDangerousToolEdit, &approver);
  EXPECT_EQ(gate.Check(kPush).basis, ApprovalBasis::kAnsweredForRun);
  ApprovalRecord again = gate.Check(Action::Command({"git", "push", "--tags"}));
  EXPECT_TRUE(again.allowed);
  EXPECT_EQ(again.basis, ApprovalBasis::kRemembered);
  // Another class is asked about afresh.
  ApprovalRecord other = gate.Check(kDangerousBash);
  EXPECT_FALSE(other.allowed);
  EXPECT_EQ(approver.asked.size(), 2u);
}

TEST(ApprovalGate, AllowForRunIsNeverPersistedAcrossGates) {
  ScriptedApprover approver({ApprovalAnswer::kAllowForRun, ApprovalAnswer::kDeny});
  {
    ApprovalGate run_one(ApprovalPolicy::kAskDangerousToolEdit, &approver);
    EXPECT_TRUE(run_one.Check(kWrite).allowed);
    EXPECT_TRUE(run_one.Check(kWrite).allowed);
  }
  ApprovalGate run_two(ApprovalPolicy::kAskDangerousToolEdit, &approver);
  ApprovalRecord record = run_two.Check(kWrite);
  EXPECT_FALSE(record.allowed);
  EXPECT_EQ(record.basis, ApprovalBasis::kAnsweredDeny);
  EXPECT_EQ(approver.asked.size(), 2u);
}

TEST(ApprovalGate, RecordIsAnAuditEvent) {
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce});
  ApprovalGate gate(ApprovalPolicy::kAskDangerous, &approver);
  nlohmann::json json = gate.Check(kPush).ToAuditEvent().json();
  EXPECT_EQ(json["event"], "approval");
  EXPECT_EQ(json["action"], "command: git push");
  EXPECT_EQ(json["class"], "command:git-push");
  EXPECT_EQ(json["policy"], "ask-dangerous");
  EXPECT_EQ(json["decision"], "ask");
  EXPECT_EQ(json["outcome"], "allowed");
  EXPECT_EQ(json["basis"], "answered-once");
  EXPECT_FALSE(json["rationale"].get<std::string>().empty());
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

const Action kSessionPush = Action::Command({"git", "push"});

TEST(ApprovalGate, AClassTheSessionAllowedIsNotAskedAboutButPolicyDenyStaysFinal) {
  ::corral::testing::ScriptedApprover approver;
  ApprovalContext context{"ask-dangerous", "workspace-write", "/w", "/w", "s1"};
  ApprovalGate gate(ApprovalPolicy::kAskDangerous, &approver, context, {"command:git-push"});
  ApprovalRecord record = gate.Check(kSessionPush);
  EXPECT_TRUE(record.allowed);
  EXPECT_EQ(record.basis, ApprovalBasis::kRememberedForSession);
  EXPECT_TRUE(approver.asked.empty());
  ApprovalGate deny_all(ApprovalPolicy::kDenyAll, &approver, context, {"command:git-push"});
  EXPECT_FALSE(deny_all.Check(kSessionPush).allowed);
}

TEST(ApprovalGate, AllowForSessionIsOfferedOnlyInASessionAndRefusedElsewhere) {
  ::corral::testing::ScriptedApprover approver({ApprovalAnswer::kAllowForSession, ApprovalAnswer::kAllowForSession});
  ApprovalGate in_session(ApprovalPolicy::kAskDangerous, &approver,
                          ApprovalContext{"ask-dangerous", "read-only", "/w", "/w", "s1"});
  ApprovalRecord record = in_session.Check(kSessionPush);
  EXPECT_TRUE(record.allowed);
  EXPECT_EQ(record.basis, ApprovalBasis::kAnsweredForSession);
  ASSERT_EQ(approver.asked.size(), 1u);
  EXPECT_EQ(approver.asked[0].session_answer, SessionAnswer::kOffered);
  EXPECT_EQ(approver.asked[0].argv, (std::vector<std::string>{"git", "push"}));
  EXPECT_EQ(approver.asked[0].context.mode, "read-only");
  ApprovalGate no_session(ApprovalPolicy::kAskDangerous, &approver);
  ApprovalRecord refused = no_session.Check(kSessionPush);
  EXPECT_FALSE(refused.allowed);
  EXPECT_EQ(refused.basis, ApprovalBasis::kApproverFailed);
  ASSERT_TRUE(refused.approver_error.has_value());
  EXPECT_EQ(refused.approver_error->code(), "approval_answer_not_offered");
}

}  // namespace
}  // namespace corral
