// A deterministic stand-in for the fuzzer that runs with the unit tests:
// thousands of random and mutated logs through the reader, checking the
// same property as session_log_fuzz.cc.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "state/session_log_fuzz_check.h"

namespace corral {
namespace {

const std::vector<std::string>& Seeds() {
  static const std::vector<std::string> kSeeds = {
      "",
      R"({"v":1,"type":"session/start","ts":"2026-01-01T00:00:00.000000Z","data":{"cwd":"/src/app"}})" "\n",
      R"({"v":1,"type":"session/start","ts":"t","data":{"cwd":"/w"}})" "\n"
      R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"read-only","source":"user"}})" "\n"
      R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"workspace-write","source":"delegation"}})" "\n"
      R"({"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"danger-full-access","source":"escalation"}})" "\n",
  };
  return kSeeds;
}

// Pieces of JSON that make interesting splices.
const std::vector<std::string>& Tokens() {
  static const std::vector<std::string> kTokens = {
      "{", "}", "[", "]", "\"", ":", ",", "\n", "\r\n", "\\", "\\u0000", "\\ud800", "1e999", "-0", "null", "true",
      "\"v\":2", "\"type\":\"x\"", "\"data\":{}", "\xff", "\xc3", std::string(1, '\0'), "[[[[[[[[[[", "]]]]]]]]]]",
      "\"read-only\"", "\"session/start\"", "18446744073709551616", "\x1b[31m",
  };
  return kTokens;
}

std::string Mutate(std::string text, std::mt19937_64& random) {
  auto pick = [&](size_t bound) { return bound == 0 ? 0 : static_cast<size_t>(random() % bound); };
  int mutations = 1 + static_cast<int>(pick(4));
  for (int i = 0; i < mutations; ++i) {
    switch (pick(7)) {
      case 0:  // flip a byte
        if (!text.empty()) text[pick(text.size())] ^= static_cast<char>(1u << pick(8));
        break;
      case 1:  // insert a random byte
        text.insert(text.begin() + static_cast<std::ptrdiff_t>(pick(text.size() + 1)), static_cast<char>(pick(256)));
        break;
      case 2:  // delete a range
        if (!text.empty()) {
          size_t at = pick(text.size());
          text.erase(at, 1 + pick(16));
        }
        break;
      case 3:  // truncate (a torn write)
        text.resize(pick(text.size() + 1));
        break;
      case 4:  // splice a token
        text.insert(pick(text.size() + 1), Tokens()[pick(Tokens().size())]);
        break;
      case 5:  // duplicate a line
        if (size_t newline = text.find('\n'); newline != std::string::npos) text += text.substr(0, newline + 1);
        break;
      default:  // append another seed
        text += Seeds()[pick(Seeds().size())];
        break;
    }
  }
  return text;
}

TEST(SessionLogFuzzSmoke, RandomAndMutatedInputsNeverBreakTheReader) {
  std::mt19937_64 random(0xc0ffee);
  int accepted = 0;
  int rejected = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string input;
    if (i % 8 == 0) {
      input.resize(random() % 256);
      for (char& c : input) c = static_cast<char>(random() % 256);
    } else {
      input = Mutate(Seeds()[random() % Seeds().size()], random);
    }
    std::optional<std::string> broken = testing::CheckSessionLogReader(input);
    ASSERT_FALSE(broken.has_value()) << *broken << "\ninput: " << ::testing::PrintToString(input);
    (ParseSessionLog(input, "x").ok() ? accepted : rejected)++;
  }
  // Both paths were exercised.
  EXPECT_GT(accepted, 100);
  EXPECT_GT(rejected, 100);
}

TEST(SessionLogFuzzSmoke, DeepNestingAndHugeLinesAreRejectedCleanly) {
  std::string start = R"({"v":1,"type":"session/start","ts":"t","data":{"cwd":"/w"}})" "\n";
  for (const std::string& line : {std::string(60000, '[') + std::string(60000, ']'), std::string(70000, 'x'),
                                  "{\"v\":1,\"a\":" + std::string(30000, '[') + std::string(30000, ']') + "}"}) {
    for (const std::string& input : {start + line + "\n" + start, start + line + "\n", start + line}) {
      std::optional<std::string> broken = testing::CheckSessionLogReader(input);
      EXPECT_FALSE(broken.has_value()) << *broken;
    }
  }
}

}  // namespace
}  // namespace corral
