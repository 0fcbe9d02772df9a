#include "policy/path_text.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(ConfigPathText, ExpandsTildeOnlyAtTheStart) {
  EXPECT_EQ(ExpandHome("~", "/home/u").value(), "/home/u");
  EXPECT_EQ(ExpandHome("~/src", "/home/u").value(), "/home/u/src");
  EXPECT_EQ(ExpandHome("/a/~/b", "/home/u").value(), "/a/~/b");
  EXPECT_EQ(ExpandHome("rel", "/home/u").value(), "rel");
  EXPECT_FALSE(ExpandHome("~root/x", "/home/u").ok());
  EXPECT_FALSE(ExpandHome("~/x", "").ok());
}

TEST(ConfigPathText, CanonicalAbsolutePaths) {
  EXPECT_EQ(CanonicalAbsolutePath("/a//b/").value(), "/a/b");
  EXPECT_EQ(CanonicalAbsolutePath("/").value(), "/");
  EXPECT_EQ(CanonicalAbsolutePath("/a/..b/c.").value(), "/a/..b/c.");
  for (const std::string& bad : std::vector<std::string>{"", "a/b", "/a/../b", "/a/.", "/..", std::string("/a\0b", 4), "/a\x1b[31m"}) {
    EXPECT_FALSE(CanonicalAbsolutePath(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace corral
