// The egress rules as every front end reads them: each element checked on
// its own (a config file's line), the set read once with its conflicts, and
// the PolicyBuilder's refusals around them.
#include "policy/egress_rules.h"

#include <gtest/gtest.h>

#include "policy/policy.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

TEST(EgressRules, EachElementIsCheckedAsItsFlagReadsIt) {
  EXPECT_TRUE(CheckEgressListElement(ListElement::kAllowHost, "registry.npmjs.org").ok());
  EXPECT_TRUE(CheckEgressListElement(ListElement::kAllowHost, "*.pythonhosted.org:443").ok());
  EXPECT_TRUE(CheckEgressListElement(ListElement::kDenyHost, "*.evil.test").ok());
  EXPECT_TRUE(CheckEgressListElement(ListElement::kPrivateRange, "10.1.0.0/16").ok());
  EXPECT_TRUE(CheckEgressListElement(ListElement::kLocalPort, "5432").ok());
  EXPECT_TRUE(CheckEgressListElement(ListElement::kConnectPort, "443").ok());
  EXPECT_TRUE(CheckEgressListElement(ListElement::kDnsName, "Example.COM.").ok());
  for (auto [element, text, fragment] : {std::tuple{ListElement::kAllowHost, "*.com", "--allow-host *.com"},
                                         std::tuple{ListElement::kAllowHost, "*", "--allow-host *"},
                                         std::tuple{ListElement::kAllowHost, "a.test:0", "--allow-host a.test:0"},
                                         std::tuple{ListElement::kDenyHost, "a.test:443", "--deny-host a.test:443"},
                                         std::tuple{ListElement::kPrivateRange, "8.8.8.0/24", "--allow-private"},
                                         std::tuple{ListElement::kLocalPort, "0", "--allow-local 0: not a port"},
                                         std::tuple{ListElement::kLocalPort, "3128", "--allow-local 3128: corral's own"},
                                         std::tuple{ListElement::kLocalPort, "53", "--allow-local 53: corral's own"},
                                         std::tuple{ListElement::kConnectPort, "0", "--allow-port 0: not a port"},
                                         std::tuple{ListElement::kConnectPort, "65536", "--allow-port 65536: not a port"},
                                         std::tuple{ListElement::kConnectPort, "http", "--allow-port http: not a port"},
                                         std::tuple{ListElement::kDnsName, "*.example.com", "--allow-dns *.example.com: not a host name"},
                                         std::tuple{ListElement::kDnsName, "example.com:443", "--allow-dns example.com:443: not a host name"},
                                         std::tuple{ListElement::kDnsName, "10.0.0.1", "--allow-dns 10.0.0.1: an address needs no lookup"},
                                         std::tuple{ListElement::kDnsName, "::1", "--allow-dns ::1: an address needs no lookup"},
                                         std::tuple{ListElement::kDnsName, "[::1]", "--allow-dns [::1]: an address needs no lookup"},
                                         std::tuple{ListElement::kDnsName, "", "--allow-dns : not a host name"}}) {
    Result<void> checked = CheckEgressListElement(element, text);
    ASSERT_FALSE(checked.ok()) << text;
    EXPECT_EQ(checked.error().kind(), ErrorKind::kUsage);
    EXPECT_EQ(checked.error().message().rfind(fragment, 0), 0u) << checked.error().message();
  }
}

TEST(EgressRules, TheSetKeepsEachRuleOnceInCanonicalForm) {
  const std::vector<std::string> none;
  Result<EgressRules> rules = ReadEgressRules(
      {{"Registry.NPMjs.org", "registry.npmjs.org:80,443", "[::1]:8080"}, {"evil.test"}, {"127.0.0.1/32", "127.0.0.1/32"},
       {"5432", "5432", "8080"}, none, none},
      NetworkMode::kNone);
  ASSERT_TRUE(rules.ok()) << rules.error().message();
  EXPECT_TRUE(rules->active());
  EXPECT_EQ(rules->allow_text, (std::vector<std::string>{"registry.npmjs.org:80,443", "[::1]:8080"}));
  EXPECT_EQ(rules->deny_text, std::vector<std::string>{"evil.test"});
  EXPECT_EQ(rules->private_text, std::vector<std::string>{"127.0.0.1/32"});
  EXPECT_EQ(rules->local_ports, (std::vector<uint16_t>{5432, 8080}));
  EXPECT_EQ(rules->hosts.MatchName("registry.npmjs.org", 443).verdict, HostVerdict::kAllowed);
  EXPECT_EQ(rules->hosts.MatchName("evil.test", 443).verdict, HostVerdict::kDenied);
  Result<EgressRules> deny_only = ReadEgressRules({none, {"evil.test"}, none, none, none, none}, NetworkMode::kAll);
  ASSERT_TRUE(deny_only.ok());
  EXPECT_FALSE(deny_only->active()) << "a deny rule alone asks for no proxy";
}

