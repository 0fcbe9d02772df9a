// The egress rules of a policy, read from the text of --allow-host,
// --deny-host, --allow-private and --allow-local (and their config keys):
// what corral's proxy (net/egress_proxy.h) lets the command reach under
// --network none; and of --allow-port and --allow-dns: TCP ports open to
// every host from the host's own network, with the names that resolve.
//
// One reader for every front end: a config file checks each element with
// CheckEgressListElement (so a bad one is refused at its file and line), the
// PolicyBuilder reads the whole set with ReadEgressRules. A refusal is
// kUsage and starts with the flag and the text as given. The rules need the
// sandbox's own empty network namespace, so they are refused with --network
// all (every host is reachable there already), and --allow-private without
// an --allow-host rule is refused as doing nothing. An --allow-local port is
// 1 to 65535 and none of corral's own on the sandbox's lo (53, 1080, 3128),
// at most kMaxLocalPorts of them.
//
// --allow-port takes the host's network instead of the empty namespace, so
// it is refused with the proxy's rules (--allow-host, --allow-local) and
// with --network all; each port is 1 to 65535, at most kMaxConnectPorts.
// An --allow-dns name is an exact host name (not an address, no pattern),
// at most kMaxDnsNames, and only with --allow-port.
//
//   CORRAL_ASSIGN_OR_RETURN(EgressRules rules, ReadEgressRules({allow, deny, ranges, local, ports, names}, NetworkMode::kNone));
//   if (rules.active()) { ... the plan asks for the proxy's listeners ... }
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "net/address.h"
#include "net/host_pattern.h"
#include "policy/spec_fields.h"

namespace corral {

struct EgressRules {
  HostRuleSet hosts;
  std::vector<Cidr> private_ranges;
  // Each rule's canonical text, as explain and the trail show it.
  std::vector<std::string> allow_text;
  std::vector<std::string> deny_text;
  std::vector<std::string> private_text;
  // --allow-local: ports of the host's loopback, each at the same port of
  // the sandbox's, in the order given, once each.
  std::vector<uint16_t> local_ports;
  // --allow-port: TCP ports the command connects to on every host, from the
  // host's network; --allow-dns: the names that resolve there (normal form).
  std::vector<uint16_t> connect_ports;
  std::vector<std::string> dns_names;

  // True when an --allow-host rule asks for the proxy.
  bool active() const { return !hosts.allow_rules().empty(); }
  // True when the command shares the host's network with TCP ports open.
  bool host_ports() const { return !connect_ports.empty(); }
};

inline constexpr int kMaxDnsNames = 16;

// One element of a kAllowHost, kDenyHost or kPrivateRange list.
Result<void> CheckEgressListElement(ListElement element, std::string_view text);

struct EgressLists {
  const std::vector<std::string>& allow_host;
  const std::vector<std::string>& deny_host;
  const std::vector<std::string>& allow_private;
  const std::vector<std::string>& allow_local;
  const std::vector<std::string>& allow_port;
  const std::vector<std::string>& allow_dns;
};

Result<EgressRules> ReadEgressRules(const EgressLists& lists, NetworkMode network);

}  // namespace corral
