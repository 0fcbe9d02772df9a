// Which ports transparent capture listens on and which names get a
// synthetic address, as the host rules give them.
#include "policy/egress_capture.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

EgressRules Rules(const std::vector<std::string>& allow, const std::vector<std::string>& deny = {},
                  const std::vector<std::string>& local = {}) {
  const std::vector<std::string> none;
  Result<EgressRules> rules = ReadEgressRules(EgressLists{allow, deny, none, local, none, none}, NetworkMode::kNone);
  EXPECT_TRUE(rules.ok()) << rules.error().ToString();
  return rules.ok() ? *rules : EgressRules{};
}

TEST(EgressCapture, ThePortsOfTheNameRulesOnceEachWithoutCorralsOwnOrTheLocalOnes) {
  EXPECT_EQ(CapturedPorts(Rules({"a.test"}), 16), (std::vector<uint16_t>{80, 443}));
  EXPECT_EQ(CapturedPorts(Rules({"a.test:443,22", "*.b.test:8443,443", "10.1.0.0/16:5432", "[fd00::1]:9000"}), 16),
            (std::vector<uint16_t>{22, 443, 8443}))
      << "address rules are reached by address, not through a name";
  EXPECT_EQ(CapturedPorts(Rules({"a.test:53,1080,3128,5432,443"}, {}, {"5432"}), 16), (std::vector<uint16_t>{443}));
  EXPECT_EQ(CapturedPorts(Rules({"a.test:1,2,3,4,5"}), 3), (std::vector<uint16_t>{1, 2, 3}));
  EXPECT_TRUE(CapturedPorts(Rules({}), 16).empty());
}

TEST(EgressCapture, ANameIsAllowedWhenSomeRuleLetsItThroughAndNoDenyRuleNamesIt) {
  EgressRules rules = Rules({"a.test:443", "*.b.test", "10.0.0.0/8"}, {"evil.b.test"});
  EXPECT_TRUE(NameAllowed(rules, "a.test"));
  EXPECT_TRUE(NameAllowed(rules, "x.b.test"));
  EXPECT_TRUE(NameAllowed(rules, "A.Test"));
  EXPECT_FALSE(NameAllowed(rules, "b.test")) << "a wildcard never matches its suffix";
  EXPECT_FALSE(NameAllowed(rules, "evil.b.test")) << "the deny rule wins";
  EXPECT_FALSE(NameAllowed(rules, "c.test"));
  EXPECT_FALSE(NameAllowed(rules, "10.1.2.3")) << "an address is never a name";
  EXPECT_FALSE(NameAllowed(rules, "a\\032b.test"));
  EXPECT_FALSE(NameAllowed(rules, ""));
}

}  // namespace
}  // namespace corral
