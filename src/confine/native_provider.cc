#include "confine/native_provider.h"

#include "confine/plan.h"
#include "base/exit_codes.h"
#include "policy/policy_file.h"

namespace corral {

std::vector<std::string> NativeDenialSignatures() {
  return {
      // The kernel's answers to a denied file operation (EACCES, EROFS, EPERM):
      // Landlock, a masked path, a read-only bind, the seccomp filter.
      "Permission denied",
      "Read-only file system",
      "Operation not permitted",
      // corral's own refusals (see exec/spawn.cc and policy/policy_file.cc).
      "corral: policy:",
      "corral: compiled policy:",
      "not found inside the sandbox",
  };
}

std::vector<RunnerFailureRule> NativeRunnerFailureRules() {
  RunnerFailureRule setup;
  // 125: the sandbox could not be set up; 77: the policy refused the run.
  setup.allowed_exit_codes = {kExitSandbox, kExitPolicy};
  setup.fatal_signatures = {
      "the command was not run",  // every set-up failure and refusal ends with it
      "corral: namespaces:",
      "corral: mount view:",
      "corral: hardening:",
      "corral: landlock:",
      "corral: seccomp:",
      "corral: policy:",
      "corral: compiled policy:",
      "corral: this host cannot provide",
  };
  RunnerFailureRule usage;
  // 64: the runner could not read the policy file it was handed.
  usage.allowed_exit_codes = {kExitUsage};
  usage.fatal_signatures = {"corral: --policy-file"};
  RunnerFailureRule internal;
  // 70: corral failed around the command (a bug or an I/O failure).
  internal.allowed_exit_codes = {kExitInternal};
  internal.fatal_signatures = {
      "corral: internal error",
      "cannot fork the command inside the sandbox",
      "cannot enter a working directory inside the sandbox",
      "the sandbox child died",
      "the sandbox's init was killed from outside",
  };
  return {setup, usage, internal};
}

Result<ConfinedArgv> NativeProvider::Confine(const std::vector<std::string>& argv, const Policy& policy) {
  CORRAL_TRY(CheckConfinable(argv, policy));
  if (options_.corral_path.empty() || options_.corral_path.front() != '/') {
    return Error(ErrorKind::kUsage, "the native backend needs the absolute path of the corral binary (got \"" +
                                        options_.corral_path + "\")");
  }
  const HostSupport& host = options_.host != nullptr ? *options_.host : ProbeHost();
  // Compile refuses a host that cannot give every guarantee, unless the
  // policy is best-effort.
  CORRAL_ASSIGN_OR_RETURN(Plan plan, Compile(policy, host));
  ConfinedArgv confined;
  confined.backend = std::string(name());
  confined.required = plan.required();
  confined.provided = plan.provided();
  if (plan.level() == Level::kFull) {
    confined.coverage = ConfinedArgv::Coverage::kFull;
  } else if (policy.enforcement() == Enforcement::kBestEffort) {
    confined.coverage = ConfinedArgv::Coverage::kPartial;
    confined.gaps = plan.dropped();
    for (const std::string& missing : plan.required().Missing(plan.provided()).Names()) {
      confined.gaps.push_back("guarantee not provided: " + missing);
    }
  } else {
    return Error(ErrorKind::kUnsupported, "the native backend cannot fully enforce this policy here (level " +
                                              std::string(LevelName(plan.level())) +
                                              "); pass --best-effort to accept partial enforcement");
  }
  CORRAL_ASSIGN_OR_RETURN(std::string file, WritePolicyFile(policy, argv, options_.policy_dir));
  confined.argv = {options_.corral_path, "run", "--policy-file", file};
  if (options_.audit) confined.argv.insert(confined.argv.end(), {"--audit", *options_.audit});
  confined.argv.push_back("--");
  confined.argv.insert(confined.argv.end(), argv.begin(), argv.end());
  confined.denial_signatures = NativeDenialSignatures();
  confined.runner_failure_rules = NativeRunnerFailureRules();
  return confined;
}

}  // namespace corral
