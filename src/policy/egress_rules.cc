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

Result<uint16_t> ReadConnectPort(std::string_view text) {
  Result<uint16_t> port = ParsePort(text);
  if (!port.ok()) return Error(ErrorKind::kUsage, "--allow-port " + std::string(text) + ": not a port (1 to 65535)");
  return port;
}

Result<std::string> ReadDnsName(std::string_view text) {
  const std::string flag = "--allow-dns " + std::string(text);
  if (ParseAddress(text).ok() || (text.size() > 2 && text.front() == '[')) {
    return Error(ErrorKind::kUsage, flag + ": an address needs no lookup; --allow-dns takes a host name");
  }
  Result<std::string> name = NormalHostName(text);
  if (!name.ok()) {
    return Error(ErrorKind::kUsage, flag + ": not a host name (an exact name: letters, digits, '-', '_' and '.'; no "
                                           "pattern, no port)");
  }
  return name;
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
    case ListElement::kConnectPort: {
      CORRAL_TRY(ReadConnectPort(text));
      return {};
    }
    case ListElement::kDnsName: {
      CORRAL_TRY(ReadDnsName(text));
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
  for (const std::string& text : lists.allow_port) {
    CORRAL_ASSIGN_OR_RETURN(uint16_t port, ReadConnectPort(text));
    if (std::find(rules.connect_ports.begin(), rules.connect_ports.end(), port) != rules.connect_ports.end()) continue;
    if (rules.connect_ports.size() == static_cast<size_t>(kMaxConnectPorts)) {
      return Error(ErrorKind::kUsage,
                   "--allow-port " + text + ": at most " + std::to_string(kMaxConnectPorts) + " ports can be opened");
    }
    rules.connect_ports.push_back(port);
  }
  for (const std::string& text : lists.allow_dns) {
    CORRAL_ASSIGN_OR_RETURN(std::string name, ReadDnsName(text));
    if (std::find(rules.dns_names.begin(), rules.dns_names.end(), name) != rules.dns_names.end()) continue;
    if (rules.dns_names.size() == static_cast<size_t>(kMaxDnsNames)) {
      return Error(ErrorKind::kUsage,
                   "--allow-dns " + text + ": at most " + std::to_string(kMaxDnsNames) + " names can resolve");
    }
    rules.dns_names.push_back(std::move(name));
  }
  if (!lists.allow_port.empty()) {
    if (network == NetworkMode::kAll) {
      return Error(ErrorKind::kUsage,
                   "--allow-port opens TCP ports in a sandbox that otherwise has no network; with --network all "
                   "every port is open already. Drop one of them");
    }
    if (!allow_host.empty() || !lists.allow_local.empty()) {
      return Error(ErrorKind::kUsage,
                   "--allow-port shares the host's network, while --allow-host and --allow-local need the "
                   "sandbox's own empty one (the proxy must be its only way out); use one or the other");
    }
  }
  if (!lists.allow_dns.empty() && lists.allow_port.empty()) {
    return Error(ErrorKind::kUsage,
                 "--allow-dns " + lists.allow_dns.front() +
                     ": names resolve for --allow-port, and there is none (under --allow-host the proxy "
                     "resolves the names it allows); add --allow-port");
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
