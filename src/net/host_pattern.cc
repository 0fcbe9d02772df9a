#include "net/host_pattern.h"

#include <algorithm>
#include <iterator>

#include "net/destination.h"
#include "net/public_suffix.h"
#include "net/user_text.h"

namespace corral {
namespace {

constexpr size_t kMaxName = 253;
constexpr size_t kMaxLabel = 63;
constexpr int kShortestIpv4Prefix = 8;   // an allow rule's IPv4 range is /8 or narrower
constexpr int kShortestIpv6Prefix = 16;  // and its IPv6 range /16 or narrower
constexpr uint16_t kDefaultPorts[] = {80, 443};

bool Digit(char c) { return c >= '0' && c <= '9'; }

bool HexDigit(char c) { return Digit(c) || (c >= 'a' && c <= 'f'); }

// Whether resolvers would read a name ending in `label` as an IPv4 address
// ("10.1", "0x7f000001"): a last label of decimal digits, or "0x" and hex.
bool NumericLastLabel(std::string_view label) {
  if (label.substr(0, 2) == "0x") return std::all_of(label.begin() + 2, label.end(), HexDigit);
  return std::all_of(label.begin(), label.end(), Digit);
}

Error Refused(const std::string& why) { return Error(ErrorKind::kUsage, why); }

// Why `label` (already lowercase) is not a DNS label, or nothing.
std::optional<std::string> LabelProblem(std::string_view label) {
  if (label.empty()) return "an empty label (two dots in a row, or a leading dot)";
  if (label.size() > kMaxLabel) return "a label longer than 63 characters";
  for (size_t i = 0; i < label.size(); ++i) {
    char c = label[i];
    if ((c >= 'a' && c <= 'z') || Digit(c) || c == '-') continue;
    if (c == '_' && i == 0) continue;
    if (c == '_') return "'_' only as a label's first character";
    if (c == '*') return "'*' only as the whole first label, as in *.example.com";
    return "a character other than a-z, 0-9, '-' and '_' (an international name is written in its xn-- form)";
  }
  if (label.front() == '-' || label.back() == '-') return "a label that starts or ends with '-'";
  return std::nullopt;
}

// The name lowercase and without its trailing dot, or why it is not a name.
Result<std::string> CanonicalName(std::string_view text) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty()) return Refused("an empty name");
  if (text.size() > kMaxName) return Refused("a name longer than 253 characters");
  std::string name(text);
  for (char& c : name) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  std::vector<std::string_view> labels = Split(name, '.');
  for (std::string_view label : labels) {
    if (std::optional<std::string> problem = LabelProblem(label)) return Refused(*problem);
  }
  if (NumericLastLabel(labels.back())) {
    return Refused("its last label is a number, which resolvers read as an IPv4 address (write one as a.b.c.d)");
  }
  return name;
}

Result<std::vector<uint16_t>> ParsePorts(std::string_view list) {
  if (list.empty()) return Refused("no port after ':'");
  std::vector<uint16_t> ports;
  for (std::string_view item : Split(list, ',')) {
    if (item.empty()) return Refused("an empty port in the list");
    bool number = item.size() <= 5 && item[0] != '0' && std::all_of(item.begin(), item.end(), Digit);
    int value = 0;
    for (char c : number ? item : std::string_view()) value = value * 10 + (c - '0');
    if (!number || value > 65535) {
      return Refused("port '" + PrintableText(item) + "' is not a number from 1 to 65535 (without leading zeros)");
    }
    ports.push_back(static_cast<uint16_t>(value));
  }
  std::sort(ports.begin(), ports.end());
  ports.erase(std::unique(ports.begin(), ports.end()), ports.end());
  return ports;
}

// An IPv6 range inside ::ffff:0:0/96 as the IPv4 range it stands for.
Cidr UnmappedRange(const Cidr& range) {
  Address unmapped = Unmapped(range.base);
  if (unmapped == range.base || range.prefix_length < 96) return range;
  return Cidr{unmapped, range.prefix_length - 96};
}

// Why an allow rule for the IPv6 `range` would reach too many IPv4 addresses
// through a form that carries them (destination.h), or nothing.
std::optional<std::string> CarriedBreadthProblem(const Cidr& range) {
  std::vector<CarriedRange> ranges = CarriedIpv4Ranges(range);
  auto form = [](const CarriedRange& carried) {
    return std::string(EmbeddingName(carried.embedding)) + " addresses (" + carried.carrier.ToString() + ")";
  };
  // An unreadable prefix first: refused at any width, whatever else the range covers.
  auto unread = std::find_if(ranges.begin(), ranges.end(), [](const CarriedRange& c) { return !c.ipv4; });
  if (unread != ranges.end()) {
    return "it covers local-use " + form(*unread) + ", whose IPv4 address cannot be read without the network's "
           "layout; name the host, or one address there";
  }
  for (const CarriedRange& carried : ranges) {
    if (carried.ipv4->prefix_length >= kShortestIpv4Prefix) continue;
    int narrowest = carried.ipv4_offset + kShortestIpv4Prefix;
    return "it covers " + form(carried) + " carrying " + carried.ipv4->ToString() + ", a /" +
           std::to_string(carried.ipv4->prefix_length) + " IPv4 range, too broad; an IPv4 range is /" +
           std::to_string(kShortestIpv4Prefix) + " or narrower, so a range in " + carried.carrier.ToString() +
           " is /" + std::to_string(narrowest) + " or narrower";
  }
  return std::nullopt;
}

