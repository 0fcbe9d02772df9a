// ParseHostRule on tables of accepted rules (with their canonical text) and
// refused ones (with the sentence's fragment); HostRuleSet's matching of
// names and addresses, ports, and deny winning over allow, also over the
// IPv6 forms that carry an IPv4 address.
#include "net/host_pattern.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "testing/refusal_table.h"

namespace corral {
namespace {

HostRule Rule(std::string_view text, HostRuleKind kind = HostRuleKind::kAllow) {
  Result<HostRule> rule = ParseHostRule(text, kind);
  EXPECT_TRUE(rule.ok()) << text << ": " << rule.error().message();
  return rule.ok() ? *rule : HostRule{};
}

Address Parsed(std::string_view text) {
  Result<Address> address = ParseAddress(text);
  EXPECT_TRUE(address.ok()) << text;
  return address.ok() ? *address : Address::Ipv4({});
}

TEST(HostPattern, AcceptedAllowRulesAndTheirCanonicalText) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"example.com", "example.com:80,443"},
      {"Registry.NPMJS.org.", "registry.npmjs.org:80,443"},
      {"registry", "registry:80,443"},
      {"example.com:443", "example.com:443"},
      {"example.com:8443,443,8443,443", "example.com:443,8443"},
      {"example.com:1,65535", "example.com:1,65535"},
      {"*.example.com", "*.example.com:80,443"},
      {"*.Example.COM.:443", "*.example.com:443"},
      {"*.example.co.uk", "*.example.co.uk:80,443"},
      {"*.pvt.k12.ma.us", "*.pvt.k12.ma.us:80,443"},  // a public suffix not in the small list
      {"_dmarc.example.com", "_dmarc.example.com:80,443"},
      {"xn--bcher-kva.example", "xn--bcher-kva.example:80,443"},
      {"a-b.c-d.example", "a-b.c-d.example:80,443"},
      {"co.uk", "co.uk:80,443"},  // one host, however named
      {"10.0.0.5", "10.0.0.5:80,443"},
      {"10.0.0.5:8080", "10.0.0.5:8080"},
      {"::1", "[::1]:80,443"},
      {"[::1]:8080", "[::1]:8080"},
      {"[::1]", "[::1]:80,443"},
      {"[2001:DB8::0:1]:443", "[2001:db8::1]:443"},
      {"[::ffff:10.0.0.5]:443", "10.0.0.5:443"},
      {"10.1.0.0/16", "10.1.0.0/16:80,443"},
      {"10.0.0.0/8:443", "10.0.0.0/8:443"},
      {"10.0.0.5/32", "10.0.0.5/32:80,443"},
      {"fd00::/16", "[fd00::/16]:80,443"},
      {"[fd00:1::/32]:443", "[fd00:1::/32]:443"},
      {"[::ffff:10.1.0.0/112]:443", "10.1.0.0/16:443"},
      // In a prefix carrying IPv4, a range carrying an IPv4 range of /8 or narrower.
      {"[64:ff9b::a00:0/104]:9300", "[64:ff9b::a00:0/104]:9300"},
      {"[64:ff9b::102:300/120]", "[64:ff9b::102:300/120]:80,443"},
      {"[2002:a00::/24]:443", "[2002:a00::/24]:443"},
      {"[2002:102:304::/48]", "[2002:102:304::/48]:80,443"},
      {"[::a00:0/104]", "[::a00:0/104]:80,443"},
      {"[::/127]", "[::/127]:80,443"},
      {"64:ff9b::102:304", "[64:ff9b::102:304]:80,443"},
      {"64:ff9b:1:a00:1::", "[64:ff9b:1:a00:1::]:80,443"},  // one address, not a range
      {"[64:ff9b::1:0:0/96]", "[64:ff9b::1:0:0/96]:80,443"},  // beside 64:ff9b::/96, carrying nothing
      {"[2003::/16]", "[2003::/16]:80,443"},
  };
  for (const auto& [text, canonical] : table) {
    HostRule rule = Rule(text);
    EXPECT_EQ(rule.Describe(), canonical) << text;
    EXPECT_EQ(Rule(canonical), rule) << canonical;
  }
  HostRule name = Rule("*.Example.com:443");
  EXPECT_EQ(name.form, HostPatternForm::kWildcardName);
  EXPECT_EQ(name.name, "example.com");
  EXPECT_FALSE(name.range.has_value());
  HostRule address = Rule("[::ffff:10.0.0.5]");
  EXPECT_EQ(address.form, HostPatternForm::kAddress);
  EXPECT_EQ(address.range->ToString(), "10.0.0.5/32");
  EXPECT_TRUE(address.name.empty());
  EXPECT_EQ(Rule("10.1.0.0/16").form, HostPatternForm::kAddressRange);
  EXPECT_EQ(Rule("registry").form, HostPatternForm::kExactName);
}

