#include "confine/guarantees.h"

namespace corral {
namespace {

constexpr Guarantee kAllGuarantees[] = {
    Guarantee::kProcessBoundary, Guarantee::kWriteBoundary, Guarantee::kReadBoundary,
    Guarantee::kExecBoundary,    Guarantee::kNetworkBoundary, Guarantee::kEnvScrub,
    Guarantee::kSyscallFilter,   Guarantee::kPrivilegeDrop, Guarantee::kResourceLimits,
};

}  // namespace

std::string_view GuaranteeName(Guarantee g) {
  switch (g) {
    case Guarantee::kProcessBoundary: return "process_boundary";
    case Guarantee::kWriteBoundary: return "write_boundary";
    case Guarantee::kReadBoundary: return "read_boundary";
    case Guarantee::kExecBoundary: return "exec_boundary";
    case Guarantee::kNetworkBoundary: return "network_boundary";
    case Guarantee::kEnvScrub: return "env_scrub";
    case Guarantee::kSyscallFilter: return "syscall_filter";
    case Guarantee::kPrivilegeDrop: return "privilege_drop";
    case Guarantee::kResourceLimits: return "resource_limits";
  }
  return "unknown";
}

std::vector<std::string> Guarantees::Names() const {
  std::vector<std::string> names;
  for (Guarantee g : kAllGuarantees) {
    if (Has(g)) names.emplace_back(GuaranteeName(g));
  }
  return names;
}

std::string Guarantees::Joined() const {
  std::string joined;
  for (const std::string& name : Names()) joined += (joined.empty() ? "" : ", ") + name;
  return joined;
}

Guarantees RequiredGuarantees(const Policy& policy) {
  Guarantees required;
  for (Guarantee g : kAllGuarantees) required.Add(g);
  if (policy.network() == NetworkMode::kAll) required.Remove(Guarantee::kNetworkBoundary);
  return required;
}

}  // namespace corral