// Why an allow rule for `range` would be too broad, or nothing.
std::optional<std::string> RangeBreadthProblem(const Cidr& range) {
  bool ipv4 = range.base.family() == AddressFamily::kIpv4;
  if (range.prefix_length == 0) {
    return std::string("it matches every ") + (ipv4 ? "IPv4" : "IPv6") + " address";
  }
  int narrowest = ipv4 ? kShortestIpv4Prefix : kShortestIpv6Prefix;
  if (range.prefix_length >= narrowest) return ipv4 ? std::nullopt : CarriedBreadthProblem(range);
  return "a /" + std::to_string(range.prefix_length) + " range is too broad; an " + (ipv4 ? "IPv4" : "IPv6") +
         " range is /" + std::to_string(narrowest) + " or narrower";
}

// Why an allow rule for "*.suffix" would be too broad, or nothing.
std::optional<std::string> WildcardBreadthProblem(const std::string& suffix) {
  if (suffix.find('.') == std::string::npos) {
    return "it covers the whole top-level domain " + suffix + "; name a domain below it (*.example." + suffix + ")";
  }
  if (IsCommonPublicSuffix(suffix)) {
    return suffix + " is a public suffix, whose names belong to unrelated owners; name a domain below it (*.example." +
           suffix + ")";
  }
  return std::nullopt;
}

struct SplitRule {
  std::string_view pattern;
  std::optional<std::string_view> ports;  // the text after the ':', when there is one
};

Result<SplitRule> SplitPorts(std::string_view text) {
  SplitRule split{text, std::nullopt};
  if (text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Refused("a '[' without its ']'");
    split.pattern = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty() && rest.front() != ':') return Refused("only ':PORTS' may follow ']'");
    if (!rest.empty()) split.ports = rest.substr(1);
    if (split.pattern.find(':') == std::string_view::npos) return Refused("brackets hold an IPv6 address or range only");
    return split;
  }
  // Two colons or more: an IPv6 address or range, which takes ports only in brackets.
  if (std::count(text.begin(), text.end(), ':') == 1) {
    size_t colon = text.find(':');
    split.pattern = text.substr(0, colon);
    split.ports = text.substr(colon + 1);
  }
  return split;
}

// A rule of `kind` with the form and the name or range `pattern` gives; no ports yet.
Result<HostRule> ParsePattern(std::string_view pattern, HostRuleKind kind) {
  HostRule rule;
  rule.kind = kind;
  if (pattern.empty()) return Refused("an empty pattern");
  if (pattern == "*") return Refused("'*' matches every host; name the hosts, or *.example.com for one domain's names");
  if (pattern.find('/') != std::string_view::npos) {
    CORRAL_ASSIGN_OR_RETURN(Cidr range, ParseCidr(pattern));
    rule.form = HostPatternForm::kAddressRange;
    rule.range = UnmappedRange(range);
    return rule;
  }
  bool numeric = std::all_of(pattern.begin(), pattern.end(), [](char c) { return Digit(c) || c == '.'; });
  if (numeric || pattern.find(':') != std::string_view::npos) {
    CORRAL_ASSIGN_OR_RETURN(Address address, ParseAddress(pattern));
    rule.form = HostPatternForm::kAddress;
    rule.range = HostRange(Unmapped(address));
    return rule;
  }
  bool wildcard = pattern.substr(0, 2) == "*.";
  if (wildcard) pattern.remove_prefix(2);
  if (wildcard && (pattern.empty() || pattern == ".")) return Refused("no suffix after '*.'");
  CORRAL_ASSIGN_OR_RETURN(rule.name, CanonicalName(pattern));
  rule.form = wildcard ? HostPatternForm::kWildcardName : HostPatternForm::kExactName;
  return rule;
}

// Why an allow rule is too broad, or nothing.
std::optional<std::string> BreadthProblem(const HostRule& rule) {
  if (rule.form == HostPatternForm::kWildcardName) return WildcardBreadthProblem(rule.name);
  if (rule.form == HostPatternForm::kAddressRange) return RangeBreadthProblem(*rule.range);
  return std::nullopt;
}

