#include "gate/admit.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <deque>
#include <sstream>
#include <type_traits>

#include "testing/test_scratch_dir.h"
#include "testing/scripted_approver.h"
#include "gate/tty_approver.h"
#include "policy/policy_file.h"

namespace corral::gate {
namespace {

using ::corral::testing::ScriptedApprover;

using ::testing::HasSubstr;
using ::testing::Not;

// Only Admit makes one, and one admission is one run.
static_assert(!std::is_default_constructible_v<AdmittedRun>);
static_assert(!std::is_constructible_v<AdmittedRun, Policy, std::vector<std::string>>);
static_assert(!std::is_copy_constructible_v<AdmittedRun>);
static_assert(!std::is_copy_assignable_v<AdmittedRun>);
static_assert(std::is_move_constructible_v<AdmittedRun>);


// What a terminal approver answers when there is no terminal.
Error NoTerminal() { return Error(ErrorKind::kDenied, "no terminal").WithCode("approval_no_tty"); }

const std::vector<std::string> kSafe = {"ls", "-l"};
const std::vector<std::string> kDangerous = {"rm", "-rf", "build"};

class AdmitTest : public ::testing::Test {
 protected:
  AdmitTest() {
    workspace_ = tree_.Dir("ws");
    host_ = HostContext{workspace_, tree_.Dir("home"), ::getuid(), ::getgid(), {}, {}, {}};
  }

  // A request for `argv` under `approval`, in the workspace, recorded on trail_.
  AdmitRequest Request(std::vector<std::string> argv, ApprovalPolicy approval,
                       Mode mode = Mode::kWorkspaceWrite) const {
    ResolvedRequest resolved;
    resolved.spec.mode = mode;
    resolved.approval = approval;
    AdmitRequest request;
    request.argv = std::move(argv);
    request.policy = std::move(resolved);
    request.host = host_;
    request.trail = &*trail_;
    return request;
  }
  ResolvedRequest& Resolved(AdmitRequest& request) const { return std::get<ResolvedRequest>(request.policy); }

  // The records written so far.
  std::vector<nlohmann::json> Records() const {
    std::vector<nlohmann::json> records;
    std::istringstream lines(corral::testing::TestTree::Read(trail_path_));
    for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
    return records;
  }
  std::vector<std::string> Events() const {
    std::vector<std::string> events;
    for (const nlohmann::json& record : Records()) events.push_back(record.value("event", ""));
    return events;
  }
  static Error Refusal(const Result<AdmittedRun>& admitted) {
    EXPECT_FALSE(admitted.ok()) << "admitted";
    return admitted.ok() ? Error(ErrorKind::kInternal, "admitted") : admitted.error();
  }

  corral::testing::TestTree tree_;
  std::string workspace_;
  HostContext host_;
  std::string trail_path_ = tree_.File("out/trail.jsonl");
  Result<AuditTrail> trail_ = AuditTrail::ToFile(trail_path_);
};

TEST_F(AdmitTest, AllowAllAdmitsTheCommandAsItWasAskedForAndAsksNoOne) {
  ASSERT_TRUE(trail_.ok()) << trail_.error().ToString();
  ScriptedApprover approver;
  Result<AdmittedRun> admitted = Admit(Request(kDangerous, ApprovalPolicy::kAllowAll), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  EXPECT_EQ(admitted->argv(), kDangerous);
  EXPECT_EQ(admitted->policy().host().cwd, workspace_);
  EXPECT_EQ(admitted->policy().mode(), Mode::kWorkspaceWrite);
  EXPECT_TRUE(approver.asked.empty());
  EXPECT_TRUE(Records().empty()) << "allow-all records no approval";
}

TEST_F(AdmitTest, AskDangerousAsksTheApproverAndAYesAdmits) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce});
  Result<AdmittedRun> admitted = Admit(Request(kDangerous, ApprovalPolicy::kAskDangerous), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  ASSERT_EQ(approver.asked.size(), 1u);
  EXPECT_THAT(approver.asked[0].summary, HasSubstr("rm -rf build"));
  ASSERT_EQ(Events(), std::vector<std::string>{"approval"});
  EXPECT_EQ(Records()[0]["outcome"], "allowed");
}

TEST_F(AdmitTest, ASafeCommandUnderAskDangerousIsNotAskedAbout) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver;
  Result<AdmittedRun> admitted = Admit(Request(kSafe, ApprovalPolicy::kAskDangerous), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  EXPECT_TRUE(approver.asked.empty());
}

TEST_F(AdmitTest, DenyIsFinalAndRecordedOnceAsFailedWithItsCode) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce});
  Error error = Refusal(Admit(Request(kSafe, ApprovalPolicy::kDenyAll), approver));
  EXPECT_EQ(error.kind(), ErrorKind::kDenied);
  EXPECT_EQ(error.code(), "approval_denied");
  EXPECT_THAT(error.message(), HasSubstr("nothing was run"));
  EXPECT_TRUE(approver.asked.empty()) << "a deny policy asks no one";
  ASSERT_EQ(Events(), (std::vector<std::string>{"approval", "failed"}));
  nlohmann::json failed = Records()[1];
  EXPECT_EQ(failed["source"], "corral");
  EXPECT_EQ(failed["reason"], "denied");
  EXPECT_EQ(failed["code"], "approval_denied");
}

