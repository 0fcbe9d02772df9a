// `corral wrap`, spawned by a harness in another language: a small Python
// script (tests/wrap/spawn_wrapped.py) asks `corral wrap --json` how to
// confine a probe, spawns the printed argv itself, and reports. For the
// native and the bubblewrap backends, every denial is judged from outside
// and compared with what `corral run` does with the same policy.
//
// The script is found through $CORRAL_WRAP_SCRIPT, else beside this file's
// source tree (tests/wrap/); python3 through $PATH.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "harness.h"

namespace corral_it {
namespace {

std::string WrapScript() {
  const char* given = std::getenv("CORRAL_WRAP_SCRIPT");
  if (given != nullptr && given[0] != '\0') return given;
  return (std::filesystem::path(__FILE__).parent_path().parent_path() / "wrap" / "spawn_wrapped.py").string();
}

class WrapTest : public SandboxTest, public ::testing::WithParamInterface<std::string> {
 protected:
  WrapTest() { outside_.Write("secret.txt", secret_ + "\n"); }

  // spawn_wrapped.py [MODE FILE] --backend B --policy-dir DIR FLAGS -- COMMAND,
  // run from the workspace; returns its JSON report. bubblewrap is partial,
  // so it is given --best-effort to accept its gaps, unless a test clears
  // accept_partial_.
  nlohmann::json Script(const std::vector<std::string>& mode, const std::vector<std::string>& flags,
                        const std::vector<std::string>& command, SpawnOptions options = {}) {
    std::vector<std::string> argv = {"/usr/bin/env", "python3", WrapScript(), "--corral", CorralBin()};
    argv.insert(argv.end(), mode.begin(), mode.end());
    if (!command.empty()) {
      argv.insert(argv.end(), {"--backend", GetParam(), "--policy-dir", state_ / "policies"});
      if (accept_partial_ && GetParam() == "bubblewrap") argv.push_back("--best-effort");
      argv.insert(argv.end(), flags.begin(), flags.end());
      argv.push_back("--");
      argv.insert(argv.end(), command.begin(), command.end());
    }
    Outcome outcome = ::corral_it::Execute(argv, Defaults(std::move(options)));
    last_ = outcome.Describe();
    EXPECT_EQ(outcome.exit_code, 0) << last_;
    nlohmann::json report = nlohmann::json::parse(outcome.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_TRUE(report.is_object()) << last_;
    return report.is_object() ? report : nlohmann::json::object();
  }

  // Wraps and spawns probe NAME with an exec grant on the probes, as Probe() does for `corral run`.
  nlohmann::json WrappedProbe(const std::string& name, const std::vector<std::string>& args,
                              const std::vector<std::string>& flags = {}) {
    std::vector<std::string> all = {"--allow-exec", ProbesDir()};
    all.insert(all.end(), flags.begin(), flags.end());
    std::vector<std::string> command = {ProbePath(name)};
    command.insert(command.end(), args.begin(), args.end());
    nlohmann::json report = Script({}, all, command);
    EXPECT_EQ(report.value("spawned", false), true) << last_;
    return report;
  }

  static int ExitCode(const nlohmann::json& report) {
    return report.contains("exit_code") && report["exit_code"].is_number() ? report["exit_code"].get<int>() : -1;
  }
  static std::string Field(const nlohmann::json& report, const char* key) { return report.value(key, ""); }


  const std::string secret_ = RandomToken("WRAPSECRET");
  std::string last_;
  bool accept_partial_ = true;
};

TEST_P(WrapTest, ReportsTheBackendAndItsEnforcement) {
  nlohmann::json report = WrappedProbe("read_file", {workspace_ / "missing"});
  const nlohmann::json& confined = report["confined"];
  ASSERT_TRUE(confined.is_object()) << last_;
  EXPECT_EQ(confined["backend"], GetParam());
  if (GetParam() == "native") {
    EXPECT_EQ(confined["enforcement"], "full");
    EXPECT_TRUE(confined["gaps"].empty());
    EXPECT_EQ(confined["argv"][0], CorralBin());
  } else {
    EXPECT_EQ(confined["enforcement"], "partial");
    EXPECT_FALSE(confined["gaps"].empty());
  }
  for (const char* key : {"argv", "denialSignatures", "runnerFailureRules", "gaps", "requiredGuarantees",
                          "providedGuarantees"}) {
    EXPECT_TRUE(confined[key].is_array()) << key;
  }
  // The policy's required guarantees next to the backend's: native covers
  // them all; bubblewrap, accepted with --best-effort, lacks some.
  const nlohmann::json& required = confined["requiredGuarantees"];
  const nlohmann::json& provided = confined["providedGuarantees"];
  EXPECT_NE(std::find(required.begin(), required.end(), "exec_boundary"), required.end()) << required;
  if (GetParam() == "native") {
    EXPECT_EQ(provided, required);
  } else {
    for (const char* missing : {"exec_boundary", "syscall_filter", "resource_limits"}) {
      EXPECT_EQ(std::find(provided.begin(), provided.end(), missing), provided.end()) << missing;
    }
  }
}

// Without --best-effort the policy requires every guarantee: native gives
// them and is wrapped; bubblewrap cannot, so the harness gets no argv, only
// corral's error, and spawns nothing.
TEST_P(WrapTest, ARequiredPolicyIsWrappedOnlyByABackendThatGivesEveryGuarantee) {
  accept_partial_ = false;
  nlohmann::json report = Script({}, {}, {"touch", workspace_ / "canary"});
  if (GetParam() == "native") {
    EXPECT_TRUE(report.value("spawned", false)) << last_;
    EXPECT_EQ(report["confined"]["enforcement"], "full") << last_;
    return;
  }
  EXPECT_FALSE(report.value("spawned", true)) << last_;
  EXPECT_TRUE(report["confined"].is_null()) << last_;
  EXPECT_FALSE(Exists(workspace_ / "canary"));
  ASSERT_TRUE(report["wrap"].is_object()) << last_;
  EXPECT_EQ(report["wrap"]["exit_code"], 125) << last_;
  const nlohmann::json& error = report["wrap"]["error"];
  ASSERT_TRUE(error.is_object()) << last_;
  EXPECT_EQ(error["kind"], "unsupported");
  EXPECT_EQ(error["code"], "partial_enforcement");
  EXPECT_NE(Field(error, "message").find("--best-effort"), std::string::npos) << last_;
}

TEST_P(WrapTest, CanaryOutsideTheWorkspaceIsNotWritten) {
  std::string canary = outside_ / "canary";
  nlohmann::json wrapped = WrappedProbe("write_file", {canary});
  EXPECT_EQ(ExitCode(wrapped), kProbeBlocked) << last_;
  EXPECT_FALSE(Exists(canary));
  Outcome run = Probe("write_file", {canary});
  EXPECT_EQ(run.exit_code, ExitCode(wrapped)) << run.Describe();
  EXPECT_FALSE(Exists(canary));
}

TEST_P(WrapTest, SecretOutsideTheWorkspaceDoesNotAppear) {
  std::string secret = outside_ / "secret.txt";
  nlohmann::json wrapped = WrappedProbe("read_file", {secret});
  EXPECT_EQ(ExitCode(wrapped), kProbeBlocked) << last_;
  EXPECT_EQ(last_.find(secret_), std::string::npos) << last_;
  Outcome run = Probe("read_file", {secret});
  EXPECT_EQ(run.exit_code, ExitCode(wrapped)) << run.Describe();
  EXPECT_EQ(run.out.find(secret_), std::string::npos);
}

TEST_P(WrapTest, WriteInsideTheWorkspaceSucceeds) {
  nlohmann::json wrapped = WrappedProbe("write_file", {workspace_ / "wrapped.txt"});
  EXPECT_EQ(ExitCode(wrapped), kProbeEscaped) << last_;
  EXPECT_EQ(ReadFile(workspace_ / "wrapped.txt"), "corral-probe-was-here\n");
  Outcome run = Probe("write_file", {workspace_ / "run.txt"});
  EXPECT_EQ(run.exit_code, ExitCode(wrapped)) << run.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "run.txt"), "corral-probe-was-here\n");
}

TEST_P(WrapTest, ReadOnlyModeDeniesAWorkspaceWrite) {
  nlohmann::json wrapped = WrappedProbe("write_file", {workspace_ / "wrapped.txt"}, {"--mode", "read-only"});
  EXPECT_EQ(ExitCode(wrapped), kProbeBlocked) << last_;
  EXPECT_FALSE(Exists(workspace_ / "wrapped.txt"));
  Outcome run = Probe("write_file", {workspace_ / "run.txt"}, {"--mode", "read-only"});
  EXPECT_EQ(run.exit_code, ExitCode(wrapped)) << run.Describe();
  EXPECT_FALSE(Exists(workspace_ / "run.txt"));
}

TEST_P(WrapTest, ReadOnlyDenialIsRecognisedByItsSignature) {
  // The harness tells "the sandbox said no" from stderr alone, and does not
  // mistake it for a runner failure.
  nlohmann::json wrapped = Script({}, {"--mode", "read-only"}, {"sh", "-c", "echo x > denied.txt"});
  EXPECT_NE(ExitCode(wrapped), 0) << last_;
  EXPECT_FALSE(Exists(workspace_ / "denied.txt"));
  EXPECT_FALSE(wrapped["denied"].empty()) << last_;
  EXPECT_TRUE(wrapped["runner_failure"].is_null()) << last_;
  // `corral run --policy-file` prints the model-facing marker, as `corral run` does.
  if (GetParam() == "native") {
    EXPECT_NE(Field(wrapped, "stderr").find("[sandbox: file access denied under read-only mode]"), std::string::npos)
        << last_;
  }
}

TEST_P(WrapTest, ForbidReadHidesAFileInsideTheWorkspace) {
  std::string token = RandomToken("DOTENV");
  workspace_.Write(".env", "TOKEN=" + token + "\n");
  nlohmann::json wrapped = WrappedProbe("read_file", {workspace_ / ".env"}, {"--forbid-read", "**/.env"});
  EXPECT_EQ(ExitCode(wrapped), kProbeBlocked) << last_;
  EXPECT_EQ(last_.find(token), std::string::npos) << last_;
  Outcome run = Probe("read_file", {workspace_ / ".env"}, {"--forbid-read", "**/.env"});
  EXPECT_EQ(run.exit_code, ExitCode(wrapped)) << run.Describe();
}

// Each backend mounts the sandbox's /proc read-only, bubblewrap too
// (`--remount-ro /proc`): a root caller's chmod of a kernel entry there would
// be the host's (WriteEscape.HostProcEntriesKeepTheirModes). Judged outside,
// in a procfs mounted after the run.
TEST_P(WrapTest, HostProcEntriesKeepTheirModes) {
  const std::vector<std::string> entries = {"version", "tty/drivers"};
  const std::string before = FreshProcModes(entries);
  ASSERT_EQ(before, "444\n444\n") << "the host's modes are not the kernel's defaults: nothing to judge";
  nlohmann::json wrapped = Script({}, {}, {"sh", "-c", "chmod 0400 /proc/version /proc/tty/drivers; echo tried"});
  const std::string after = FreshProcModes(entries);
  if (after != before) RestoreProcModes(entries, "0444");  // repair the host
  EXPECT_EQ(after, before) << last_;
  EXPECT_TRUE(wrapped.value("spawned", false)) << last_;
  EXPECT_NE(Field(wrapped, "stdout").find("tried"), std::string::npos) << last_;
}

TEST_P(WrapTest, DangerFullAccessIsNeverWrapped) {
  nlohmann::json report =
      Script({}, {"--mode", "danger-full-access", "--i-understand-danger-full-access"}, {"true"});
  EXPECT_FALSE(report.value("spawned", true)) << last_;
  ASSERT_TRUE(report["wrap"].is_object()) << last_;
  EXPECT_EQ(report["wrap"]["exit_code"], 77) << last_;
  EXPECT_NE(Field(report["wrap"], "stderr").find("cannot_confine_danger"), std::string::npos) << last_;
}

// wrap passes the same approval gate as run: a dangerous command under
// ask-dangerous with no terminal gets no argv, so the harness spawns nothing.
TEST_P(WrapTest, ADangerousCommandRefusedByTheApprovalGateIsNeverWrapped) {
  workspace_.Write("victim/file", "keep");
  SpawnOptions no_terminal;
  no_terminal.new_session = true;  // no controlling terminal to ask on
  nlohmann::json report = Script({}, {"--approval", "ask-dangerous"}, {"rm", "-rf", workspace_ / "victim"}, no_terminal);
  EXPECT_FALSE(report.value("spawned", true)) << last_;
  ASSERT_TRUE(report["wrap"].is_object()) << last_;
  EXPECT_EQ(report["wrap"]["exit_code"], 77) << last_;
  EXPECT_NE(Field(report["wrap"], "stderr").find("approval_denied"), std::string::npos) << last_;
  EXPECT_TRUE(Exists(workspace_ / "victim/file"));
  // Control: a safe command under the same policy is wrapped and runs.
  nlohmann::json safe = Script({}, {"--approval", "ask-dangerous"}, {"true"}, no_terminal);
  EXPECT_TRUE(safe.value("spawned", false)) << last_;
}

// `corral wrap` itself, without the harness: what it prints when bubblewrap
// refuses a policy that requires full enforcement, and when --best-effort
// accepts the gaps.
class WrapEnforcement : public SandboxTest {
 protected:
  WrapEnforcement() { workspace_.Write("f", "contents\n"); }
  Outcome Wrap(const std::vector<std::string>& flags) {
    std::vector<std::string> args = {"wrap"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--policy-dir", state_ / "policies", "--", "cat", "f"});
    return Corral(args);
  }
};

TEST_F(WrapEnforcement, BubblewrapWithoutBestEffortPrintsAnErrorAndNoArgv) {
  Outcome outcome = Wrap({"--json", "--backend", "bubblewrap"});
  EXPECT_EQ(outcome.exit_code, 125) << outcome.Describe();
  nlohmann::json out = nlohmann::json::parse(outcome.out, nullptr, /*allow_exceptions=*/false);
  ASSERT_TRUE(out.is_object()) << outcome.Describe();
  EXPECT_FALSE(out.contains("argv")) << outcome.Describe();
  ASSERT_TRUE(out["error"].is_object()) << outcome.Describe();
  EXPECT_EQ(out["error"]["kind"], "unsupported");
  EXPECT_EQ(out["error"]["code"], "partial_enforcement");
  std::string message = out["error"].value("message", "");
  for (const char* needle : {"bubblewrap backend", "exec_boundary", "syscall_filter", "resource_limits",
                             "seccomp: no syscall filter", "--best-effort"}) {
    EXPECT_NE(message.find(needle), std::string::npos) << needle << "\n" << message;
  }
  EXPECT_NE(outcome.err.find("corral: wrap: the bubblewrap backend cannot provide"), std::string::npos)
      << outcome.Describe();
  EXPECT_NE(outcome.err.find("[partial_enforcement]"), std::string::npos) << outcome.Describe();

  // Without --json: no argv on stdout either.
  Outcome text = Wrap({"--backend", "bubblewrap"});
  EXPECT_EQ(text.exit_code, 125) << text.Describe();
  EXPECT_EQ(text.out, "") << text.Describe();
  EXPECT_NE(text.err.find("[partial_enforcement]"), std::string::npos) << text.Describe();
}

TEST_F(WrapEnforcement, BubblewrapWithBestEffortIsPartialAndListsItsGaps) {
  Outcome outcome = Wrap({"--json", "--backend", "bubblewrap", "--best-effort"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.Describe();
  nlohmann::json out = nlohmann::json::parse(outcome.out);
  EXPECT_EQ(out["backend"], "bubblewrap");
  EXPECT_EQ(out["enforcement"], "partial");
  EXPECT_FALSE(out["gaps"].empty());
  EXPECT_EQ(out["argv"].back(), "f");
  const nlohmann::json& required = out["requiredGuarantees"];
  const nlohmann::json& provided = out["providedGuarantees"];
  for (const nlohmann::json& name : provided) {
    EXPECT_NE(std::find(required.begin(), required.end(), name), required.end()) << name;
  }
  EXPECT_LT(provided.size(), required.size());
}

TEST_F(WrapEnforcement, NativeOnAFullHostNeedsNoBestEffort) {
  Outcome outcome = Wrap({"--json", "--backend", "native"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.Describe();
  nlohmann::json out = nlohmann::json::parse(outcome.out);
  EXPECT_EQ(out["enforcement"], "full");
  EXPECT_TRUE(out["gaps"].empty());
  EXPECT_EQ(out["providedGuarantees"], out["requiredGuarantees"]);
}

// The network a harness gets, named in the JSON: --allow-port opens every
// host's port although network_boundary is provided.
TEST_F(WrapEnforcement, TheJsonNamesTheNetworkAndItsOpenings) {
  Outcome closed = Wrap({"--json", "--backend", "native"});
  ASSERT_EQ(closed.exit_code, 0) << closed.Describe();
  EXPECT_EQ(nlohmann::json::parse(closed.out)["network"]["mode"], "none");
  Outcome ports = Wrap({"--json", "--backend", "native", "--allow-port", "443", "--allow-dns", "localhost"});
  ASSERT_EQ(ports.exit_code, 0) << ports.Describe();
  nlohmann::json network = nlohmann::json::parse(ports.out)["network"];
  EXPECT_EQ(network["mode"], "ports") << network.dump();
  EXPECT_EQ(network["allow_port"], nlohmann::json::array({443})) << network.dump();
  EXPECT_EQ(network["allow_dns"], nlohmann::json::array({"localhost"})) << network.dump();
}

INSTANTIATE_TEST_SUITE_P(Backends, WrapTest, ::testing::Values("native", "bubblewrap"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// A grant swapped between wrap and spawn: the native runner refuses it
// (exit 77, nothing ran); bwrap re-resolves the path and follows it, as its
// "pins" gap says.
class WrapSwapTest : public WrapTest {
 protected:
  // Wraps write_file into the workspace, swaps the workspace, then spawns.
  nlohmann::json WrapSwapSpawn() {
    std::string saved = state_ / "confined.json";
    std::string marker = workspace_ / "ran.txt";
    Script({"--save", saved}, {"--allow-exec", ProbesDir()}, {ProbePath("write_file"), marker});
    moved_ = workspace_.path() + "-swapped-away";
    std::filesystem::rename(workspace_.path(), moved_);
    std::filesystem::create_directory(workspace_.path());
    nlohmann::json report = Script({"--load", saved}, {}, {});
    EXPECT_FALSE(Exists(moved_ + "/ran.txt"));
    return report;
  }
  ~WrapSwapTest() override {
    std::error_code ignored;
    if (!moved_.empty()) std::filesystem::remove_all(moved_, ignored);
  }
  std::string moved_;
};

TEST_P(WrapSwapTest, SwappedWorkspace) {
  nlohmann::json report = WrapSwapSpawn();
  ASSERT_TRUE(report.value("spawned", false)) << last_;
  if (GetParam() == "native") {
    EXPECT_EQ(ExitCode(report), 77) << last_;
    EXPECT_EQ(report["runner_failure"], "the command was not run") << last_;
    EXPECT_NE(Field(report, "stderr").find("compiled policy"), std::string::npos) << last_;
    EXPECT_FALSE(Exists(workspace_ / "ran.txt"));  // nothing ran
  } else {
    EXPECT_EQ(ExitCode(report), kProbeEscaped) << last_;
    EXPECT_TRUE(Exists(workspace_ / "ran.txt"));  // followed into the new directory
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, WrapSwapTest, ::testing::Values("native", "bubblewrap"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace corral_it
