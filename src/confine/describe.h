// Machine-readable descriptions of a policy and its plan, shared by
// `corral explain --json`, `corral check --json` and later front ends.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "confine/host.h"
#include "confine/plan.h"
#include "policy/policy.h"

namespace corral {

// The effective policy: grants, masks, protected paths, private mounts,
// network, environment, timeout and pin.
nlohmann::json DescribePolicy(const Policy& policy);

// What a plan enforces: level, required and provided guarantees, mechanisms,
// dropped mechanisms and the compile report.
nlohmann::json DescribePlan(const Plan& plan);

nlohmann::json DescribeHost(const HostSupport& host);

}  // namespace corral
