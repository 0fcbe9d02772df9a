// The environment a confined command gets: the built-in allowlist (PATH, HOME,
// TERM, LANG, LC_ALL, LC_CTYPE, TZ) plus the policy's --allow-env names, with
// the values corral itself holds. Everything else is dropped. HOME points at
// the sandbox's empty home; PATH falls back to a standard search path. Under
// --allow-host the proxy variables name corral's egress proxy on the
// sandbox's lo (ProxyEnvironment), whatever the caller's said, and NO_PROXY
// is never passed.
#pragma once

#include <string>
#include <vector>

#include "policy/policy.h"

namespace corral {

// `environ` is a NULL-terminated "NAME=value" array, as in environ(7).
std::vector<std::string> ScrubEnvironment(const Policy& policy, const char* const* environ);

// The variables that send HTTP clients (curl, git, pip, npm, yarn, cargo) to
// the egress proxy: http://127.0.0.1:3128, and ALL_PROXY socks5h://127.0.0.1:1080.
const std::vector<std::string>& ProxyEnvironment();

// The default search path used when the caller has no PATH.
inline constexpr const char* kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

}  // namespace corral
