// The egress gate (net/egress_gate.h) of --allow-host, --deny-host and
// --allow-private: a name or address literal is decided by the host rules
// (a deny rule wins; a place no rule allows is refused as "not in
// --allow-host"), and each address the proxy would connect to must pass
// CheckDestination (net/destination.h: public, or in an --allow-private
// range) and match no deny rule, whatever name led there. An address of the
// host's own interfaces (a public one too: a service listening on every
// address answers there) is refused unless an --allow-private range names
// it alone (/32, /128); so is every loopback address (127.0.0.0/8, ::1),
// listed by an interface or not. An IPv6 form carrying an IPv4 address is
// judged by that address. The host's addresses are read for each check
// (getifaddrs); a local route for a whole range (AnyIP) is not seen.
//
//   auto gate = std::make_shared<HostAllowlist>(rules, private_ranges);
//   EgressProxy::Start(std::move(listeners), gate, options);
#pragma once

#include <functional>
#include <vector>

#include "net/address.h"
#include "net/egress_gate.h"
#include "net/host_pattern.h"

namespace corral {

// The addresses of this host's interfaces, now (getifaddrs); none when they
// cannot be read.
std::vector<Address> InterfaceAddresses();

class HostAllowlist : public EgressGate {
 public:
  using HostAddresses = std::function<std::vector<Address>()>;

  HostAllowlist(HostRuleSet rules, std::vector<Cidr> private_ranges, HostAddresses host_addresses = InterfaceAddresses)
      : rules_(std::move(rules)), private_ranges_(std::move(private_ranges)), host_addresses_(std::move(host_addresses)) {}

  EgressRuling Decide(const std::string& host, uint16_t port) const override;
  Result<void> CheckAddress(const Address& address) const override;

 private:
  HostRuleSet rules_;
  std::vector<Cidr> private_ranges_;
  HostAddresses host_addresses_;
};

}  // namespace corral
