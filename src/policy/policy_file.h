// A policy file: a Policy written out as JSON, what a harness hands to `corral run
// --policy-file FILE -- CMD` (the native provider's runner) so that corral
// enforces exactly the policy that was confined, not one re-derived later.
//
// It records the PolicySpec, the host context the policy was built against
// (working directory, home, passwd home, uid, gid), the (device, inode) pin of
// every grant, and the SHA-256 of the one command it was compiled for.
// LoadPolicyFile rebuilds the Policy from the spec and refuses it when it
// was compiled for another command (the approval gate judged that argv, and
// a file is no licence for any other), for another user or another home (the
// credential-store masks and corral's own state are worked out from the home,
// so an edited home would unmask them), when any grant's identity changed, or
// when the fingerprint no longer matches: a swapped path is refused, never
// silently followed.
#pragma once

#include <chrono>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "policy/policy.h"

namespace corral {

// JSON text for `policy` admitted for `argv`, stable for equal inputs.
std::string SerializePolicyFile(const Policy& policy, const std::vector<std::string>& argv);

// The Policy `text` describes, when it was compiled for exactly `argv`, for
// the user and the home (and passwd home) of `here`, and every pin holds.
Result<Policy> LoadPolicyFile(const std::string& text, const std::vector<std::string>& argv, const HostContext& here);

// An unambiguous encoding of argv: each argument as <length>:<bytes>, so
// {"a b"} and {"a", "b"} differ.
std::string CanonicalCommand(std::span<const std::string> argv);

// The digest a policy file binds its command by: the SHA-256 of its
// CanonicalCommand, so no two argvs share one.
std::string ArgvDigest(const std::vector<std::string>& argv);

// Writes the compiled policy to `dir`/<fingerprint>-<command digest>.json
// (0600; `dir`, absolute, is made 0700 and must be the caller's and writable
// by no one else) and returns the path. `corral wrap` passes
// <state>/policies (state/state_dir.h) unless --policy-dir names another.
// Each write first removes, from `dir`, the compiled policies (by their
// name's shape: nothing else is touched) not written for kPolicyFileMaxAge.
Result<std::string> WritePolicyFile(const Policy& policy, const std::vector<std::string>& argv,
                                    const std::string& dir);

// A compiled policy not rewritten for this long is removed at the next wrap:
// rewrapping the same command under the same policy rewrites (and so keeps) it.
inline constexpr std::chrono::seconds kPolicyFileMaxAge{7 * 24 * 3600};

// The removal of WritePolicyFile, in the directory `dir` (a descriptor).
void PruneStalePolicyFiles(int dir);

}  // namespace corral
