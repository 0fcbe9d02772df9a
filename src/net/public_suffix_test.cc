// IsCommonPublicSuffix on listed suffixes and on names beside and below them;
// the list is sorted, which the binary search needs.
#include "net/public_suffix.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace corral {
namespace {

TEST(PublicSuffix, ListedSuffixesOnly) {
  for (const char* name : {"co.uk", "org.uk", "ac.uk", "gov.uk", "com.au", "net.au", "org.au", "co.jp", "ne.jp",
                           "co.nz", "com.br", "com.cn", "com.mx", "co.in", "co.za", "github.io",
                           "githubusercontent.com", "herokuapp.com", "appspot.com", "cloudfront.net", "amazonaws.com",
                           "azurewebsites.net", "vercel.app", "netlify.app", "pages.dev", "workers.dev", "web.app",
                           "firebaseapp.com", "blogspot.com", "s3.amazonaws.com", "gitlab.io"}) {
    EXPECT_TRUE(IsCommonPublicSuffix(name)) << name;
  }
  for (const char* name : {"uk", "com", "example.co.uk", "example.com", "io", "co.uk.", "CO.UK", "github.com",
                           "pvt.k12.ma.us", ""}) {
    EXPECT_FALSE(IsCommonPublicSuffix(name)) << name;
  }
}

TEST(PublicSuffix, TheListIsSortedMultiLabelAndLowercase) {
  std::span<const std::string_view> list = CommonPublicSuffixes();
  ASSERT_GE(list.size(), 30u);
  EXPECT_TRUE(std::is_sorted(list.begin(), list.end()));
  EXPECT_EQ(std::adjacent_find(list.begin(), list.end()), list.end());
  for (std::string_view name : list) {
    EXPECT_NE(name.find('.'), std::string_view::npos) << name;
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-."), std::string_view::npos) << name;
    EXPECT_TRUE(IsCommonPublicSuffix(name)) << name;
  }
}

}  // namespace
}  // namespace corral
