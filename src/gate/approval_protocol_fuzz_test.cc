// A deterministic, small-scale version of approval_protocol_fuzz.cc: every
// seed in approval_protocol_fuzz_seeds/, then thousands of mutations of
// them, through the answer parser's property.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include "gate/approval_protocol_fuzz_check.h"
#include "testing/source_dir.h"

namespace corral {
namespace {

std::vector<std::string> Seeds() {
  std::vector<std::string> seeds;
  for (const auto& entry :
       std::filesystem::directory_iterator(testing::SourceDir() / "src/gate/approval_protocol_fuzz_seeds")) {
    std::ifstream in(entry.path(), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return seeds;
}

TEST(ApprovalProtocolFuzz, EverySeedKeepsTheProperty) {
  std::vector<std::string> seeds = Seeds();
  ASSERT_GE(seeds.size(), 10u);
  for (const std::string& seed : seeds) {
    std::optional<std::string> broken = testing::CheckApprovalAnswerParser(seed);
    EXPECT_FALSE(broken.has_value()) << seed << ": " << broken.value_or("");
  }
}

TEST(ApprovalProtocolFuzz, MutatedSeedsKeepTheProperty) {
  std::vector<std::string> seeds = Seeds();
  ASSERT_FALSE(seeds.empty());
  const std::vector<std::string> tokens = {"\"", "{", "}", ",", ":", "\\u0000", "\\u001b", "\xff", "\xc3", "\n",
                                           "\"allow-for-session\"", "\"deny\"", "\"v\"", "1", "1.0", "-1", "null",
                                           "true", "\"id\"", "\"answer\"", std::string(5000, 'a')};
  std::mt19937_64 rng(11);
  for (int i = 0; i < 4000; ++i) {
    std::string line = seeds[rng() % seeds.size()];
    for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
      size_t at = line.empty() ? 0 : rng() % (line.size() + 1);
      switch (rng() % 3) {
        case 0: line.insert(at, tokens[rng() % tokens.size()]); break;
        case 1: if (at < line.size()) line.erase(at, 1 + rng() % 8); break;
        default: if (at < line.size()) line[at] = static_cast<char>(rng() % 256); break;
      }
    }
    std::optional<std::string> broken = testing::CheckApprovalAnswerParser(line);
    ASSERT_FALSE(broken.has_value()) << ::testing::PrintToString(line) << ": " << broken.value_or("");
  }
}

}  // namespace
}  // namespace corral
