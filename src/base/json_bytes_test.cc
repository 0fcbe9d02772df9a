// Byte strings through JSON: lossless where exactness matters, never a throw.
#include "base/json_bytes.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(JsonBytes, InvalidUtf8RoundTripsAndValidTextIsUnchanged) {
  nlohmann::json value = {{"path", std::string("/w/x\x9b")}, {"list", {"plain", std::string("\xff\xfe")}}, {"n", 3}};
  nlohmann::json encoded = EncodeBytes(value);
  std::string text = encoded.dump();  // must not throw
  EXPECT_EQ(encoded["path"], (nlohmann::json{{"bytes_hex", "2f772f789b"}}));
  EXPECT_EQ(encoded["list"][0], "plain");
  EXPECT_EQ(DecodeBytes(nlohmann::json::parse(text)), value);
  nlohmann::json valid = {{"path", "/w/é"}, {"n", 1}};
  EXPECT_EQ(EncodeBytes(valid).dump(), valid.dump());
  EXPECT_FALSE(IsJsonUtf8("x\x9b"));
  EXPECT_TRUE(IsJsonUtf8("x\xc3\xa9"));
}

TEST(JsonBytes, DifferentBytesNeverEncodeAlike) {
  EXPECT_NE(EncodeBytes(std::string("a\x9b")).dump(), EncodeBytes(std::string("a\x9c")).dump());
  EXPECT_NE(EncodeBytes(std::string("a\x9b")).dump(), EncodeBytes(std::string("a\xef\xbf\xbd")).dump());
}

}  // namespace
}  // namespace corral
