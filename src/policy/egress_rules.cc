#include "policy/egress_rules.h"

#include <algorithm>

#include "net/destination.h"

namespace corral {

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
    default:
      return Error(ErrorKind::kInternal, "not a list of egress rules");
  }
}

Result<EgressRules> ReadEgressRules(const std::vector<std::string>& allow_host,
                                    const std::vector<std::string>& deny_host,
                                    const std::vector<std::string>& allow_private, NetworkMode network) {
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
