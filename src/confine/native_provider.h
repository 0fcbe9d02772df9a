// NativeProvider: corral itself is the runner. Confine compiles the policy
// for this host, writes it with WritePolicyFile, and returns
//
//   [<corral>, "run", "--policy-file", <file>, ["--audit", <trail>,] "--", argv...]
//
// `corral run --policy-file` reloads that file and refuses it when any
// grant's (device, inode) changed since Confine (exit 77, nothing runs), so
// the argv enforces exactly the policy that was confined.
//
// Coverage is full when Compile(policy, host) reaches Level::kFull. A
// host that cannot give every guarantee is refused (Compile's error), unless
// the policy is best-effort: then the argv is partial and `gaps` lists the
// mechanisms the plan dropped.
#pragma once

#include <optional>
#include <string>

#include "confine/host.h"
#include "confine/provider.h"

namespace corral {

struct NativeOptions {
  std::string corral_path;  // absolute path of the corral binary that will run the command
  std::string policy_dir;   // where compiled policies go; empty: WritePolicyFile's default
  const HostSupport* host = nullptr;  // what this host enforces; nullptr: ProbeHost()
  std::optional<std::string> audit;  // the runner's --audit (a file or "-"); unset: its default trail
};

class NativeProvider final : public Provider {
 public:
  explicit NativeProvider(NativeOptions options) : options_(std::move(options)) {}
  Result<ConfinedArgv> Confine(const std::vector<std::string>& argv, const Policy& policy) override;
  std::string_view name() const override { return "native"; }

 private:
  NativeOptions options_;
};

// What corral's runner prints when the sandbox said no, and the rules that
// recognise a runner that refused or failed before the command ran.
std::vector<std::string> NativeDenialSignatures();
std::vector<RunnerFailureRule> NativeRunnerFailureRules();

}  // namespace corral
