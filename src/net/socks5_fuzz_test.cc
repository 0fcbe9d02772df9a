// A deterministic, small-scale version of socks5_fuzz.cc: every seed in
// socks5_fuzz_seeds/ split at every byte, then thousands of mutations of
// them split at a random byte, through the SOCKS5 readers' property.
#include <gtest/gtest.h>

#include <random>

#include "net/socks5_fuzz_check.h"
#include "testing/fuzz_seeds.h"

namespace corral {
namespace {

TEST(Socks5Fuzz, EverySeedAtEverySplitKeepsTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = testing::ReadFuzzSeeds("src/net/socks5_fuzz_seeds");
  ASSERT_GE(seeds.size(), 10u);
  size_t accepted = 0;
  for (const std::vector<uint8_t>& seed : seeds) {
    for (size_t split = 0; split <= seed.size(); ++split) {
      std::optional<std::string> broken = testing::CheckSocks5Readers(seed, split);
      ASSERT_FALSE(broken.has_value()) << broken.value_or("");
    }
    Result<ReadStep<Socks5Greeting>> greeting = ReadSocks5Greeting(seed);
    if (!greeting.ok() || greeting->need_more()) continue;
    Result<ReadStep<Socks5Request>> request = ReadSocks5Request(std::span(seed).subspan(greeting->used()));
    accepted += request.ok() && !request->need_more();
  }
  EXPECT_GE(accepted, 3u) << "the seeds hold well-formed greetings and requests";
}

TEST(Socks5Fuzz, MutatedSeedsKeepTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = testing::ReadFuzzSeeds("src/net/socks5_fuzz_seeds");
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(1080);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = testing::MutatedSeed(seeds, rng);
    std::optional<std::string> broken = testing::CheckSocks5Readers(bytes, rng() % (bytes.size() + 1));
    ASSERT_FALSE(broken.has_value()) << broken.value_or("");
  }
}

}  // namespace
}  // namespace corral