TEST(HostPattern, ANameOf253CharactersIsTheLongest) {
  std::string name = std::string(63, 'a') + "." + std::string(63, 'b') + "." + std::string(63, 'c') + "." +
                     std::string(61, 'd');
  ASSERT_EQ(name.size(), 253u);
  EXPECT_TRUE(ParseHostRule(name, HostRuleKind::kAllow).ok());
  EXPECT_TRUE(ParseHostRule(name + ".", HostRuleKind::kAllow).ok()) << "the trailing dot does not count";
  Result<HostRule> longer = ParseHostRule(name + "d", HostRuleKind::kAllow);
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.error().message().find("longer than 253"), std::string::npos);
}

TEST(HostPattern, RefusedAllowRules) {
  const testing::RefusalTable table = {
      {"", "--allow-host : an empty pattern"},
      {":443", "--allow-host :443: an empty pattern"},
      {"*", "--allow-host *: '*' matches every host"},
      {"*:443", "'*' matches every host"},
      {"*.com", "--allow-host *.com: it covers the whole top-level domain com; name a domain below it (*.example.com)"},
      {"*.io.", "the whole top-level domain io"},
      {"*.CO.UK", "--allow-host *.CO.UK: co.uk is a public suffix, whose names belong to unrelated owners"},
      {"*.github.io:443", "github.io is a public suffix"},
      {"*.amazonaws.com", "amazonaws.com is a public suffix"},
      {"*.s3.amazonaws.com", "s3.amazonaws.com is a public suffix"},
      {"*.", "no suffix after '*.'"},
      {"*..", "no suffix after '*.'"},
      {"*.*.example.com", "'*' only as the whole first label"},
      {"a*.example.com", "'*' only as the whole first label"},
      {"*example.com", "'*' only as the whole first label"},
      {"example..com", "an empty label"},
      {".example.com", "an empty label"},
      {"example.com..", "an empty label"},
      {"-a.example.com", "starts or ends with '-'"},
      {"a-.example.com", "starts or ends with '-'"},
      {"a_b.example.com", "'_' only as a label's first character"},
      {"ex ample.com", "a character other than a-z, 0-9, '-' and '_'"},
      {"b\xc3\xbc" "cher.example", "in its xn-- form"},
      {std::string(64, 'a') + ".example", "a label longer than 63"},
      {"example.123", "its last label is a number, which resolvers read as an IPv4 address"},
      {"0x7f000001", "its last label is a number"},
      {"127.0x1", "its last label is a number"},
      {"0X7F.0.0.1", "its last label is a number"},
      {"10.1", "'10.1' is not an IP address: an IPv4 address has four parts"},
      {"010.0.0.1", "without leading zeros"},
      {"256.0.0.1", "0 to 255"},
      {"fe80::1%eth0", "a zone"},
      {"example.com:", "no port after ':'"},
      {"example.com:0", "port '0' is not a number from 1 to 65535"},
      {"example.com:65536", "port '65536' is not a number from 1 to 65535"},
      {"example.com:0443", "port '0443' is not a number"},
      {"example.com:443,,80", "an empty port in the list"},
      {"example.com:443,", "an empty port in the list"},
      {"example.com:https", "port 'https' is not a number"},
      {"example.com:-1", "port '-1' is not a number"},
      {"example.com:100000", "port '100000' is not a number"},
      {"[::1", "a '[' without its ']'"},
      {"[::1]443", "only ':PORTS' may follow ']'"},
      {"[10.0.0.1]:443", "brackets hold an IPv6 address or range only"},
      {"[example.com]:443", "brackets hold an IPv6 address or range only"},
      {"[::1]:", "no port after ':'"},
      {"0.0.0.0/0", "--allow-host 0.0.0.0/0: it matches every IPv4 address"},
      {"::/0", "--allow-host ::/0: it matches every IPv6 address"},
      {"[::/0]:443", "it matches every IPv6 address"},
      {"8.0.0.0/7", "--allow-host 8.0.0.0/7: a /7 range is too broad; an IPv4 range is /8 or narrower"},
      {"2000::/3", "a /3 range is too broad; an IPv6 range is /16 or narrower"},
      {"fc00::/15", "a /15 range is too broad"},
      {"fd00::/8", "--allow-host fd00::/8: a /8 range is too broad; an IPv6 range is /16 or narrower"},
      {"::ffff:0:0/96", "it matches every IPv4 address"},
      {"[::ffff:0.0.0.0/100]:443", "a /4 range is too broad"},
      {"[64:ff9b::/96]:9300",
       "--allow-host [64:ff9b::/96]:9300: it covers NAT64 addresses (64:ff9b::/96) carrying 0.0.0.0/0, a /0 IPv4 "
       "range, too broad; an IPv4 range is /8 or narrower, so a range in 64:ff9b::/96 is /104 or narrower"},
      {"[64:ff9b::a00:0/103]", "covers NAT64 addresses (64:ff9b::/96) carrying 10.0.0.0/7, a /7 IPv4 range, too broad"},
      {"[64:ff9b::/80]", "covers NAT64 addresses (64:ff9b::/96) carrying 0.0.0.0/0"},
      {"[64:ff9b::/32]", "covers local-use NAT64 addresses (64:ff9b:1::/48)"},
      {"[2002::/16]",
       "--allow-host [2002::/16]: it covers 6to4 addresses (2002::/16) carrying 0.0.0.0/0, a /0 IPv4 range, too "
       "broad; an IPv4 range is /8 or narrower, so a range in 2002::/16 is /24 or narrower"},
      {"[2002:800::/23]:443", "6to4 addresses (2002::/16) carrying 8.0.0.0/7, a /7 IPv4 range"},
      {"[::/96]", "--allow-host [::/96]: it covers IPv4-compatible addresses (::/96) carrying 0.0.0.0/0"},
      {"[::/100]", "IPv4-compatible addresses (::/96) carrying 0.0.0.0/4, a /4 IPv4 range, too broad"},
      {"[::/16]:443", "it covers IPv4-mapped addresses (::ffff:0.0.0.0/96) carrying 0.0.0.0/0"},
      {"[::fffe:0:0/95]", "it covers IPv4-mapped addresses (::ffff:0.0.0.0/96) carrying 0.0.0.0/0"},
      {"[64:ff9b:1::/48]",
       "--allow-host [64:ff9b:1::/48]: it covers local-use NAT64 addresses (64:ff9b:1::/48), whose IPv4 address "
       "cannot be read without the network's layout"},
      {"[64:ff9b:1:a00::/64]", "local-use NAT64 addresses (64:ff9b:1::/48)"},
      {"[64:ff9b:1::102:300/120]", "local-use NAT64 addresses (64:ff9b:1::/48)"},
      {"[64::/16]", "covers local-use NAT64 addresses (64:ff9b:1::/48)"},
      {"10.1.0.1/16", "--allow-host 10.1.0.1/16: '10.1.0.1/16' has bits set past its /16 prefix (the range is 10.1.0.0/16)"},
      {"fd00::1/8", "has bits set past its /8 prefix (the range is fd00::/8)"},
      {"10.0.0.0/33", "no prefix length 0 to 32"},
      {"example.com/8", "is not an IP address"},
  };
  testing::ExpectRefusals([](std::string_view text) { return ParseHostRule(text, HostRuleKind::kAllow); }, table);
}

