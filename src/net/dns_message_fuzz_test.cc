// A deterministic, small-scale version of dns_message_fuzz.cc: every seed in
// dns_message_fuzz_seeds/, then thousands of mutations of them, through the
// DNS query reader's property.
#include <gtest/gtest.h>

#include <random>

#include "net/dns_message_fuzz_check.h"
#include "testing/fuzz_seeds.h"

namespace corral {
namespace {

std::vector<std::vector<uint8_t>> Seeds() { return testing::ReadFuzzSeeds("src/net/dns_message_fuzz_seeds"); }

TEST(DnsMessageFuzz, EverySeedKeepsTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = Seeds();
  ASSERT_GE(seeds.size(), 10u);
  size_t accepted = 0;
  for (const std::vector<uint8_t>& seed : seeds) {
    std::optional<std::string> broken = testing::CheckDnsQueryReader(seed);
    EXPECT_FALSE(broken.has_value()) << broken.value_or("");
    accepted += ParseDnsQuery(seed).ok();
  }
  EXPECT_GE(accepted, 5u) << "the seeds hold well-formed queries";
}

TEST(DnsMessageFuzz, MutatedSeedsKeepTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = Seeds();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(53);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = seeds[rng() % seeds.size()];
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
      size_t at = bytes.empty() ? 0 : rng() % (bytes.size() + 1);
      switch (rng() % 3) {
        case 0: bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at), static_cast<uint8_t>(rng())); break;
        case 1:
          if (at < bytes.size()) {
            bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                        bytes.begin() + static_cast<std::ptrdiff_t>(std::min(bytes.size(), at + 1 + rng() % 8)));
          }
          break;
        default: if (at < bytes.size()) bytes[at] = static_cast<uint8_t>(rng()); break;
      }
    }
    std::optional<std::string> broken = testing::CheckDnsQueryReader(bytes);
    ASSERT_FALSE(broken.has_value()) << broken.value_or("");
  }
}

}  // namespace
}  // namespace corral
