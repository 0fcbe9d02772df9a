// PolicySpec <-> JSON, with strict reading: an unknown key, a wrong type or a
// bad value is an error naming the key. Used by the compiled-policy file and
// by machine front ends (MCP arguments).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "base/result.h"
#include "policy/spec.h"

namespace corral {

nlohmann::json SpecToJson(const PolicySpec& spec);
Result<PolicySpec> SpecFromJson(const nlohmann::json& json);

}  // namespace corral
