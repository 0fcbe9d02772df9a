// A granted directory swapped between the check and the spawn, through the
// library as every front end uses it. Building the policy pins each grant by
// (device, inode); nothing in the parent looks again. The check that refuses
// is the sandbox child's: just before mounting a grant it re-opens the path
// without following symlinks and compares the pin (kernel/mounts.cc). The
// command would leave canaries in the workspace and in the grant; the test
// looks for them from outside.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "audit/audit.h"
#include "confine/host.h"
#include "confine/mount_plan.h"
#include "confine/plan.h"
#include "confine/env.h"
#include "run/run.h"
#include "exec/spawn.h"
#include "gate/admit.h"
#include "harness.h"
#include "policy/policy_file.h"
#include "policy/policy.h"
#include "policy/roots.h"

namespace corral_it {
namespace {

enum class Change { kAnotherDirectory, kSymlinkToTheOriginal, kRemoved };

class NobodyAnswers : public corral::Approver {
 public:
  corral::Result<corral::ApprovalAnswer> Request(const corral::ApprovalRequest&) override {
    return corral::Error(corral::ErrorKind::kDenied, "nobody answers here");
  }
};

class PinnedGrant : public ::testing::Test {
 protected:
  void SetUp() override {
    outside_.Mkdir("data");
    corral::Result<corral::HostContext> host = corral::CaptureHostContext();
    ASSERT_TRUE(host.ok()) << host.error().ToString();
    corral::PolicyBuilder builder(*host);
    builder.Workspace(workspace_.path()).AllowWrite(outside_ / "data");
    corral::Result<corral::Policy> policy = builder.Build();
    ASSERT_TRUE(policy.ok()) << policy.error().ToString();
    policy_.emplace(std::move(policy).value());
    corral::Result<corral::gate::PolicyFile> compiled =
        corral::gate::PolicyFile::Load(corral::SerializePolicyFile(*policy_, command_), command_,
                                           policy_->host());
    ASSERT_TRUE(compiled.ok()) << compiled.error().ToString();
    compiled_.emplace(std::move(compiled).value());
  }

  // Moves the granted directory away and puts `change` at its path.
  void Swap(Change change) {
    std::filesystem::rename(outside_ / "data", outside_ / "data-pinned");
    if (change == Change::kAnotherDirectory) outside_.Mkdir("data");
    if (change == Change::kSymlinkToTheOriginal) {
      std::filesystem::create_directory_symlink(outside_ / "data-pinned", outside_ / "data");
    }
  }

  // The refusal the README documents (exit 77), naming the grant and what
  // happened to it: another file at the path, a symlink there, or nothing.
  void ExpectRefusal(const corral::Error& error, Change change) {
    EXPECT_EQ(error.kind(), corral::ErrorKind::kPolicy) << error.ToString();
    const char* says = change == Change::kAnotherDirectory      ? "changed between the check and the spawn"
                       : change == Change::kSymlinkToTheOriginal ? "now goes through a symlink"
                                                                 : "was removed after the policy was built";
    EXPECT_NE(error.message().find(says), std::string::npos) << error.ToString();
    EXPECT_NE(error.message().find(outside_ / "data"), std::string::npos) << error.ToString();
  }

  void ExpectNothingRan() {
    EXPECT_FALSE(Exists(workspace_ / "ran"));
    EXPECT_FALSE(Exists(outside_ / "data/canary"));
    EXPECT_FALSE(Exists(outside_ / "data-pinned/canary"));
  }

  corral::RunOptions Options() const {
    corral::RunOptions options;
    options.forward_signals = false;
    options.state_home = state_.path();
    return options;
  }

  // The whole run as every front end makes it: the gate admits the policy
  // (built here, it asks no one), then RunConfined runs what it admitted.
  corral::RunResult Run(const corral::AuditTrail& trail) const {
    corral::gate::AdmitRequest request;
    request.argv = command_;
    request.policy = *compiled_;
    request.trail = &trail;
    NobodyAnswers nobody;
    corral::Result<corral::gate::AdmittedRun> admitted = corral::gate::Admit(std::move(request), nobody);
    if (!admitted.ok()) {
      ADD_FAILURE() << "not admitted: " << admitted.error().ToString();
      return corral::RunResult{};
    }
    return corral::RunConfined(std::move(admitted).value(), Options());
  }

