// A deterministic, small-scale version of host_pattern_fuzz.cc: a table of
// seed rules, then thousands of mutations of them from a fixed seed, through
// the host rule reader's property for both kinds.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "net/host_pattern_fuzz_check.h"
#include "net/user_text.h"

namespace corral {
namespace {

const std::vector<std::string> kSeeds = {
    "example.com",        "registry.npmjs.org:443",  "*.example.com:80,443,8443", "*.co.uk",
    "_srv.Example.COM.",  "registry",                "10.0.0.5",                  "10.0.0.5:8080",
    "10.1.0.0/16:443",    "0.0.0.0/0",               "::1",                       "[::1]:8080",
    "[fd00::/16]:443",    "[::ffff:10.0.0.5]:443",   "2001:db8::1",               "[2001:db8::/32]",
    "fe80::1%eth0",       "*",                       "*.com",                     "example.com:0,65535,65536",
    "a-b.c_d.e--f.xn--g", "[::ffff:10.1.0.0/112]:1", "64:ff9b::10.0.0.1",         "example..com",
    "[64:ff9b::a00:0/104]:9300", "[2002:a00::/24]",  "[64:ff9b:1::/48]",          "[::/96]",
};

// Characters the grammar gives a meaning to, drawn more often than the rest.
constexpr std::string_view kInteresting = "*.:[]/,-_0123456789abcdefxABCDEF";

std::string Mutated(std::mt19937_64& rng) {
  std::string text = kSeeds[rng() % kSeeds.size()];
  auto random_char = [&rng] {
    return rng() % 4 == 0 ? static_cast<char>(rng()) : kInteresting[rng() % kInteresting.size()];
  };
  for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
    size_t at = rng() % (text.size() + 1);
    switch (rng() % 5) {
      case 0: text.insert(at, 1, random_char()); break;
      case 1: text.erase(at, 1 + rng() % 4); break;
      case 2: if (at < text.size()) text[at] = random_char(); break;
      case 3: text.insert(at, text.substr(rng() % (text.size() + 1), rng() % 8)); break;
      default: text.insert(at, kSeeds[rng() % kSeeds.size()]); break;
    }
  }
  return text;
}

TEST(HostPatternFuzz, EverySeedKeepsTheProperty) {
  size_t accepted = 0;
  for (const std::string& seed : kSeeds) {
    for (HostRuleKind kind : {HostRuleKind::kAllow, HostRuleKind::kDeny}) {
      std::optional<std::string> broken = testing::CheckHostRuleReader(seed, kind);
      EXPECT_FALSE(broken.has_value()) << seed << ": " << broken.value_or("");
    }
    accepted += ParseHostRule(seed, HostRuleKind::kAllow).ok();
  }
  EXPECT_GE(accepted, 10u) << "the seeds hold well-formed rules";
}

TEST(HostPatternFuzz, MutatedSeedsKeepTheProperty) {
  std::mt19937_64 rng(2718);
  size_t accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string text = Mutated(rng);
    for (HostRuleKind kind : {HostRuleKind::kAllow, HostRuleKind::kDeny}) {
      std::optional<std::string> broken = testing::CheckHostRuleReader(text, kind);
      ASSERT_FALSE(broken.has_value()) << PrintableText(text) << ": " << broken.value_or("");
    }
    accepted += ParseHostRule(text, HostRuleKind::kAllow).ok();
  }
  EXPECT_GE(accepted, 1000u) << "the mutations reach the accepting paths";
}

}  // namespace
}  // namespace corral