TEST_F(AdmitTest, AnAnswerNoRefuses) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kDeny});
  Error error = Refusal(Admit(Request(kDangerous, ApprovalPolicy::kAskDangerous), approver));
  EXPECT_EQ(error.code(), "approval_denied");
  EXPECT_EQ(Records().at(0)["basis"], "answered-deny");
}

// No terminal: the question cannot be answered, and that is a refusal.
TEST_F(AdmitTest, AskWithNoTerminalRefuses) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({NoTerminal()});
  Error error = Refusal(Admit(Request(kDangerous, ApprovalPolicy::kAskDangerous), approver));
  EXPECT_EQ(error.code(), "approval_denied");
  EXPECT_EQ(Records().at(0)["basis"], "approver-failed");
  EXPECT_EQ(Records().at(1)["event"], "failed");
}

TEST_F(AdmitTest, TheTerminalApproverWithNoTerminalRefuses) {
  ASSERT_TRUE(trail_.ok());
  TtyApprover tty(tree_.File("not-a-terminal"));
  Error error = Refusal(Admit(Request(kDangerous, ApprovalPolicy::kAskDangerous), tty));
  EXPECT_EQ(error.code(), "approval_denied");
}

TEST_F(AdmitTest, AWrappedArgvIsRefusedWithoutSayingNothingRan) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kDeny});
  AdmitRequest request = Request(kDangerous, ApprovalPolicy::kAskDangerous);
  request.destination = Destination::kWrapped;
  Error error = Refusal(Admit(std::move(request), approver));
  EXPECT_EQ(error.code(), "approval_denied");
  EXPECT_THAT(error.message(), Not(HasSubstr("nothing was run")));
}

TEST_F(AdmitTest, AnApprovedEscalationWidensThisCallOnly) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce});
  AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll, Mode::kReadOnly);
  request.sandbox_permissions = "workspace-write";
  request.justification = "writes the build output";
  Result<AdmittedRun> admitted = Admit(std::move(request), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  EXPECT_EQ(admitted->policy().mode(), Mode::kWorkspaceWrite);
  ASSERT_EQ(approver.asked.size(), 1u);
  EXPECT_THAT(approver.asked[0].rationale, HasSubstr("writes the build output"));
  ASSERT_EQ(Events(), std::vector<std::string>{"escalation"});
  EXPECT_EQ(Records()[0]["from"], "read-only");
  EXPECT_EQ(Records()[0]["to"], "workspace-write");
  EXPECT_EQ(Records()[0]["outcome"], "allowed-once");
}

TEST_F(AdmitTest, ARejectedEscalationRunsNothing) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kDeny});
  AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll, Mode::kReadOnly);
  request.sandbox_permissions = "workspace-write";
  request.justification = "writes the build output";
  Error error = Refusal(Admit(std::move(request), approver));
  EXPECT_EQ(error.code(), "escalation_rejected");
  ASSERT_EQ(Events(), (std::vector<std::string>{"escalation", "failed"}));
  EXPECT_EQ(Records()[0]["outcome"], "rejected");
  EXPECT_EQ(Records()[1]["code"], "escalation_rejected");
}

