#include "policy/egress_rules.h"

#include <algorithm>

#include "base/sandbox_ports.h"
#include "net/destination.h"
#include "net/host_port.h"

namespace corral {
namespace {

Result<uint16_t> ReadLocalPort(std::string_view text) {
  const std::string flag = "--allow-local " + std::string(text);
  Result<uint16_t> port = ParsePort(text);
  if (!port.ok()) return Error(ErrorKind::kUsage, flag + ": not a port (1 to 65535)");
  for (int own : {kSandboxDnsPort, kSandboxHttpProxyPort, kSandboxSocksPort}) {
    if (*port == own) {
      return Error(ErrorKind::kUsage, flag + ": corral's own services use that port of the sandbox's 127.0.0.1 (the "
                                             "name server on 53, the proxy on 1080 and 3128)");
    }
  }
  return port;
}

}  // namespace

Result<void> CheckEgressListElement(ListElement element, std::string_view text) {
  switch (element) {
    case ListElement::kAllowHost: {
      CORRAL_TRY(ParseHostRule(text, HostRuleKind::kAllow));
      return {};
    }
    case ListElement::kDenyHost: {
      CORRAL_TRY(ParseHostRule(text, HostRuleKind::kDeny));
      return {};
    }
    case ListElement::kPrivateRange: {
      CORRAL_TRY(ParseAllowedPrivateRange(text));
      return {};
    }
    case ListElement::kLocalPort: {
      CORRAL_TRY(ReadLocalPort(text));
      return {};
    }
    default:
      return Error(ErrorKind::kInternal, "not a list of egress rules");
  }
}

Result<EgressRules> ReadEgressRules(const EgressLists& lists, NetworkMode network) {
  const std::vector<std::string>& allow_host = lists.allow_host;
  const std::vector<std::string>& deny_host = lists.deny_host;
  const std::vector<std::string>& allow_private = lists.allow_private;
  EgressRules rules;
  auto add_host = [&rules](const std::string& text, HostRuleKind kind, std::vector<std::string>& shown) -> Result<void> {
    CORRAL_ASSIGN_OR_RETURN(HostRule rule, ParseHostRule(text, kind));
    std::string canonical = rule.Describe();
    if (std::find(shown.begin(), shown.end(), canonical) != shown.end()) return {};  // once each
    shown.push_back(std::move(canonical));
    rules.hosts.Add(std::move(rule));
    return {};
  };
  for (const std::string& text : allow_host) CORRAL_TRY(add_host(text, HostRuleKind::kAllow, rules.allow_text));
  for (const std::string& text : deny_host) CORRAL_TRY(add_host(text, HostRuleKind::kDeny, rules.deny_text));
  for (const std::string& text : allow_private) {
    CORRAL_ASSIGN_OR_RETURN(Cidr range, ParseAllowedPrivateRange(text));
    std::string canonical = range.ToString();
    if (std::find(rules.private_text.begin(), rules.private_text.end(), canonical) != rules.private_text.end()) continue;
    rules.private_text.push_back(std::move(canonical));
    rules.private_ranges.push_back(range);
  }
  for (const std::string& text : lists.allow_local) {
    CORRAL_ASSIGN_OR_RETURN(uint16_t port, ReadLocalPort(text));
    if (std::find(rules.local_ports.begin(), rules.local_ports.end(), port) != rules.local_ports.end()) continue;
    if (rules.local_ports.size() == static_cast<size_t>(kMaxLocalPorts)) {
      return Error(ErrorKind::kUsage, "--allow-local " + text + ": at most " + std::to_string(kMaxLocalPorts) +
                                          " ports of the host's loopback can be forwarded");
    }
    rules.local_ports.push_back(port);
  }
  if (network == NetworkMode::kAll && !lists.allow_local.empty()) {
    return Error(ErrorKind::kUsage,
                 "--allow-local forwards one port of the host's loopback into the empty network namespace of "
                 "--network none; with --network all the host's loopback is reachable already. Drop one of them");
  }
  if (network == NetworkMode::kAll && (!allow_host.empty() || !allow_private.empty())) {
    return Error(ErrorKind::kUsage,
                 "--allow-host and --allow-private narrow --network none to the places they name; with --network all "
                 "every host is reachable already. Drop --network all, or the host rules");
  }
  if (!allow_private.empty() && allow_host.empty()) {
    return Error(ErrorKind::kUsage,
                 "--allow-private " + allow_private.front() +
                     ": it only widens what --allow-host rules may reach, and there is none; add --allow-host");
  }
  return rules;
}

}  // namespace corral
