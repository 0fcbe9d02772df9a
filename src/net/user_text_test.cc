// Split keeps empty pieces; PrintableText escapes control bytes, bytes past
// ASCII and the backslash, and nothing else.
#include "net/user_text.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(UserText, SplitKeepsEmptyPieces) {
  EXPECT_EQ(Split("a.example.com", '.'), (std::vector<std::string_view>{"a", "example", "com"}));
  EXPECT_EQ(Split("a..b.", '.'), (std::vector<std::string_view>{"a", "", "b", ""}));
  EXPECT_EQ(Split("", ','), (std::vector<std::string_view>{""}));
}

TEST(UserText, PrintableTextEscapesControlBytesAndTheBackslash) {
  EXPECT_EQ(PrintableText("a.b-c:1 [::1]/8,*"), "a.b-c:1 [::1]/8,*");
  EXPECT_EQ(PrintableText(std::string("\x1b[1m\\\x00\xff", 7)), "\\x1b[1m\\x5c\\x00\\xff");
}

}  // namespace
}  // namespace corral
