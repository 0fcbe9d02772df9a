#include "net/host_allowlist.h"

#include <ifaddrs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cstring>

#include "base/mutant.h"
#include "net/destination.h"

namespace corral {

EgressRuling HostAllowlist::Decide(const std::string& host, uint16_t port) const {
  if (MutantActive(Mutant::kEgressRules)) return {EgressVerdict::kAllowed, "the egress_rules mutant"};
  Result<Address> literal = ParseAddress(host);
  if (!literal.ok()) {
    // Not a host name at all ("a_b..c", 300 characters, a numeric last
    // label): no rule can name it, so it is refused by corral, never put to
    // an approver as a place nobody listed.
    if (Result<std::string> canonical = CanonicalHostName(host); !canonical.ok()) {
      return {EgressVerdict::kDenied, "not a host name: " + canonical.error().message()};
    }
  }
  HostMatch match = literal.ok() ? rules_.MatchAddress(*literal, port) : rules_.MatchName(host, port);
  switch (match.verdict) {
    case HostVerdict::kAllowed: return {EgressVerdict::kAllowed, "--allow-host " + match.rule->Describe()};
    case HostVerdict::kDenied: return {EgressVerdict::kDenied, "--deny-host " + match.rule->Describe()};
    case HostVerdict::kNotListed: break;
  }
  return {EgressVerdict::kDenied, "not in --allow-host", EgressBasis::kNotListed};
}

std::vector<Address> InterfaceAddresses() {
  std::vector<Address> addresses;
  struct ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return addresses;
  for (struct ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (std::optional<Address> address = AddressOfSockaddr(entry->ifa_addr)) addresses.push_back(*address);
  }
  ::freeifaddrs(list);
  return addresses;
}

Result<void> HostAllowlist::CheckAddress(const Address& address) const {
  if (MutantActive(Mutant::kEgressAddressCheck)) return {};
  HostMatch match = rules_.MatchAddress(address, 0);
  if (match.verdict == HostVerdict::kDenied) {
    return Error(ErrorKind::kDenied, address.ToString() + " is refused by --deny-host " + match.rule->Describe());
  }
  CORRAL_TRY(CheckDestination(address, private_ranges_));
  // A range the user allowed may hold this host's own addresses: those only
  // when named alone.
  Classification classification = ClassifyAddress(address);
  const Address judged = classification.embedded ? *classification.embedded : Unmapped(address);
  // Every loopback address is this host's, not only those an interface
  // lists: 127.0.0.2 reaches a service bound to 127.0.0.1's wildcard too.
  std::vector<Address> own = host_addresses_ ? host_addresses_() : std::vector<Address>{};
  const bool loopback = ClassifyAddress(judged).range == AddressRange::kLoopback && !MutantActive(Mutant::kEgressLoopbackOwn);
  if (loopback || std::find(own.begin(), own.end(), judged) != own.end() ||
      std::find(own.begin(), own.end(), address) != own.end()) {
    bool named_alone = std::any_of(private_ranges_.begin(), private_ranges_.end(), [&](const Cidr& range) {
      return range.prefix_length == judged.bit_count() && range.Contains(judged);
    });
    if (!named_alone) {
      return Error(ErrorKind::kDenied, address.ToString() +
                                           " is an address of this host's own, where every service listening on all "
                                           "addresses answers; --allow-private " + judged.ToString() + "/" +
                                           std::to_string(judged.bit_count()) + " allows it");
    }
  }
  return {};
}

}  // namespace corral