TEST(HostPattern, ADenyRuleTakesNoPortsAndMayBeBroad) {
  HostRule deny = Rule("Tracker.example.", HostRuleKind::kDeny);
  EXPECT_EQ(deny.kind, HostRuleKind::kDeny);
  EXPECT_TRUE(deny.ports.empty());
  EXPECT_EQ(deny.Describe(), "tracker.example");
  EXPECT_EQ(Rule("::1", HostRuleKind::kDeny).Describe(), "::1");
  EXPECT_EQ(Rule("[fd00::/8]", HostRuleKind::kDeny).Describe(), "fd00::/8");
  EXPECT_EQ(Rule("*.ru", HostRuleKind::kDeny).Describe(), "*.ru");
  EXPECT_EQ(Rule("*.co.uk", HostRuleKind::kDeny).Describe(), "*.co.uk");
  EXPECT_EQ(Rule("0.0.0.0/0", HostRuleKind::kDeny).Describe(), "0.0.0.0/0");
  EXPECT_EQ(Rule("[64:ff9b::/96]", HostRuleKind::kDeny).Describe(), "64:ff9b::/96");
  EXPECT_EQ(Rule("2002::/16", HostRuleKind::kDeny).Describe(), "2002::/16");
  EXPECT_EQ(Rule("64:ff9b:1::/48", HostRuleKind::kDeny).Describe(), "64:ff9b:1::/48");
  for (const char* text : {"example.com:443", "[::1]:22", "10.0.0.0/8:80"}) {
    Result<HostRule> rule = ParseHostRule(text, HostRuleKind::kDeny);
    ASSERT_FALSE(rule.ok()) << text;
    EXPECT_NE(rule.error().message().find("--deny-host " + std::string(text) +
                                          ": a deny rule takes no ports: it denies every port of the host"),
              std::string::npos)
        << rule.error().message();
  }
  Result<HostRule> star = ParseHostRule("*", HostRuleKind::kDeny);
  ASSERT_FALSE(star.ok());
  EXPECT_NE(star.error().message().find("--deny-host *: '*' matches every host"), std::string::npos);
  Result<HostRule> bad = ParseHostRule("10.1.0.1/16", HostRuleKind::kDeny);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message().find("--deny-host 10.1.0.1/16: "), std::string::npos);
}

