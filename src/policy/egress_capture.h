// Transparent capture under --allow-host (net/synthetic_names.h), as the
// policy's host rules give it: which ports the sandbox's init listens on,
// on every address, and which names the sandbox's name server gives a
// synthetic address.
//
//   for (uint16_t port : CapturedPorts(policy.egress(), kMaxCapturedPorts)) services.captured_ports[...] = port;
//   SyntheticNames names([rules](const std::string& n) { return NameAllowed(rules, n); });
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "policy/egress_rules.h"

namespace corral {

// The ports the name rules (exact and wildcard; not the address forms,
// which a client reaches by address, not through a name) allow: sorted,
// once each, without corral's own (53, 1080, 3128) and the --allow-local
// ones, the lowest `most` of them (kMaxCapturedPorts, kernel/loopback.h).
std::vector<uint16_t> CapturedPorts(const EgressRules& rules, size_t most);

// Whether some allow rule lets `name` (normal form) through on one of its
// ports and no deny rule names it.
bool NameAllowed(const EgressRules& rules, const std::string& name);

}  // namespace corral
