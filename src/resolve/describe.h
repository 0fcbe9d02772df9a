// The machine-readable description of how a request was resolved, for
// `corral explain --json` (the policy and plan: confine/describe.h).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "resolve/request.h"

namespace corral {

// How the policy was resolved: which layer won the mode and the workspace,
// the approval policy and where it came from, the preset state, the config
// files read, the session, the Gated dimensions, and the backend
// (sandbox.backend: "auto" unless the user config forces one).
nlohmann::json DescribeResolution(const ResolvedRequest& resolved);

}  // namespace corral
