// A policy file: a Policy written out as JSON, what a harness hands to `corral run
// --policy-file FILE -- CMD` (the native provider's runner) so that corral
// enforces exactly the policy that was confined, not one re-derived later.
//
// It records the PolicySpec, the host context the policy was built against
// (working directory, home, uid, gid) and the (device, inode) pin of every
// grant. LoadPolicyFile rebuilds the Policy from the spec and refuses it
// when the caller's uid/gid differ, when any grant's identity changed, or when
// the fingerprint no longer matches: a swapped path is refused, never
// silently followed.
#pragma once

#include <string>

#include "base/result.h"
#include "policy/policy.h"

namespace corral {

// JSON text, stable for equal policies.
std::string SerializePolicyFile(const Policy& policy);

Result<Policy> LoadPolicyFile(const std::string& text);

// Writes the compiled policy to `dir`/<fingerprint>.json (0600, dir 0700) and
// returns the path. `dir` defaults to $XDG_RUNTIME_DIR/corral/policies, or
// /tmp/corral-<uid>/policies.
Result<std::string> WritePolicyFile(const Policy& policy, const std::string& dir = {});

}  // namespace corral
