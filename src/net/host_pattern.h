// A host rule as written on the command line, and the set of them that
// decides whether the network proxy may reach a host:
//
//   --allow-host PATTERN[:PORT[,PORT...]]    (ports 80 and 443 when none is given)
//   --deny-host PATTERN                      (every port)
//
// PATTERN is one of
//   - a DNS name, "registry.npmjs.org" (case-insensitive, kept lowercase,
//     one trailing dot dropped; labels of 1 to 63 of [a-z0-9-], neither
//     starting nor ending with '-', '_' only as a label's first character;
//     at most 253 characters; a last label that is a number, decimal or
//     0x hex, is refused, as resolvers read "10.1" and "0x7f000001" as
//     addresses);
//   - "*.SUFFIX": every name strictly below SUFFIX ("*.example.com" matches
//     "a.example.com" and "a.b.example.com", not "example.com");
//   - an IPv4 or IPv6 address, "10.0.0.5", "::1" (in brackets when ports
//     follow: "[::1]:8080");
//   - a CIDR range, "10.1.0.0/16", "fd00::/8" ("[fd00::/8]:443"), with no
//     bits set past its prefix.
// An IPv4-mapped IPv6 address or range (::ffff:10.0.0.5) is kept as its IPv4
// form. An allow rule too broad to mean one service is refused: "*", "*.com"
// (a top-level domain), "*.co.uk" (a common public suffix, public_suffix.h),
// an IPv4 range wider than /8, an IPv6 range wider than /16, and an IPv6
// range overlapping a prefix whose addresses carry IPv4 addresses
// (destination.h: ::ffff:0:0/96, ::/96, 64:ff9b::/96, 2002::/16) that
// carries an IPv4 range wider than /8 there (so it is /104 or narrower in a
// /96 prefix, /24 or narrower in 2002::/16; "[64:ff9b::/96]" and "[::/16]"
// are refused), or any range overlapping the local-use NAT64 prefix
// 64:ff9b:1::/48, whose IPv4 part cannot be read (one address there is not a
// range, and is taken). A deny rule may be that broad ("--deny-host *.ru"):
// it only ever closes. A refusal is ErrorKind::kUsage and starts with the
// flag and the rule as written.
//
// In a HostRuleSet a deny rule wins over every allow rule. A name is matched
// against name rules only and an address against address rules only; an
// IPv4-mapped address is matched as its IPv4 address, and an IPv6 rule never
// matches an IPv4 address, whatever its width. A deny rule is judged also
// against the IPv4 address an IPv4-compatible, NAT64 or 6to4 address carries
// (ClassifyAddress's `embedded`), so "--deny-host 1.2.3.0/24" denies
// 64:ff9b::102:304, 2002:102:304::1 and ::102:304 as well. An IPv4 allow
// rule does not match those forms: a 6to4 address reaches a host behind the
// carried IPv4 router, not the router, and a NAT64 or IPv4-compatible one
// reaches the IPv4 address only if the network translates that prefix; allow
// the IPv6 form by its own rule, or the host by name. (A Teredo address, and
// a 64:ff9b:1::/48 one outside its /96 layout, carries no address read here;
// CheckDestination refuses them outright.)
//
//   HostRuleSet rules;
//   CORRAL_ASSIGN_OR_RETURN(HostRule npm, ParseHostRule("*.npmjs.org:443", HostRuleKind::kAllow));
//   rules.Add(npm);
//   HostMatch match = rules.MatchName("registry.npmjs.org", 443);   // kAllowed, by npm
//   std::string shown = match.rule->Describe();                      // "*.npmjs.org:443"
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "net/address.h"

namespace corral {

enum class HostRuleKind { kAllow, kDeny };

enum class HostPatternForm { kExactName, kWildcardName, kAddress, kAddressRange };

// "--allow-host" or "--deny-host".
std::string_view HostRuleFlag(HostRuleKind kind);

struct HostRule {
  HostRuleKind kind = HostRuleKind::kAllow;
  HostPatternForm form = HostPatternForm::kExactName;
  // kExactName: the name; kWildcardName: the suffix after "*.". Empty for
  // the address forms.
  std::string name;
  // kAddress: the address as a /32 or /128 range; kAddressRange: the range.
  // None for the name forms.
  std::optional<Cidr> range;
  // Sorted and distinct; empty for a deny rule, which holds for every port.
  std::vector<uint16_t> ports;

  // The canonical pattern, ports after it for an allow rule:
  // "example.com:80,443", "*.example.com:443", "[::1]:8080",
  // "10.1.0.0/16:443", "[fd00::/8]:80,443"; for a deny rule "example.com",
  // "::1". ParseHostRule gives this same rule back from it.
  std::string Describe() const;

  bool operator==(const HostRule&) const = default;
};

Result<HostRule> ParseHostRule(std::string_view text, HostRuleKind kind);

// A host name as the rules compare it: lowercase, without its trailing dot;
// or why the text is no host name (an empty label, a character outside
// a-z 0-9 - _, over 253 characters, a numeric last label).
Result<std::string> CanonicalHostName(std::string_view text);

enum class HostVerdict { kAllowed, kDenied, kNotListed };

struct HostMatch {
  HostVerdict verdict = HostVerdict::kNotListed;
  // The rule that decided: the first deny rule matching, else the first
  // allow rule matching with the port; none for kNotListed.
  std::optional<HostRule> rule;
};

class HostRuleSet {
 public:
  // Among the allow rules or the deny rules, by its kind.
  void Add(HostRule rule);

  const std::vector<HostRule>& allow_rules() const { return allow_rules_; }
  const std::vector<HostRule>& deny_rules() const { return deny_rules_; }

  // `name` as a client sent it (any case, a trailing dot or not). A string
  // that is not a valid name, an address among them, is never listed.
  HostMatch MatchName(std::string_view name, uint16_t port) const;
  HostMatch MatchAddress(const Address& address, uint16_t port) const;

 private:
  std::vector<HostRule> allow_rules_;
  std::vector<HostRule> deny_rules_;
};

}  // namespace corral
