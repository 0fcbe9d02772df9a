#include "exec/backend_probes.h"

#include <chrono>

#include "base/host_program.h"
#include "confine/bubblewrap_provider.h"
#include "confine/detect.h"
#include "confine/env.h"
#include "confine/plan.h"
#include "exec/spawn.h"

namespace corral {
namespace {

// A probe's stderr kept for its first line in the verdict.
constexpr size_t kProbeStderrLimit = 4096;

using namespace std::chrono_literals;

// The default policy without a workspace: what every run needs, and what
// `corral check` probes. The bwrap probe asks whether bwrap works at all, so
// it builds a best-effort policy, which the bubblewrap backend wraps despite
// its gaps (a required one it refuses, without running anything).
Result<Policy> DefaultProbePolicy(Enforcement enforcement) {
  CORRAL_ASSIGN_OR_RETURN(HostContext host, CaptureHostContext());
  PolicyBuilder builder(host);
  builder.NoWorkspace().SetEnforcement(enforcement);
  return builder.Build();
}

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "no message" : line;
}

class HostBackendProbes final : public BackendProbes {
 public:
  ProbeVerdict Native() override {
    Result<Policy> policy = DefaultProbePolicy(Enforcement::kRequired);
    if (!policy.ok()) return {false, "cannot build the probe policy: " + policy.error().ToString()};
    Result<Plan> plan = Compile(*policy, ProbeHost());
    if (!plan.ok()) return {false, plan.error().ToString()};
    if (plan->level() != Level::kFull) {
      return {false, "this host gives only level " + std::string(LevelName(plan->level()))};
    }
    Command command;
    command.argv = {"true"};
    Result<SandboxProcess> process = Spawn(*plan, command, SpawnMode::kProbeOnly);
    if (!process.ok()) return {false, "the probe sandbox failed: " + process.error().ToString()};
    return {true, "a sandbox with the default policy was set up and torn down (full enforcement)"};
  }

  ProbeVerdict Bubblewrap(const std::string& bwrap) override {
    Result<Policy> policy = DefaultProbePolicy(Enforcement::kBestEffort);
    if (!policy.ok()) return {false, "cannot build the probe policy: " + policy.error().ToString()};
    BubblewrapOptions options;
    options.bwrap_path = bwrap;
    options.environment = std::vector<std::string>{std::string("PATH=") + kDefaultPath};
    Result<ConfinedArgv> confined = BubblewrapProvider(std::move(options)).Confine({"true"}, *policy);
    if (!confined.ok()) return {false, confined.error().ToString()};
    Result<HostProgramResult> run = RunHostProgram(confined->argv, {std::string("PATH=") + kDefaultPath},
                                                   CapturedStream::kStderr, kProbeStderrLimit, 10s);
    if (!run.ok()) return {false, run.error().ToString()};
    if (run->timed_out) return {false, bwrap + " did not finish its probe within 10 s"};
    if (run->exit_code != 0) {
      return {false, bwrap + " is installed but does not work here (exit " + std::to_string(run->exit_code) +
                         "): " + FirstLine(run->output)};
    }
    return {true, bwrap + " ran the probe (partial enforcement: no Landlock, no seccomp)"};
  }

  ProbeVerdict Seatbelt() override {
    const std::string sandbox_exec = "/usr/bin/sandbox-exec";
    Result<HostProgramResult> run =
        RunHostProgram({sandbox_exec, "-p", "(version 1) (allow default)", "--", "/usr/bin/true"},
                       {std::string("PATH=") + kDefaultPath}, CapturedStream::kStderr, kProbeStderrLimit, 10s);
    if (!run.ok()) return {false, run.error().ToString()};
    if (run->exit_code != 0) return {false, sandbox_exec + " failed its probe: " + FirstLine(run->output)};
    return {true, sandbox_exec + " ran the probe (partial enforcement)"};
  }
};

}  // namespace

std::unique_ptr<BackendProbes> HostProbes() { return std::make_unique<HostBackendProbes>(); }

Detector& ProcessDetector() {
  static Detector* detector = new Detector(HostProbes());  // never destroyed: callable until exit
  return *detector;
}

Result<Detection> DetectProvider(const DetectOptions& options) { return ProcessDetector().Detect(options); }

}  // namespace corral
