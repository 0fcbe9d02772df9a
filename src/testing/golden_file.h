// Test support (header only, never in the library): golden files under
// tests/golden/ of the source tree (SourceDir() in testing/source_dir.h).
//
//   ExpectGolden("bwrap_default.txt", text);
//
// The text is compared byte for byte; on a mismatch the test fails with both
// versions. Run the tests with UPDATE_GOLDEN=1 to rewrite the files instead,
// then review the diff like any other change.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "testing/source_dir.h"

namespace corral::testing {

inline std::filesystem::path GoldenPath(const std::string& name) {
  return (SourceDir() / "tests" / "golden" / name).lexically_normal();
}

// Replaces every occurrence of `from` in `text` by `to`.
inline std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  if (from.empty()) return text;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

inline void ExpectGolden(const std::string& name, const std::string& actual) {
  std::filesystem::path path = GoldenPath(name);
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc) << actual;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path << " is missing; run the test with UPDATE_GOLDEN=1 to create it";
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(actual, expected) << "differs from " << path << " (UPDATE_GOLDEN=1 rewrites it)";
}

}  // namespace corral::testing
