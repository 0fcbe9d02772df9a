// A table of inputs a reader must refuse, each with a fragment its message
// must hold, checked in one loop for tests of readers returning Result.
//
//   ExpectRefusals(ParseCidr, {{"10.0.0.1/8", "bits set past"}, {"::/129", "prefix length"}});
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace corral::testing {

using RefusalTable = std::vector<std::pair<std::string, std::string>>;

// Each input is refused with an Error of `kind` whose message contains its fragment.
template <typename Reader>
void ExpectRefusals(Reader reader, const RefusalTable& table, ErrorKind kind = ErrorKind::kUsage) {
  for (const auto& [input, fragment] : table) {
    auto result = reader(input);
    if (result.ok()) {
      ADD_FAILURE() << "'" << input << "' was not refused";
      continue;
    }
    EXPECT_EQ(result.error().kind(), kind) << input;
    EXPECT_NE(result.error().message().find(fragment), std::string::npos)
        << input << ": '" << result.error().message() << "' lacks '" << fragment << "'";
  }
}

}  // namespace corral::testing
