#include "confine/provider.h"

#include <nlohmann/json.hpp>

#include "base/mutant.h"

namespace corral {

std::string_view CoverageName(ConfinedArgv::Coverage coverage) {
  return coverage == ConfinedArgv::Coverage::kFull ? "full" : "partial";
}

nlohmann::json ConfinedArgvToJson(const ConfinedArgv& confined) {
  nlohmann::json rules = nlohmann::json::array();
  for (const RunnerFailureRule& rule : confined.runner_failure_rules) {
    rules.push_back({{"allowedExitCodes", rule.allowed_exit_codes},
                     {"fatalSignatures", rule.fatal_signatures},
                     {"informationalLines", rule.informational_lines}});
  }
  return {{"argv", confined.argv},
          {"enforcement", CoverageName(confined.coverage)},
          {"denialSignatures", confined.denial_signatures},
          {"runnerFailureRules", std::move(rules)},
          {"gaps", confined.gaps},
          {"backend", confined.backend},
          {"requiredGuarantees", confined.required.Names()},
          {"providedGuarantees", confined.provided.Names()}};
}

Status CheckConfinable(const std::vector<std::string>& argv, const Policy& policy) {
  if (policy.unconfined()) {
    return Error(ErrorKind::kPolicy,
                 "cannot confine a danger-full-access policy: it runs the command with no sandbox at all, so no "
                 "backend may wrap it; run it unconfined on purpose, or choose read-only or workspace-write")
        .WithCode("cannot_confine_danger");
  }
  if (argv.empty() || argv[0].empty()) return Error(ErrorKind::kUsage, "cannot confine an empty command");
  return Ok();
}

Status CheckWithoutEgressProxy(const Policy& policy, std::string_view backend) {
  const EgressRules& egress = policy.egress();
  if (!egress.active() && egress.local_ports.empty() && !egress.host_ports()) return Ok();
  const std::string asked = egress.active()         ? "--allow-host (" + egress.allow_text.front() + ")"
                            : egress.host_ports() ? "--allow-port (" + std::to_string(egress.connect_ports.front()) + ")"
                                                  : "--allow-local (" + std::to_string(egress.local_ports.front()) + ")";
  return Error(ErrorKind::kUnsupported,
               "the " + std::string(backend) + " backend has neither corral's egress proxy nor its TCP port "
                   "rules, so it cannot give " + asked + "; use the native backend, or drop the network rules. "
                   "Nothing was run")
      .WithCode("backend_lacks_egress");
}

Status CheckEnforceable(const ConfinedArgv& confined, const Policy& policy) {
  Guarantees missing = confined.required.Missing(confined.provided);
  if (missing.bits() == 0 || policy.enforcement() == Enforcement::kBestEffort) return Ok();
  if (MutantActive(Mutant::kEnforceCheck)) return Ok();
  std::string gaps;
  for (const std::string& gap : confined.gaps) gaps += (gaps.empty() ? "" : "; ") + gap;
  return Error(ErrorKind::kUnsupported,
               "the " + confined.backend + " backend cannot provide " + missing.Joined() +
                   ", which this policy requires" + (gaps.empty() ? "" : " (its gaps: " + gaps + ")") +
                   ". Nothing was wrapped. Pass --best-effort to accept partial enforcement, or use a host where "
                   "the native backend gives full enforcement (see `corral check`)")
      .WithCode(kPartialEnforcementCode);
}

}  // namespace corral