TEST_F(AdmitTest, AnEscalationWithNoTerminalIsUnavailable) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({NoTerminal()});
  AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll, Mode::kReadOnly);
  request.sandbox_permissions = "workspace-write";
  request.justification = "writes the build output";
  Error error = Refusal(Admit(std::move(request), approver));
  EXPECT_EQ(error.code(), "escalation_unavailable");
  EXPECT_EQ(Records().at(0)["outcome"], "unavailable");
}

TEST_F(AdmitTest, AnEscalationWithoutAJustificationAsksNoOne) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce});
  AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll, Mode::kReadOnly);
  request.sandbox_permissions = "workspace-write";
  Error error = Refusal(Admit(std::move(request), approver));
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.code(), "escalation_invalid_args");
  EXPECT_TRUE(approver.asked.empty());
  EXPECT_EQ(Records().at(0)["outcome"], "invalid");
}

TEST_F(AdmitTest, AGatedDimensionIsGrantedForThisCommandAtThePrompt) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce});
  AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll);
  Resolved(request).gated = {Dimension::kNetwork};
  Result<AdmittedRun> admitted = Admit(std::move(request), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  EXPECT_EQ(admitted->argv(), kSafe);
  ASSERT_EQ(approver.asked.size(), 1u);
  EXPECT_EQ(approver.asked[0].summary, "grant network to: command: ls -l");
  EXPECT_EQ(approver.asked[0].class_key, "grant:network");
  ASSERT_EQ(Events(), std::vector<std::string>{"grant"});
  EXPECT_EQ(Records()[0]["dimension"], "network");
  EXPECT_EQ(Records()[0]["outcome"], "issued");
}

TEST_F(AdmitTest, AGatedDimensionRefusedOrUnansweredRunsNothing) {
  const Result<ApprovalAnswer> answers[] = {ApprovalAnswer::kDeny, NoTerminal()};
  for (const Result<ApprovalAnswer>& answer : answers) {
    ScriptedApprover approver({answer});
    AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll);
    Resolved(request).gated = {Dimension::kNetwork};
    Error error = Refusal(Admit(std::move(request), approver));
    EXPECT_EQ(error.kind(), ErrorKind::kDenied);
    EXPECT_EQ(error.code(), "grant_refused");
  }
  std::vector<nlohmann::json> records = Records();
  ASSERT_EQ(Events(), (std::vector<std::string>{"grant", "failed", "grant", "failed"}));
  EXPECT_EQ(records[0]["outcome"], "refused");
  EXPECT_EQ(records[1]["code"], "grant_refused");
}

TEST_F(AdmitTest, AWrappedArgvCannotCarryAGrantAndNoOneIsAsked) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver({ApprovalAnswer::kAllowOnce, ApprovalAnswer::kAllowOnce});
  AdmitRequest request = Request(kDangerous, ApprovalPolicy::kAskDangerous);
  Resolved(request).gated = {Dimension::kCommand};
  request.destination = Destination::kWrapped;
  Error error = Refusal(Admit(std::move(request), approver));
  EXPECT_EQ(error.code(), "gated_not_wrappable");
  EXPECT_TRUE(approver.asked.empty());
  EXPECT_EQ(Events(), std::vector<std::string>{"failed"});
}

TEST_F(AdmitTest, AnAcknowledgedUnconfinedRunIsRecordedWithWhoChoseIt) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver;
  AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll, Mode::kDangerFullAccess);
  Resolved(request).spec.acknowledge_danger = true;
  Resolved(request).danger_acknowledged_by = "flag";
  Result<AdmittedRun> admitted = Admit(std::move(request), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  EXPECT_TRUE(admitted->policy().unconfined());
  ASSERT_EQ(Events(), std::vector<std::string>{"acknowledged"});
  EXPECT_EQ(Records()[0]["by"], "flag");
  EXPECT_EQ(Records()[0]["mode"], "danger-full-access");
}

