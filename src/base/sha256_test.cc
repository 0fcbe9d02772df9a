#include "base/sha256.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// RFC 4231's test cases 1, 2 and 6 (a key longer than a block is hashed
// first), an empty key and message, and a key of exactly one block.
TEST(HmacSha256, KnownVectors) {
  struct Case {
    std::string key;
    std::string data;
    const char* mac;
  };
  const Case cases[] = {
      {std::string(20, '\x0b'), "Hi There", "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
      {"Jefe", "what do ya want for nothing?", "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
      {std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First",
       "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
      {"", "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"},
      {std::string(64, 'k'), "exactly one block of key", "baa93ea4ccc7062ed6870c5e7937dbd35ad7791df4e29df9addeb429ff491acf"},
  };
  for (const Case& c : cases) {
    std::string mac = HmacSha256(c.key, c.data);
    ASSERT_EQ(mac.size(), 32u);
    std::string hex;
    for (unsigned char byte : mac) {
      hex.push_back("0123456789abcdef"[byte >> 4]);
      hex.push_back("0123456789abcdef"[byte & 0xf]);
    }
    EXPECT_EQ(hex, c.mac) << c.data;
  }
}

TEST(Sha256, RecognisesHex) {
  EXPECT_TRUE(IsSha256Hex(Sha256Hex("x")));
  EXPECT_FALSE(IsSha256Hex("abc"));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'G')));
  EXPECT_FALSE(IsSha256Hex(std::string(64, 'A')));  // lower case only
}

}  // namespace
}  // namespace corral
