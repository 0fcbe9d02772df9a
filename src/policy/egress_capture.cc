#include "policy/egress_capture.h"

#include <algorithm>
#include <set>

#include "base/sandbox_ports.h"

namespace corral {

std::vector<uint16_t> CapturedPorts(const EgressRules& rules, size_t most) {
  std::set<uint16_t> ports;
  for (const HostRule& rule : rules.hosts.allow_rules()) {
    if (rule.form != HostPatternForm::kExactName && rule.form != HostPatternForm::kWildcardName) continue;
    for (uint16_t port : rule.ports) {
      if (port == kSandboxDnsPort || port == kSandboxHttpProxyPort || port == kSandboxSocksPort) continue;
      if (std::find(rules.local_ports.begin(), rules.local_ports.end(), port) != rules.local_ports.end()) continue;
      ports.insert(port);
    }
  }
  std::vector<uint16_t> captured(ports.begin(), ports.end());
  if (captured.size() > most) captured.resize(most);
  return captured;
}

bool NameAllowed(const EgressRules& rules, const std::string& name) {
  for (const HostRule& rule : rules.hosts.allow_rules()) {
    if (rule.form != HostPatternForm::kExactName && rule.form != HostPatternForm::kWildcardName) continue;
    for (uint16_t port : rule.ports) {
      if (rules.hosts.MatchName(name, port).verdict == HostVerdict::kAllowed) return true;
    }
  }
  return false;
}

}  // namespace corral