  TempDir workspace_{"corral-ws"};
  TempDir outside_{"corral-outside"};
  TempDir state_{"corral-state"};
  std::optional<corral::Policy> policy_;
  // policy_ as `corral wrap` writes it and `run --policy-file` loads it,
  // loaded before anything is swapped.
  std::optional<corral::gate::PolicyFile> compiled_;
  const std::vector<std::string> command_ = {"/usr/bin/touch", workspace_ / "ran", outside_ / "data/canary"};
};

// The whole run, as the CLI makes it: RunConfined compiles and spawns.
TEST_F(PinnedGrant, ADirectorySwappedAfterThePolicyIsBuiltIsRefusedAndNothingRuns) {
  // Control: unswapped, the command runs and leaves both canaries.
  corral::RunResult control = Run(corral::AuditTrail::Discard());
  ASSERT_EQ(control.source, corral::RunResult::Source::kCommand)
      << (control.error ? control.error->ToString() : std::string());
  EXPECT_EQ(control.exit_status, 0);
  EXPECT_TRUE(Exists(workspace_ / "ran"));
  EXPECT_TRUE(Exists(outside_ / "data/canary"));
  ::unlink((workspace_ / "ran").c_str());
  ::unlink((outside_ / "data/canary").c_str());

  Swap(Change::kAnotherDirectory);
  std::string audit_path = state_ / "audit.jsonl";
  corral::Result<corral::AuditTrail> trail = corral::AuditTrail::ToFile(audit_path);
  ASSERT_TRUE(trail.ok()) << trail.error().ToString();
  corral::RunResult swapped = Run(*trail);
  ExpectNothingRan();
  EXPECT_EQ(swapped.source, corral::RunResult::Source::kCorral);
  EXPECT_EQ(swapped.exit_status, 77);
  ASSERT_TRUE(swapped.error.has_value());
  ExpectRefusal(*swapped.error, Change::kAnotherDirectory);
  std::vector<nlohmann::json> audit = ReadAudit(audit_path);
  ASSERT_FALSE(audit.empty());
  EXPECT_EQ(audit.back()["event"], "failed");
  EXPECT_EQ(audit.back()["reason"], "policy");
}

// The narrowest window: the plan is compiled, then the grant changes, then
// the sandbox is spawned from that plan.
class PinnedGrantChanged : public PinnedGrant, public ::testing::WithParamInterface<Change> {};

TEST_P(PinnedGrantChanged, AGrantChangedAfterThePlanIsCompiledIsRefusedBySpawn) {
  corral::Result<corral::Plan> plan = corral::Compile(*policy_, corral::ProbeHost());
  ASSERT_TRUE(plan.ok()) << plan.error().ToString();
  Swap(GetParam());
  corral::Command command;
  command.argv = command_;
  command.env = corral::ScrubEnvironment(*policy_, environ);
  command.cwd = corral::SandboxWorkingDirectory(*policy_);
  sigset_t previous = corral::BlockForwardedSignals();
  corral::Result<corral::SandboxProcess> process = corral::Spawn(*plan, command);
  if (process.ok()) process->Reap();
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  ExpectNothingRan();
  ASSERT_FALSE(process.ok()) << "the sandbox was spawned on a changed grant";
  ExpectRefusal(process.error(), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Changes, PinnedGrantChanged,
                         ::testing::Values(Change::kAnotherDirectory, Change::kSymlinkToTheOriginal, Change::kRemoved),
                         [](const ::testing::TestParamInfo<Change>& info) {
                           switch (info.param) {
                             case Change::kAnotherDirectory: return "AnotherDirectory";
                             case Change::kSymlinkToTheOriginal: return "SymlinkToTheOriginal";
                             case Change::kRemoved: return "Removed";
                           }
                           return "Unknown";
                         });

}  // namespace
}  // namespace corral_it
