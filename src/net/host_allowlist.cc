#include "net/host_allowlist.h"

#include "base/mutant.h"
#include "net/destination.h"

namespace corral {

EgressRuling HostAllowlist::Decide(const std::string& host, uint16_t port) const {
  if (MutantActive(Mutant::kEgressRules)) return {EgressVerdict::kAllowed, "the egress_rules mutant"};
  Result<Address> literal = ParseAddress(host);
  HostMatch match = literal.ok() ? rules_.MatchAddress(*literal, port) : rules_.MatchName(host, port);
  switch (match.verdict) {
    case HostVerdict::kAllowed: return {EgressVerdict::kAllowed, "--allow-host " + match.rule->Describe()};
    case HostVerdict::kDenied: return {EgressVerdict::kDenied, "--deny-host " + match.rule->Describe()};
    case HostVerdict::kNotListed: break;
  }
  return {EgressVerdict::kDenied, "not in --allow-host"};
}

Result<void> HostAllowlist::CheckAddress(const Address& address) const {
  if (MutantActive(Mutant::kEgressAddressCheck)) return {};
  HostMatch match = rules_.MatchAddress(address, 0);
  if (match.verdict == HostVerdict::kDenied) {
    return Error(ErrorKind::kDenied, address.ToString() + " is refused by --deny-host " + match.rule->Describe());
  }
  return CheckDestination(address, private_ranges_);
}

}  // namespace corral
