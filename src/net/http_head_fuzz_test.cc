// A deterministic, small-scale version of http_head_fuzz.cc: every seed in
// http_head_fuzz_seeds/ split at every byte, then thousands of mutations of
// them split at a random byte, through the HTTP head reader's property.
#include <gtest/gtest.h>

#include <random>

#include "net/http_head_fuzz_check.h"
#include "testing/fuzz_seeds.h"

namespace corral {
namespace {

TEST(HttpHeadFuzz, EverySeedAtEverySplitKeepsTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = testing::ReadFuzzSeeds("src/net/http_head_fuzz_seeds");
  ASSERT_GE(seeds.size(), 10u);
  size_t accepted = 0;
  for (const std::vector<uint8_t>& seed : seeds) {
    for (size_t split = 0; split <= seed.size(); ++split) {
      std::optional<std::string> broken = testing::CheckHttpHeadReader(seed, split);
      ASSERT_FALSE(broken.has_value()) << broken.value_or("");
    }
    Result<ReadStep<HttpHead>> step = ReadHttpHead(seed);
    accepted += step.ok() && !step->need_more();
  }
  EXPECT_GE(accepted, 5u) << "the seeds hold well-formed heads";
}

TEST(HttpHeadFuzz, MutatedSeedsKeepTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = testing::ReadFuzzSeeds("src/net/http_head_fuzz_seeds");
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(80);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = testing::MutatedSeed(seeds, rng);
    std::optional<std::string> broken = testing::CheckHttpHeadReader(bytes, rng() % (bytes.size() + 1));
    ASSERT_FALSE(broken.has_value()) << broken.value_or("");
  }
}

}  // namespace
}  // namespace corral
