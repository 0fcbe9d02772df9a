#include "exec/denials.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(DenialScanner, FindsKernelTexts) {
  DenialScanner scanner;
  scanner.Feed("touch: cannot touch 'x': Read-only file system\n");
  ASSERT_TRUE(scanner.matched());
  EXPECT_EQ(*scanner.matched(), "read-only file system");
}

TEST(DenialScanner, MatchesAcrossChunks) {
  DenialScanner scanner;
  scanner.Feed("cat: secret: Permis");
  EXPECT_FALSE(scanner.matched());
  scanner.Feed("sion denied\n");
  EXPECT_TRUE(scanner.matched());
}

TEST(DenialScanner, IgnoresOrdinaryErrors) {
  DenialScanner scanner;
  scanner.Feed("cat: missing: No such file or directory\n");
  EXPECT_FALSE(scanner.matched());
}

TEST(DenialScanner, IsCaseInsensitive) {
  DenialScanner scanner({"Operation not permitted"});
  scanner.Feed("OPERATION NOT PERMITTED");
  EXPECT_TRUE(scanner.matched());
}

}  // namespace
}  // namespace corral