TEST_F(AdmitTest, APolicyThatCannotBeBuiltIsRecordedAsFailed) {
  ASSERT_TRUE(trail_.ok());
  ScriptedApprover approver;
  // danger-full-access without its acknowledgement.
  Error error = Refusal(Admit(Request(kSafe, ApprovalPolicy::kAllowAll, Mode::kDangerFullAccess), approver));
  EXPECT_EQ(Events(), std::vector<std::string>{"failed"});
  EXPECT_EQ(Records()[0]["detail"], error.ToString());
}

// A trail the command could rewrite is refused, and never written to.
TEST_F(AdmitTest, ATrailInsideAWritableGrantIsRefusedAndNotWrittenTo) {
  std::string inside = workspace_ + "/audit.jsonl";
  Result<AuditTrail> trail = AuditTrail::ToFile(inside);
  ASSERT_TRUE(trail.ok()) << trail.error().ToString();
  ScriptedApprover approver;
  AdmitRequest request = Request(kSafe, ApprovalPolicy::kAllowAll);
  request.trail = &*trail;
  Error error = Refusal(Admit(std::move(request), approver));
  EXPECT_EQ(error.kind(), ErrorKind::kUsage);
  EXPECT_EQ(error.code(), "audit_file_refused");
  EXPECT_EQ(corral::testing::TestTree::Read(inside), "");
}

// A policy file passed the gate when `corral wrap` wrote it: nobody is
// asked again, and only the trail is judged.
TEST_F(AdmitTest, APolicyFileIsAdmittedAsItIsWithoutAQuestion) {
  ASSERT_TRUE(trail_.ok());
  Result<Policy> policy = BuildPolicy(host_, PolicySpec{});
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::string fingerprint = policy->fingerprint();
  Result<PolicyFile> compiled =
      PolicyFile::Load(SerializePolicyFile(*policy, kDangerous), kDangerous, policy->host());
  ASSERT_TRUE(compiled.ok()) << compiled.error().ToString();
  ScriptedApprover approver;
  AdmitRequest request;
  request.argv = kDangerous;
  request.policy = *compiled;
  request.trail = &*trail_;
  Result<AdmittedRun> admitted = Admit(std::move(request), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  EXPECT_EQ(admitted->policy().fingerprint(), fingerprint);
  EXPECT_EQ(admitted->argv(), kDangerous);
  EXPECT_TRUE(approver.asked.empty());

  Result<AuditTrail> inside = AuditTrail::ToFile(workspace_ + "/audit.jsonl");
  ASSERT_TRUE(inside.ok()) << inside.error().ToString();
  request = AdmitRequest{};
  request.argv = kDangerous;
  request.policy = *compiled;
  request.trail = &*inside;
  EXPECT_EQ(Refusal(Admit(std::move(request), approver)).code(), "audit_file_refused");

  // The file was compiled for one command; it admits no other.
  request = AdmitRequest{};
  request.argv = kSafe;
  request.policy = *compiled;
  request.trail = &*trail_;
  EXPECT_EQ(Refusal(Admit(std::move(request), approver)).code(), "policy_file_other_command");
  EXPECT_TRUE(approver.asked.empty());
}

// Only a policy file's text makes a PolicyFile, through the loader's
// checks: an edited file that asks for danger-full-access is no way around
// the gate for a library caller either.
TEST_F(AdmitTest, APolicyFileIsOnlyWhatItsLoaderAccepts) {
  static_assert(!std::is_constructible_v<PolicyFile, Policy>);
  Result<Policy> policy = BuildPolicy(host_, PolicySpec{});
  ASSERT_TRUE(policy.ok()) << policy.error().ToString();
  std::string text = SerializePolicyFile(*policy, kSafe);
  std::string::size_type mode = text.find("workspace-write");
  ASSERT_NE(mode, std::string::npos) << text;
  text.replace(mode, std::string("workspace-write").size(), "danger-full-access");
  EXPECT_FALSE(PolicyFile::Load(text, kSafe, policy->host()).ok());
  EXPECT_FALSE(PolicyFile::Load("{", kSafe, policy->host()).ok());
}

}  // namespace
}  // namespace corral::gate

