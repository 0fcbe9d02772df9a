#include "base/sha256.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, RecognisesHex) {
  EXPECT_TRUE(IsSha256Hex(Sha256Hex("x")));
  EXPECT_FALSE(IsSha256Hex("abc"));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'G')));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'A')));  // lower case only
}

}  // namespace
}  // namespace corral
