// A deterministic, small-scale version of json_rpc_fuzz.cc: every seed in
// json_rpc_fuzz_seeds/, then thousands of mutations of them, through the
// reader's and the argument check's property.
#include <gtest/gtest.h>

#include <random>

#include "mcp/json_rpc_fuzz_check.h"
#include "testing/fuzz_seeds.h"

namespace corral::mcp {
namespace {

TEST(McpFuzz, EverySeedKeepsTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = testing::ReadFuzzSeeds("src/mcp/json_rpc_fuzz_seeds");
  ASSERT_GE(seeds.size(), 10u);
  for (const std::vector<uint8_t>& seed : seeds) {
    std::string line(seed.begin(), seed.end());
    std::optional<std::string> broken = testing::CheckMcpLine(line);
    EXPECT_FALSE(broken.has_value()) << line << ": " << broken.value_or("");
  }
}

TEST(McpFuzz, MutatedSeedsKeepTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = testing::ReadFuzzSeeds("src/mcp/json_rpc_fuzz_seeds");
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(14);
  for (int i = 0; i < 5000; ++i) {
    std::vector<uint8_t> bytes = testing::MutatedSeed(seeds, rng);
    std::string line(bytes.begin(), bytes.end());
    std::optional<std::string> broken = testing::CheckMcpLine(line);
    ASSERT_FALSE(broken.has_value()) << line << ": " << broken.value_or("");
  }
}

}  // namespace
}  // namespace corral::mcp
