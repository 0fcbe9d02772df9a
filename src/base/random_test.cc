#include "base/random.h"

#include <gtest/gtest.h>

#include "base/hex.h"

namespace corral {
namespace {

TEST(RandomBytes, GivesTheCountAskedForAndDiffers) {
  Result<std::string> a = RandomBytes(32);
  Result<std::string> b = RandomBytes(32);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 32u);
  EXPECT_NE(*a, *b);
  Result<std::string> none = RandomBytes(0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(HexEncode, LowerCaseTwoDigitsPerByte) {
  EXPECT_EQ(HexEncode(std::string_view("\x00\x01\x7f\x80\xff", 5)), "00017f80ff");
  EXPECT_EQ(HexEncode(""), "");
}

TEST(HexDecode, InvertsHexEncodeAndRefusesWhatIsNotHex) {
  const std::string bytes("\x00\x01\x7f\x80\xff", 5);
  Result<std::string> back = HexDecode(HexEncode(bytes));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, bytes);
  EXPECT_FALSE(HexDecode("abc").ok());
  EXPECT_FALSE(HexDecode("zz").ok());
  EXPECT_EQ(HexDecode("").value(), "");
}

}  // namespace
}  // namespace corral
