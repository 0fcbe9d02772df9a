// Guarantees: the boundaries a confined run can promise, as a set.
//
// A policy requires some (RequiredGuarantees); a backend provides some (the
// native plan, or what bwrap or seatbelt can express). Whenever the provided
// set does not cover the required one, the run is partial: every backend
// then refuses unless the policy is best-effort, and names what is missing.
//
//   Guarantees missing = RequiredGuarantees(policy).Missing(provided);
//   if (missing.bits() != 0) ... missing.Joined() ...  // "exec_boundary, syscall_filter"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace corral {

enum class Guarantee : uint32_t {
  kProcessBoundary = 1u << 0,  // own PID namespace; host processes invisible; the tree dies together
  kWriteBoundary = 1u << 1,    // writes land only inside writable grants
  kReadBoundary = 1u << 2,     // only granted trees are visible or readable
  kExecBoundary = 1u << 3,     // programs run only from exec grants
  kNetworkBoundary = 1u << 4,  // no network unless granted
  kEnvScrub = 1u << 5,         // only allowlisted environment variables pass
  kSyscallFilter = 1u << 6,    // dangerous kernel interfaces are denied
  kPrivilegeDrop = 1u << 7,    // no capabilities, no_new_privs
  kResourceLimits = 1u << 8,   // no core dumps; the deadline kills the whole tree
};

class Guarantees {
 public:
  Guarantees() = default;
  explicit Guarantees(uint32_t bits) : bits_(bits) {}
  bool Has(Guarantee g) const { return (bits_ & static_cast<uint32_t>(g)) != 0; }
  void Add(Guarantee g) { bits_ |= static_cast<uint32_t>(g); }
  void Remove(Guarantee g) { bits_ &= ~static_cast<uint32_t>(g); }
  bool Covers(Guarantees other) const { return (bits_ & other.bits_) == other.bits_; }
  uint32_t bits() const { return bits_; }
  // The names, in declaration order ("process_boundary", ...).
  std::vector<std::string> Names() const;
  // The names joined by ", ".
  std::string Joined() const;
  // The guarantees in `this` that `provided` lacks.
  Guarantees Missing(Guarantees provided) const { return Guarantees(bits_ & ~provided.bits_); }

 private:
  uint32_t bits_ = 0;
};
std::string_view GuaranteeName(Guarantee g);

// The guarantees `policy` needs: all of them, except the network boundary
// when the policy grants the network.
Guarantees RequiredGuarantees(const Policy& policy);

}  // namespace corral
