// The property the host rule reader (host_pattern.h) must hold on any text,
// shared by the libFuzzer harness (host_pattern_fuzz.cc) and its
// deterministic mutation test (host_pattern_fuzz_test.cc), for both kinds:
//   - it never crashes or reads out of bounds (sanitizers judge that);
//   - a refusal is kUsage, starts "--allow-host " or "--deny-host " as the
//     kind says, and is printable ASCII;
//   - an accepted rule is of the kind asked; a name form has a name and no
//     range, an address form a range and no name; an allow rule's ports are
//     sorted, distinct and not 0, a deny rule has none;
//   - its Describe() is printable ASCII and reads back as the same rule,
//     whose Describe() is the same text;
//   - an allow rule matches what it names (its name, a name just below its
//     suffix when one fits in 253 characters, its base address) on its first
//     port, and a deny rule denies it.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>

#include "net/host_pattern.h"

namespace corral::testing {

inline bool PrintableAsciiText(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

inline std::optional<std::string> CheckMatchesItself(const HostRule& rule) {
  if (rule.form == HostPatternForm::kWildcardName && rule.name.size() + 2 > 253) return std::nullopt;  // no name below
  HostRuleSet set;
  set.Add(rule);
  uint16_t port = rule.ports.empty() ? 443 : rule.ports.front();
  HostMatch match = rule.form == HostPatternForm::kExactName     ? set.MatchName(rule.name, port)
                    : rule.form == HostPatternForm::kWildcardName ? set.MatchName("a." + rule.name, port)
                                                                  : set.MatchAddress(rule.range->base, port);
  HostVerdict want = rule.kind == HostRuleKind::kAllow ? HostVerdict::kAllowed : HostVerdict::kDenied;
  if (match.verdict != want || !match.rule || *match.rule != rule) return "a rule that does not match what it names";
  return std::nullopt;
}

inline std::optional<std::string> CheckHostRuleReader(std::string_view text, HostRuleKind kind) {
  Result<HostRule> rule = ParseHostRule(text, kind);
  if (!rule.ok()) {
    const std::string& message = rule.error().message();
    std::string flag = std::string(HostRuleFlag(kind)) + " ";
    if (rule.error().kind() != ErrorKind::kUsage) return "a refusal that is not kUsage: " + message;
    if (message.rfind(flag, 0) != 0) return "a refusal not naming the flag: " + message;
    if (!PrintableAsciiText(message)) return "a refusal message that is not printable ASCII";
    return std::nullopt;
  }
  if (rule->kind != kind) return "a rule of the other kind";
  bool name_form = rule->form == HostPatternForm::kExactName || rule->form == HostPatternForm::kWildcardName;
  if (name_form != !rule->name.empty() || name_form == rule->range.has_value()) return "a rule with the wrong parts";
  if (kind == HostRuleKind::kDeny ? !rule->ports.empty() : rule->ports.empty()) return "ports of the wrong kind";
  if (!std::is_sorted(rule->ports.begin(), rule->ports.end()) ||
      std::adjacent_find(rule->ports.begin(), rule->ports.end()) != rule->ports.end() ||
      (!rule->ports.empty() && rule->ports.front() == 0)) {
    return "ports not sorted, distinct and from 1";
  }
  std::string described = rule->Describe();
  if (!PrintableAsciiText(described)) return "a Describe() that is not printable ASCII";
  Result<HostRule> again = ParseHostRule(described, kind);
  if (!again.ok()) return "'" + described + "' does not read back: " + again.error().message();
  if (*again != *rule) return "'" + described + "' reads back as another rule";
  if (again->Describe() != described) return "'" + described + "' is described again as '" + again->Describe() + "'";
  return CheckMatchesItself(*rule);
}

}  // namespace corral::testing