TEST(HostPattern, ARefusalQuotesTheRulePrintably) {
  Result<HostRule> rule = ParseHostRule("a\x1b[31m.example", HostRuleKind::kAllow);
  ASSERT_FALSE(rule.ok());
  EXPECT_EQ(rule.error().message().find('\x1b'), std::string::npos);
  EXPECT_NE(rule.error().message().find("a\\x1b[31m.example"), std::string::npos) << rule.error().message();
}

HostRuleSet Rules(const std::vector<std::string>& allow, const std::vector<std::string>& deny) {
  HostRuleSet rules;
  for (const std::string& text : allow) rules.Add(Rule(text));
  for (const std::string& text : deny) rules.Add(Rule(text, HostRuleKind::kDeny));
  return rules;
}

std::string Verdict(const HostMatch& match) {
  switch (match.verdict) {
    case HostVerdict::kAllowed: return "allowed by " + match.rule->Describe();
    case HostVerdict::kDenied: return "denied by " + match.rule->Describe();
    case HostVerdict::kNotListed: return match.rule ? "not listed, with a rule" : "not listed";
  }
  return "";
}

TEST(HostRuleSet, NamesMatchExactlyOrBelowAWildcardOnALabelBoundary) {
  HostRuleSet rules = Rules({"*.example.com:443", "registry.npmjs.org", "registry:5000"}, {});
  const std::vector<std::tuple<std::string, uint16_t, std::string>> table = {
      {"a.example.com", 443, "allowed by *.example.com:443"},
      {"A.B.Example.COM.", 443, "allowed by *.example.com:443"},
      {"example.com", 443, "not listed"},
      {"badexample.com", 443, "not listed"},
      {"a.badexample.com", 443, "not listed"},
      {"example.com.evil", 443, "not listed"},
      {"a.example.com", 80, "not listed"},
      {".example.com", 443, "not listed"},
      {"a..example.com", 443, "not listed"},
      {"registry.npmjs.org", 80, "allowed by registry.npmjs.org:80,443"},
      {"registry.npmjs.org", 443, "allowed by registry.npmjs.org:80,443"},
      {"registry.npmjs.org", 8080, "not listed"},
      {"x.registry.npmjs.org", 443, "not listed"},
      {"registry", 5000, "allowed by registry:5000"},
      {"registry", 443, "not listed"},
      {"", 443, "not listed"},
  };
  for (const auto& [name, port, want] : table) {
    EXPECT_EQ(Verdict(rules.MatchName(name, port)), want) << name << ":" << port;
  }
}