bool NameMatches(const HostRule& rule, const std::string& name) {
  if (rule.form == HostPatternForm::kExactName) return name == rule.name;
  if (rule.form != HostPatternForm::kWildcardName || name.size() <= rule.name.size() + 1) return false;
  size_t dot = name.size() - rule.name.size() - 1;
  return name[dot] == '.' && name.compare(dot + 1, std::string::npos, rule.name) == 0;
}

bool TakesPort(const HostRule& rule, uint16_t port) {
  return std::binary_search(rule.ports.begin(), rule.ports.end(), port);
}

template <typename Denies, typename Allows>
HostMatch Decide(const std::vector<HostRule>& deny_rules, const std::vector<HostRule>& allow_rules, uint16_t port,
                 Denies denies, Allows allows) {
  for (const HostRule& rule : deny_rules) {
    if (denies(rule)) return HostMatch{HostVerdict::kDenied, rule};
  }
  for (const HostRule& rule : allow_rules) {
    if (allows(rule) && TakesPort(rule, port)) return HostMatch{HostVerdict::kAllowed, rule};
  }
  return HostMatch{};
}

}  // namespace

Result<std::string> CanonicalHostName(std::string_view text) { return CanonicalName(text); }

std::string_view HostRuleFlag(HostRuleKind kind) {
  return kind == HostRuleKind::kAllow ? "--allow-host" : "--deny-host";
}

std::string HostRule::Describe() const {
  std::string pattern;
  switch (form) {
    case HostPatternForm::kExactName: pattern = name; break;
    case HostPatternForm::kWildcardName: pattern = "*." + name; break;
    case HostPatternForm::kAddress: pattern = range ? range->base.ToString() : ""; break;
    case HostPatternForm::kAddressRange: pattern = range ? range->ToString() : ""; break;
  }
  if (ports.empty()) return pattern;
  if (pattern.find(':') != std::string::npos) pattern = "[" + pattern + "]";
  for (size_t i = 0; i < ports.size(); ++i) pattern += (i == 0 ? ":" : ",") + std::to_string(ports[i]);
  return pattern;
}

Result<HostRule> ParseHostRule(std::string_view text, HostRuleKind kind) {
  std::string context = std::string(HostRuleFlag(kind)) + " " + PrintableText(text) + ": ";
  auto refuse = [&context](const std::string& why) { return Refused(context + why); };
  if (text.empty()) return refuse("an empty pattern");
  Result<SplitRule> split = SplitPorts(text);
  if (!split.ok()) return refuse(split.error().message());
  Result<HostRule> parsed = ParsePattern(split->pattern, kind);
  if (!parsed.ok()) return refuse(parsed.error().message());
  HostRule rule = std::move(parsed).value();
  if (kind == HostRuleKind::kDeny) {
    if (split->ports) return refuse("a deny rule takes no ports: it denies every port of the host");
    return rule;
  }
  if (std::optional<std::string> broad = BreadthProblem(rule)) return refuse(*broad);
  if (!split->ports) {
    rule.ports.assign(std::begin(kDefaultPorts), std::end(kDefaultPorts));
    return rule;
  }
  Result<std::vector<uint16_t>> ports = ParsePorts(*split->ports);
  if (!ports.ok()) return refuse(ports.error().message());
  rule.ports = std::move(ports).value();
  return rule;
}

void HostRuleSet::Add(HostRule rule) {
  (rule.kind == HostRuleKind::kAllow ? allow_rules_ : deny_rules_).push_back(std::move(rule));
}

HostMatch HostRuleSet::MatchName(std::string_view name, uint16_t port) const {
  Result<std::string> canonical = CanonicalName(name);
  if (!canonical.ok()) return HostMatch{};
  auto matches = [&canonical](const HostRule& rule) { return NameMatches(rule, *canonical); };
  return Decide(deny_rules_, allow_rules_, port, matches, matches);
}

HostMatch HostRuleSet::MatchAddress(const Address& address, uint16_t port) const {
  Address unmapped = Unmapped(address);
  // The IPv4 address an IPv4-mapped, IPv4-compatible, NAT64 or 6to4 address
  // carries: a deny rule judges it too, an allow rule only the mapped form.
  std::optional<Address> carried = ClassifyAddress(address).embedded;
  auto holds = [](const HostRule& rule, const Address& judged) { return rule.range && rule.range->Contains(judged); };
  auto allows = [&](const HostRule& rule) { return holds(rule, unmapped); };
  auto denies = [&](const HostRule& rule) { return holds(rule, unmapped) || (carried && holds(rule, *carried)); };
  return Decide(deny_rules_, allow_rules_, port, denies, allows);
}

}  // namespace corral