namespace corral::gate {
namespace {

// allow-for-session is written to the session's log by the gate, and a
// later admission of the same session, from the log read back, asks no one.
TEST_F(AdmitTest, AllowForSessionIsRecordedAndALaterAdmissionOfTheSessionAsksNoOne) {
  ASSERT_TRUE(trail_.ok());
  Result<SessionStore> store = SessionStore::Open(tree_.Dir("sessions"));
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  ASSERT_TRUE(store->Create("s1", workspace_).ok());
  AdmitRequest first = Request(kDangerous, ApprovalPolicy::kAskDangerous);
  Resolved(first).session = store->Load("s1").value();
  ScriptedApprover approver({ApprovalAnswer::kAllowForSession});
  Result<AdmittedRun> admitted = Admit(std::move(first), approver);
  ASSERT_TRUE(admitted.ok()) << admitted.error().ToString();
  ASSERT_EQ(approver.asked.size(), 1u);
  EXPECT_EQ(approver.asked[0].session_answer, SessionAnswer::kOffered);
  EXPECT_EQ(approver.asked[0].context.session, "s1");
  EXPECT_EQ(approver.asked[0].context.workspace, workspace_);

  AdmitRequest second = Request(kDangerous, ApprovalPolicy::kAskDangerous);
  Resolved(second).session = store->Load("s1").value();
  ScriptedApprover nobody;
  Result<AdmittedRun> again = Admit(std::move(second), nobody);
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_TRUE(nobody.asked.empty());
  EXPECT_EQ(Records().back()["basis"], "remembered-for-session");

  // Without the session, the same command is asked about again.
  ScriptedApprover asked({ApprovalAnswer::kDeny});
  EXPECT_FALSE(Admit(Request(kDangerous, ApprovalPolicy::kAskDangerous), asked).ok());
  EXPECT_EQ(asked.asked.size(), 1u);
}

// The answer covers what was asked: the class in that workspace, in that
// mode or a narrower one. A wider mode or another workspace asks again.
TEST_F(AdmitTest, AllowForSessionDoesNotCoverAWiderModeOrAnotherWorkspace) {
  ASSERT_TRUE(trail_.ok());
  Result<SessionStore> store = SessionStore::Open(tree_.Dir("sessions"));
  ASSERT_TRUE(store.ok()) << store.error().ToString();
  ASSERT_TRUE(store->Create("s2", workspace_).ok());
  AdmitRequest first = Request(kDangerous, ApprovalPolicy::kAskDangerous, Mode::kReadOnly);
  Resolved(first).session = store->Load("s2").value();
  ScriptedApprover approver({ApprovalAnswer::kAllowForSession});
  ASSERT_TRUE(Admit(std::move(first), approver).ok());

  AdmitRequest wider = Request(kDangerous, ApprovalPolicy::kAskDangerous, Mode::kWorkspaceWrite);
  Resolved(wider).session = store->Load("s2").value();
  ScriptedApprover asked_wider({ApprovalAnswer::kDeny});
  EXPECT_FALSE(Admit(std::move(wider), asked_wider).ok());
  EXPECT_EQ(asked_wider.asked.size(), 1u);

  AdmitRequest elsewhere = Request(kDangerous, ApprovalPolicy::kAskDangerous, Mode::kReadOnly);
  Resolved(elsewhere).session = store->Load("s2").value();
  Resolved(elsewhere).spec.workspace = tree_.Dir("other");
  ScriptedApprover asked_elsewhere({ApprovalAnswer::kDeny});
  EXPECT_FALSE(Admit(std::move(elsewhere), asked_elsewhere).ok());
  EXPECT_EQ(asked_elsewhere.asked.size(), 1u);

  AdmitRequest same = Request(kDangerous, ApprovalPolicy::kAskDangerous, Mode::kReadOnly);
  Resolved(same).session = store->Load("s2").value();
  ScriptedApprover nobody;
  EXPECT_TRUE(Admit(std::move(same), nobody).ok());
  EXPECT_TRUE(nobody.asked.empty());
}

}  // namespace
}  // namespace corral::gate