TEST(HostRuleSet, AddressesMatchLiteralsAndRanges) {
  HostRuleSet rules = Rules({"10.1.0.0/16:443", "192.168.1.7", "[fd00::/16]:8443", "[::1]:8080"}, {});
  const std::vector<std::tuple<std::string, uint16_t, std::string>> table = {
      {"10.1.0.0", 443, "allowed by 10.1.0.0/16:443"},
      {"10.1.255.255", 443, "allowed by 10.1.0.0/16:443"},
      {"10.2.0.0", 443, "not listed"},
      {"10.0.255.255", 443, "not listed"},
      {"10.1.2.3", 80, "not listed"},
      {"::ffff:10.1.2.3", 443, "allowed by 10.1.0.0/16:443"},
      {"192.168.1.7", 80, "allowed by 192.168.1.7:80,443"},
      {"::ffff:192.168.1.7", 443, "allowed by 192.168.1.7:80,443"},
      {"192.168.1.8", 80, "not listed"},
      {"fd00:1::1", 8443, "allowed by [fd00::/16]:8443"},
      {"fd01::1", 8443, "not listed"},
      {"::1", 8080, "allowed by [::1]:8080"},
      {"::2", 8080, "not listed"},
      {"127.0.0.1", 8080, "not listed"},
  };
  for (const auto& [text, port, want] : table) {
    EXPECT_EQ(Verdict(rules.MatchAddress(Parsed(text), port)), want) << text << ":" << port;
  }
}

TEST(HostRuleSet, ANameNeverMatchesAnAddressRuleNorTheOtherWay) {
  HostRuleSet rules = Rules({"10.0.0.5", "example.com"}, {});
  EXPECT_EQ(Verdict(rules.MatchName("10.0.0.5", 443)), "not listed");
  EXPECT_EQ(Verdict(rules.MatchAddress(Parsed("10.0.0.5"), 443)), "allowed by 10.0.0.5:80,443");
  HostRuleSet wide = Rules({"10.0.0.5:443"}, {"::/16"});
  EXPECT_EQ(Verdict(wide.MatchAddress(Parsed("::ffff:10.0.0.5"), 443)), "allowed by 10.0.0.5:443")
      << "an IPv6 rule never matches an IPv4 address";
  EXPECT_EQ(Verdict(wide.MatchAddress(Parsed("::a00:5"), 443)), "denied by ::/16") << "an IPv6 address it covers";
}

TEST(HostRuleSet, ADenyRuleRefusesEveryIpv6FormCarryingItsIpv4Address) {
  HostRuleSet rules = Rules({"[64:ff9b::100:0/104]:443", "[64:ff9b:1::102:304]:443", "[2002:100::/24]:443",
                             "[::100:0/104]:443", "1.0.0.0/8:443"},
                            {"1.2.3.0/24", "9.9.9.9"});
  const std::vector<std::pair<std::string, std::string>> table = {
      {"1.2.3.4", "denied by 1.2.3.0/24"},
      {"::ffff:1.2.3.4", "denied by 1.2.3.0/24"},
      {"64:ff9b::102:304", "denied by 1.2.3.0/24"},
      {"64:ff9b::1.2.3.255", "denied by 1.2.3.0/24"},
      {"64:ff9b:1::102:304", "denied by 1.2.3.0/24"},
      {"2002:102:304::1", "denied by 1.2.3.0/24"},
      {"2002:102:3ff:ffff:ffff:ffff:ffff:ffff", "denied by 1.2.3.0/24"},
      {"::102:304", "denied by 1.2.3.0/24"},
      {"64:ff9b::909:909", "denied by 9.9.9.9"},
      {"2002:909:909::", "denied by 9.9.9.9"},
      // The IPv4 addresses next to the denied ones, by the allow rules.
      {"1.2.4.4", "allowed by 1.0.0.0/8:443"},
      {"::ffff:1.2.4.4", "allowed by 1.0.0.0/8:443"},
      {"64:ff9b::102:404", "allowed by [64:ff9b::100:0/104]:443"},
      {"2002:102:404::1", "allowed by [2002:100::/24]:443"},
      {"::102:404", "allowed by [::100:0/104]:443"},
      // Not carrying 1.2.3.4 where corral reads it.
      {"64:ff9b::1:102:304", "not listed"},
      {"2003:102:304::1", "not listed"},
      {"64:ff9b:1:102:304::", "not listed"},
  };
  for (const auto& [text, want] : table) {
    EXPECT_EQ(Verdict(rules.MatchAddress(Parsed(text), 443)), want) << text;
  }
}

