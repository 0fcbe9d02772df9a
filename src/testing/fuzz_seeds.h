// Test support (header only, never in the library): the seeds of a libFuzzer
// harness and a few random edits of them, for the deterministic smoke test
// each harness has beside it.
//
//   std::vector<std::vector<uint8_t>> seeds = ReadFuzzSeeds("src/net/http_head_fuzz_seeds");
//   std::mt19937_64 rng(53);
//   std::vector<uint8_t> bytes = MutatedSeed(seeds, rng);
//
// The folder is under the source tree (SourceDir() in
// testing/source_dir.h); a folder with no seed fails the test. A mutation makes 1 to 4 edits: a random byte
// inserted, 1 to 8 bytes erased, or a byte replaced.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "testing/source_dir.h"

namespace corral::testing {

inline std::vector<std::vector<uint8_t>> ReadFuzzSeeds(const std::string& folder) {
  std::vector<std::vector<uint8_t>> seeds;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() / folder)) {
    std::ifstream in(entry.path(), std::ios::binary);
    seeds.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  EXPECT_FALSE(seeds.empty()) << "no seed in " << (SourceDir() / folder);
  return seeds;
}

inline std::vector<uint8_t> MutatedSeed(const std::vector<std::vector<uint8_t>>& seeds, std::mt19937_64& rng) {
  std::vector<uint8_t> bytes = seeds[rng() % seeds.size()];
  for (int edits = 1 + static_cast<int>(rng() % 4); edits > 0; --edits) {
    size_t at = bytes.empty() ? 0 : rng() % (bytes.size() + 1);
    auto position = bytes.begin() + static_cast<std::ptrdiff_t>(at);
    switch (rng() % 3) {
      case 0: bytes.insert(position, static_cast<uint8_t>(rng())); break;
      case 1:
        if (at < bytes.size()) {
          bytes.erase(position, bytes.begin() + static_cast<std::ptrdiff_t>(std::min(bytes.size(), at + 1 + rng() % 8)));
        }
        break;
      default:
        if (at < bytes.size()) bytes[at] = static_cast<uint8_t>(rng());
        break;
    }
  }
  return bytes;
}

}  // namespace corral::testing