TEST(EgressRules, ContradictionsAreRefused) {
  const std::vector<std::string> none;
  Result<EgressRules> all = ReadEgressRules({{"example.com"}, none, none, none, none, none}, NetworkMode::kAll);
  ASSERT_FALSE(all.ok());
  EXPECT_NE(all.error().message().find("with --network all every host is reachable already"), std::string::npos);
  Result<EgressRules> lone = ReadEgressRules({none, none, {"127.0.0.1/32"}, none, none, none}, NetworkMode::kNone);
  ASSERT_FALSE(lone.ok());
  EXPECT_NE(lone.error().message().find("there is none; add --allow-host"), std::string::npos);
  Result<EgressRules> local_all = ReadEgressRules({none, none, none, {"5432"}, none, none}, NetworkMode::kAll);
  ASSERT_FALSE(local_all.ok());
  EXPECT_NE(local_all.error().message().find("the host's loopback is reachable already"), std::string::npos);
  std::vector<std::string> many;
  for (int port = 2000; port < 2017; ++port) many.push_back(std::to_string(port));
  Result<EgressRules> too_many = ReadEgressRules({none, none, none, many, none, none}, NetworkMode::kNone);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message().find("at most 16 ports"), std::string::npos);
}

// --allow-port and --allow-dns: ports once each, names in normal form, and
// every combination that cannot mean what it says refused.
TEST(EgressRules, HostPortsAndTheirNames) {
  const std::vector<std::string> none;
  Result<EgressRules> rules =
      ReadEgressRules({none, none, none, none, {"443", "22", "443"}, {"Git.Example.test", "git.example.test."}},
                      NetworkMode::kNone);
  ASSERT_TRUE(rules.ok()) << rules.error().message();
  EXPECT_TRUE(rules->host_ports());
  EXPECT_FALSE(rules->active()) << "no proxy";
  EXPECT_EQ(rules->connect_ports, (std::vector<uint16_t>{443, 22}));
  EXPECT_EQ(rules->dns_names, std::vector<std::string>{"git.example.test"});
  struct Refused {
    EgressLists lists;
    NetworkMode network;
    const char* says;
  };
  const std::vector<std::string> port = {"443"}, host = {"example.com"}, local = {"5432"}, name = {"example.com"};
  std::vector<std::string> many;
  for (int p = 2000; p < 2017; ++p) many.push_back(std::to_string(p));
  for (const Refused& refused : {
           Refused{{none, none, none, none, port, none}, NetworkMode::kAll, "with --network all every port is open"},
           Refused{{host, none, none, none, port, none}, NetworkMode::kNone, "use one or the other"},
           Refused{{none, none, none, local, port, none}, NetworkMode::kNone, "use one or the other"},
           Refused{{none, none, none, none, none, name}, NetworkMode::kNone, "; add --allow-port"},
           Refused{{host, none, none, none, none, name}, NetworkMode::kNone, "; add --allow-port"},
           Refused{{none, none, none, none, many, none}, NetworkMode::kNone, "at most 16 ports"},
       }) {
    Result<EgressRules> read = ReadEgressRules(refused.lists, refused.network);
    ASSERT_FALSE(read.ok()) << refused.says;
    EXPECT_EQ(read.error().kind(), ErrorKind::kUsage);
    EXPECT_NE(read.error().message().find(refused.says), std::string::npos) << read.error().message();
  }
}

TEST(EgressRules, ThePolicyCarriesThemAndRefusesThemWithoutASandbox) {
  testing::TestTree tree;
  HostContext host;
  host.uid = ::geteuid();
  host.gid = ::getegid();
  host.home = tree.Dir("home");
  host.cwd = tree.Dir("ws");
  PolicySpec spec;
  spec.allow_host = {"example.com:443"};
  Result<Policy> policy = BuildPolicy(host, spec);
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  EXPECT_TRUE(policy->egress().active());
  EXPECT_NE(policy->CanonicalJson().find("\"allow_host\":[\"example.com:443\"]"), std::string::npos)
      << "the rules are part of the policy's fingerprint";
  spec.mode = Mode::kDangerFullAccess;
  spec.acknowledge_danger = true;
  Result<Policy> danger = BuildPolicy(host, spec);
  ASSERT_FALSE(danger.ok());
  EXPECT_NE(danger.error().message().find("nothing narrows its network"), std::string::npos);

  spec.mode = Mode::kWorkspaceWrite;
  spec.acknowledge_danger = false;
  spec.allow_host.clear();
  spec.allow_port = {"443"};
  spec.allow_dns = {"example.com"};
  Result<Policy> ports = BuildPolicy(host, spec);
  ASSERT_TRUE(ports.ok()) << ports.error().message();
  EXPECT_NE(ports->CanonicalJson().find("\"host_ports\":{\"allow_dns\":[\"example.com\"],\"allow_port\":[443]}"),
            std::string::npos)
      << ports->CanonicalJson();
}

}  // namespace
}  // namespace corral
