// HostAllowlist: the rules decide on names before any lookup, and every
// address is checked: ranges, deny rules, and the host's own addresses
// (given here, as getifaddrs would).
#include "net/host_allowlist.h"

#include <gtest/gtest.h>

#include "net/destination.h"

namespace corral {
namespace {

HostRuleSet Rules(std::initializer_list<std::pair<const char*, HostRuleKind>> rules) {
  HostRuleSet set;
  for (auto [text, kind] : rules) set.Add(*ParseHostRule(text, kind));
  return set;
}

TEST(HostAllowlist, NamesAreDecidedByTheRules) {
  HostAllowlist gate(Rules({{"*.npmjs.org:443", HostRuleKind::kAllow}, {"bad.npmjs.org", HostRuleKind::kDeny}}), {},
                     [] { return std::vector<Address>{}; });
  EXPECT_EQ(gate.Decide("registry.npmjs.org", 443).verdict, EgressVerdict::kAllowed);
  EXPECT_EQ(gate.Decide("registry.npmjs.org", 443).rule, "--allow-host *.npmjs.org:443");
  EXPECT_EQ(gate.Decide("registry.npmjs.org", 80).rule, "not in --allow-host");
  EXPECT_EQ(gate.Decide("bad.npmjs.org", 443).rule, "--deny-host bad.npmjs.org");
  EXPECT_EQ(gate.Decide("1.2.3.4", 443).rule, "not in --allow-host");
}

// What is no host name at all is refused by corral, not "not listed": an
// asking gate puts only a place nobody listed to its approver.
TEST(HostAllowlist, WhatIsNoHostNameIsRefusedNotUnlisted) {
  HostAllowlist gate(Rules({{"*.npmjs.org:443", HostRuleKind::kAllow}}), {}, [] { return std::vector<Address>{}; });
  for (const char* bad : {"a..b", "under_score.npmjs.org", "-x.test", "host.123", ""}) {
    EgressRuling ruling = gate.Decide(bad, 443);
    EXPECT_EQ(ruling.verdict, EgressVerdict::kDenied) << bad;
    EXPECT_EQ(ruling.basis, EgressBasis::kRule) << bad;
    EXPECT_EQ(ruling.rule.rfind("not a host name: ", 0), 0u) << bad << ": " << ruling.rule;
  }
  EXPECT_EQ(gate.Decide(std::string(300, 'a'), 443).basis, EgressBasis::kRule);
  EXPECT_EQ(gate.Decide("unlisted.test", 443).basis, EgressBasis::kNotListed);
  EXPECT_EQ(gate.Decide("Registry.NPMJS.org.", 443).verdict, EgressVerdict::kAllowed);
}

TEST(HostAllowlist, TheHostsOwnAddressesNeedARangeNamingThemAlone) {
  const Address own = *ParseAddress("1.2.3.4");
  auto host = [own] { return std::vector<Address>{own}; };
  HostAllowlist plain(Rules({{"api.test", HostRuleKind::kAllow}}), {}, host);
  Result<void> refused = plain.CheckAddress(own);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("1.2.3.4 is an address of this host's own"), std::string::npos)
      << refused.error().message();
  EXPECT_FALSE(plain.CheckAddress(*ParseAddress("::ffff:1.2.3.4")).ok()) << "mapped";
  EXPECT_FALSE(plain.CheckAddress(*ParseAddress("64:ff9b::102:304")).ok()) << "NAT64";
  EXPECT_FALSE(plain.CheckAddress(*ParseAddress("2002:102:304::1")).ok()) << "6to4";
  EXPECT_TRUE(plain.CheckAddress(*ParseAddress("1.2.3.5")).ok()) << "another public address";
  // A wide private range does not open the host's own address in it.
  const Address lan = *ParseAddress("10.0.0.5");
  HostAllowlist wide(Rules({{"api.test", HostRuleKind::kAllow}}), {*ParseAllowedPrivateRange("10.0.0.0/8")},
                     [lan] { return std::vector<Address>{lan}; });
  EXPECT_TRUE(wide.CheckAddress(*ParseAddress("10.0.0.6")).ok());
  EXPECT_FALSE(wide.CheckAddress(lan).ok());
  HostAllowlist alone(Rules({{"api.test", HostRuleKind::kAllow}}),
                      {*ParseAllowedPrivateRange("10.0.0.0/8"), *ParseAllowedPrivateRange("10.0.0.5/32")},
                      [lan] { return std::vector<Address>{lan}; });
  EXPECT_TRUE(alone.CheckAddress(lan).ok());
}

// Every loopback address is the host's own, listed by an interface or not:
// 127.0.0.2 reaches a service listening on all addresses as 127.0.0.1 does
// (egress_loopback_own).
TEST(HostAllowlist, EveryLoopbackAddressIsTheHostsOwn) {
  auto host = [] { return std::vector<Address>{*ParseAddress("127.0.0.1"), *ParseAddress("::1")}; };
  HostAllowlist wide(Rules({{"api.test", HostRuleKind::kAllow}}), {*ParseAllowedPrivateRange("127.0.0.0/8")}, host);
  for (const char* address : {"127.0.0.1", "127.0.0.2", "127.255.255.254", "::ffff:127.0.0.2"}) {
    Result<void> refused = wide.CheckAddress(*ParseAddress(address));
    ASSERT_FALSE(refused.ok()) << address;
    EXPECT_NE(refused.error().message().find("an address of this host's own"), std::string::npos)
        << refused.error().message();
  }
  HostAllowlist alone(Rules({{"api.test", HostRuleKind::kAllow}}),
                      {*ParseAllowedPrivateRange("127.0.0.0/8"), *ParseAllowedPrivateRange("127.0.0.2/32")}, host);
  EXPECT_TRUE(alone.CheckAddress(*ParseAddress("127.0.0.2")).ok());
  EXPECT_FALSE(alone.CheckAddress(*ParseAddress("127.0.0.3")).ok());
}

TEST(HostAllowlist, ADenyRuleRefusesAResolvedAddress) {
  HostAllowlist gate(Rules({{"*.allowed.test", HostRuleKind::kAllow}, {"1.2.3.4", HostRuleKind::kDeny}}), {},
                     [] { return std::vector<Address>{}; });
  Result<void> refused = gate.CheckAddress(*ParseAddress("1.2.3.4"));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message(), "1.2.3.4 is refused by --deny-host 1.2.3.4");
  EXPECT_FALSE(gate.CheckAddress(*ParseAddress("::ffff:1.2.3.4")).ok());
  EXPECT_TRUE(gate.CheckAddress(*ParseAddress("1.2.3.5")).ok());
}

}  // namespace
}  // namespace corral
