// The egress gate (net/egress_gate.h) of --allow-host, --deny-host and
// --allow-private: a name or address literal is decided by the host rules
// (a deny rule wins; a place no rule allows is refused as "not in
// --allow-host"), and each address the proxy would connect to must pass
// CheckDestination (net/destination.h: public, or in an --allow-private
// range) and match no deny rule, whatever name led there.
//
//   auto gate = std::make_shared<HostAllowlist>(rules, private_ranges);
//   EgressProxy::Start(std::move(listeners), gate, options);
#pragma once

#include <vector>

#include "net/address.h"
#include "net/egress_gate.h"
#include "net/host_pattern.h"

namespace corral {

class HostAllowlist : public EgressGate {
 public:
  HostAllowlist(HostRuleSet rules, std::vector<Cidr> private_ranges)
      : rules_(std::move(rules)), private_ranges_(std::move(private_ranges)) {}

  EgressRuling Decide(const std::string& host, uint16_t port) const override;
  Result<void> CheckAddress(const Address& address) const override;

 private:
  HostRuleSet rules_;
  std::vector<Cidr> private_ranges_;
};

}  // namespace corral
