// The environment a confined command gets: the built-in allowlist (PATH, HOME,
// TERM, LANG, LC_ALL, LC_CTYPE, TZ) plus the policy's --allow-env names, with
// the values corral itself holds. Everything else is dropped. HOME points at
// the sandbox's empty home; PATH falls back to a standard search path.
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace corral {

// `environ` is a NULL-terminated "NAME=value" array, as in environ(7).
std::vector<std::string> ScrubEnvironment(const Policy& policy, const char* const* environ);

// The default search path used when the caller has no PATH.
inline constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

}  // namespace corral
