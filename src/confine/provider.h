// The provider seam: how a harness in any language learns to confine a
// command. A Provider rewrites argv so that it runs under a Policy:
//
//   [runner] [runner flags / profile] [--] [original argv...]
//
// and says, in the returned ConfinedArgv, how completely that argv enforces
// the policy (full, or partial with the named gaps), which stderr texts mean
// "the sandbox said no" (denial_signatures), and how to tell a runner that
// failed to start from a command that failed (runner_failure_rules).
//
//   CORRAL_ASSIGN_OR_RETURN(ConfinedArgv confined, provider.Confine({"make", "test"}, policy));
//   // spawn confined.argv; if it exits non-zero, consult the rules
//
// Fail closed: Confine returns an error whenever it cannot wrap the command
// (no backend, a host that cannot enforce, a danger-full-access policy) and
// never returns an argv that would run the command unconfined. A backend
// that cannot provide every guarantee the policy requires refuses too
// (CheckEnforceable), unless the policy is best-effort: so kPartial, with
// its `gaps`, comes back only for a policy that accepted it (--best-effort).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"
#include "confine/guarantees.h"
#include "confine/runner_failure.h"
#include "policy/policy.h"

namespace corral {

struct ConfinedArgv {
  // How much of the policy the backend covers. (The policy's own
  // Enforcement, required or best-effort, says whether partial coverage is
  // acceptable.) The JSON names it "enforcement".
  enum class Coverage {
    kFull,     // every boundary the policy promises is enforced
    kPartial,  // a subset: `gaps` names what is missing
  };

  std::vector<std::string> argv;  // runner + profile + "--" + the original argv
  Coverage coverage = Coverage::kPartial;
  std::vector<std::string> denial_signatures;  // stderr substrings meaning "the sandbox said no"
  std::vector<RunnerFailureRule> runner_failure_rules;
  std::vector<std::string> gaps;  // what partial enforcement lacks; empty when full
  std::string backend;            // the provider's name()
  Guarantees required;            // what the policy requires (RequiredGuarantees)
  Guarantees provided;            // what this argv enforces of them and beyond
};

std::string_view CoverageName(ConfinedArgv::Coverage coverage);  // "full" or "partial"

// {"argv", "enforcement": "full"|"partial", "denialSignatures",
//  "runnerFailureRules": [{"allowedExitCodes", "fatalSignatures",
//  "informationalLines"}], "gaps", "backend", "requiredGuarantees",
//  "providedGuarantees"} (guarantees by name, as GuaranteeName spells them)
nlohmann::json ConfinedArgvToJson(const ConfinedArgv& confined);

class Provider {
 public:
  virtual ~Provider() = default;
  // Wraps `argv` so that it runs under `policy`. Must fail closed.
  virtual Result<ConfinedArgv> Confine(const std::vector<std::string>& argv, const Policy& policy) = 0;
  // "native", "bubblewrap", "seatbelt" or "unavailable".
  virtual std::string_view name() const = 0;
};

// The refusals every backend applies first: an empty command (usage), and a
// danger-full-access policy, which cannot be confined (kPolicy, code
// "cannot_confine_danger"): the caller must run it unconfined on purpose.
Status CheckConfinable(const std::vector<std::string>& argv, const Policy& policy);
// A backend with no egress proxy (bubblewrap, seatbelt) refuses a policy with
// --allow-host rules (code "backend_lacks_egress"), even under best effort:
// the rules would silently become no network at all.
Status CheckWithoutEgressProxy(const Policy& policy, std::string_view backend);

inline constexpr const char* kPartialEnforcementCode = "partial_enforcement";

// The refusal every backend applies last, to what it built: when the policy
// requires enforcement (no --best-effort) and `confined.provided` does not
// cover `confined.required`, an ErrorKind::kUnsupported error (code
// "partial_enforcement") naming the backend, the missing guarantees and the
// gaps, and saying that --best-effort accepts them. Ok otherwise.
Status CheckEnforceable(const ConfinedArgv& confined, const Policy& policy);

}  // namespace corral