TEST(HostRuleSet, AnIpv4AllowRuleMatchesOnlyTheMappedForm) {
  HostRuleSet rules = Rules({"1.2.3.4:443", "10.0.0.0/8:443"}, {});
  EXPECT_EQ(Verdict(rules.MatchAddress(Parsed("::ffff:1.2.3.4"), 443)), "allowed by 1.2.3.4:443");
  for (const char* text : {"64:ff9b::102:304", "64:ff9b:1::102:304", "2002:102:304::1", "::102:304",
                           "64:ff9b::a00:1", "2002:a00:1::1", "::a00:1"}) {
    EXPECT_EQ(Verdict(rules.MatchAddress(Parsed(text), 443)), "not listed") << text;
  }
}

TEST(HostRuleSet, DenyWinsOverAllow) {
  HostRuleSet rules = Rules({"*.example.com:443", "10.0.0.0/8:443", "ads.example.com:443"},
                            {"ads.example.com", "*.tracking.example.com", "10.9.0.0/16", "::ffff:10.8.0.1"});
  EXPECT_EQ(Verdict(rules.MatchName("api.example.com", 443)), "allowed by *.example.com:443");
  EXPECT_EQ(Verdict(rules.MatchName("ads.example.com", 443)), "denied by ads.example.com");
  EXPECT_EQ(Verdict(rules.MatchName("ads.example.com", 1234)), "denied by ads.example.com") << "every port";
  EXPECT_EQ(Verdict(rules.MatchName("x.tracking.example.com", 443)), "denied by *.tracking.example.com");
  EXPECT_EQ(Verdict(rules.MatchName("tracking.example.com", 443)), "allowed by *.example.com:443");
  EXPECT_EQ(Verdict(rules.MatchAddress(Parsed("10.9.1.1"), 443)), "denied by 10.9.0.0/16");
  EXPECT_EQ(Verdict(rules.MatchAddress(Parsed("::ffff:10.9.1.1"), 443)), "denied by 10.9.0.0/16");
  EXPECT_EQ(Verdict(rules.MatchAddress(Parsed("10.8.0.1"), 443)), "denied by 10.8.0.1");
  EXPECT_EQ(Verdict(rules.MatchAddress(Parsed("10.8.0.2"), 443)), "allowed by 10.0.0.0/8:443");
  EXPECT_EQ(rules.allow_rules().size(), 3u);
  EXPECT_EQ(rules.deny_rules().size(), 4u);
}

TEST(HostRuleSet, TheFirstMatchingAllowRuleIsNamed) {
  HostRuleSet rules = Rules({"*.example.com:443", "api.example.com:443,8443"}, {});
  EXPECT_EQ(Verdict(rules.MatchName("api.example.com", 443)), "allowed by *.example.com:443");
  EXPECT_EQ(Verdict(rules.MatchName("api.example.com", 8443)), "allowed by api.example.com:443,8443");
  EXPECT_EQ(HostRuleFlag(HostRuleKind::kAllow), "--allow-host");
  EXPECT_EQ(HostRuleFlag(HostRuleKind::kDeny), "--deny-host");
}

}  // namespace
}  // namespace corral
