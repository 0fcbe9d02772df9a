// Machine-readable descriptions of a policy and its plan, shared by
// `corral explain --json`, `corral check --json` and later front ends.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "confine/host.h"
#include "confine/plan.h"
#include "gate/request.h"
#include "policy/policy.h"

namespace corral {

// The effective policy: grants, masks, protected paths, private mounts,
// network, environment, timeout and pin.
nlohmann::json DescribePolicy(const Policy& policy);

// What a plan enforces: level, required and provided guarantees, mechanisms,
// dropped mechanisms and the compile report.
nlohmann::json DescribePlan(const Plan& plan);

nlohmann::json DescribeHost(const HostSupport& host);

// How the policy was resolved: which layer won the mode and the workspace,
// the approval policy and where it came from, the preset state, the config
// files read, the session, the Gated dimensions, and the backend
// (sandbox.backend: "auto" unless the user config forces one).
nlohmann::json DescribeResolution(const ResolvedRequest& resolved);

}  // namespace corral
