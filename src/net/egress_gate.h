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
//
// A gate that may put a refusal to someone (net/asking_gate.h) answers
// Decide with kDenied and the basis kAsk: the connection is held, not
// refused, and the proxy calls Ask, whose answer comes later, on any
// thread. A proxy that knew nothing of asking would refuse it: kAsk is a
// refusal until someone answers.
//
//   EgressRuling ruling = gate.Decide(host, port);
//   if (ruling.basis == EgressBasis::kAsk) gate.Ask(host, port, [](EgressRuling answer) { ... });
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"
#include "net/address.h"

namespace corral {

enum class EgressVerdict { kAllowed, kDenied };

// What the ruling rests on.
enum class EgressBasis {
  kRule,       // a rule of the lists, or corral's own refusal
  kNotListed,  // no rule names the place (the allowlist's "not in --allow-host")
  kAsk,        // not listed, and someone may be asked: held until Ask answers
  kAnswered,   // someone answered (answered_by, scope)
};

// What an answer allowed: this one connection, this host and port for the
// rest of the run, or for the rest of the session.
enum class EgressScope { kConnection, kRun, kSession };
std::string_view EgressScopeName(EgressScope scope);  // "connection", "run", "session"

struct EgressRuling {
  EgressRuling() = default;
  EgressRuling(EgressVerdict verdict, std::string rule, EgressBasis basis = EgressBasis::kRule)
      : verdict(verdict), rule(std::move(rule)), basis(basis) {}

  EgressVerdict verdict = EgressVerdict::kDenied;
  // The rule that decided, for the trail and the refusal's line: "--allow-host
  // *.npmjs.org:443", "--deny-host evil.test", "not in --allow-host".
  std::string rule;
  EgressBasis basis = EgressBasis::kRule;
  // kAnswered: who answered ("the approval channel", "the terminal", "MCP
  // elicitation", "the session log") and, when allowed, for what.
  std::string answered_by;
  EgressScope scope = EgressScope::kConnection;
};

class EgressGate {
 public:
  virtual ~EgressGate() = default;
  virtual EgressRuling Decide(const std::string& host, uint16_t port) const = 0;
  // Ok, or a kDenied Error whose message names the address and its range.
  virtual Result<void> CheckAddress(const Address& address) const = 0;
  // Only after Decide said kAsk: `answered` is called once, on any thread,
  // with the answer (kAllowed or kDenied, basis kAnswered). A gate that
  // never asks refuses.
  virtual void Ask(const std::string& host, uint16_t port, std::function<void(EgressRuling)> answered) const {
    (void)host;
    (void)port;
    answered(EgressRuling(EgressVerdict::kDenied, "not in --allow-host; nobody to ask", EgressBasis::kAnswered));
  }
};

}  // namespace corral
