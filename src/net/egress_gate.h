// What the egress proxy (net/egress_proxy.h) asks before it opens a
// connection for the sandbox: may this name and port be reached, and may
// this address, which the name resolved to, be connected to.
//
// Two questions, in that order, for every connection: Decide on the host and
// port exactly as the client named them (a name, or an address literal, in
// the normal form of net/host_port.h), before any lookup, so a name that is
// not allowed is never resolved; then CheckAddress on each address the proxy
// would connect to, so an allowed name that resolves into the host's
// loopback, the LAN or the cloud metadata service is refused too. The proxy
// connects only to an address that passed, and never resolves the name
// again.
//
//   class Allowlist : public EgressGate { ... };  // the rules of --allow-host
//   EgressRuling ruling = gate.Decide("registry.npmjs.org", 443);
//   if (ruling.verdict == EgressVerdict::kAllowed) { resolve; CheckAddress(each); connect; }
//
// Both are called from the proxy's own thread; an implementation must be
// safe to call from another thread than the one that built it (a const,
// immutable object is).
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "net/address.h"

namespace corral {

enum class EgressVerdict { kAllowed, kDenied };

struct EgressRuling {
  EgressVerdict verdict = EgressVerdict::kDenied;
  // The rule that decided, for the trail and the refusal's line: "--allow-host
  // *.npmjs.org:443", "--deny-host evil.test", "not in --allow-host".
  std::string rule;
};

class EgressGate {
 public:
  virtual ~EgressGate() = default;
  virtual EgressRuling Decide(const std::string& host, uint16_t port) const = 0;
  // Ok, or a kDenied Error whose message names the address and its range.
  virtual Result<void> CheckAddress(const Address& address) const = 0;
};

}  // namespace corral
