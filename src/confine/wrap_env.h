// The environment a wrapped command gets, computed at wrap time: the same
// scrub `corral run` applies (confine/env.h), starting from a given environment
// (for tests and harnesses) or this process's own. Backends that rewrite an
// argv carry the result in that argv, so the values are fixed at wrap time.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace corral {

// "NAME=value" entries, sorted. `environment` nullopt: this process's environ.
std::vector<std::string> ScrubForWrap(const Policy& policy,
                                      const std::optional<std::vector<std::string>>& environment);

}  // namespace corral
