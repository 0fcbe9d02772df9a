#include "base/small_file.h"

#include <gtest/gtest.h>

#include <string>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

TEST(SmallFile, ReadsTheWholeFileOrCutsItAtTheLimit) {
  TestTree tree;
  std::string big(10000, 'x');
  const std::string path = tree.File("big", big);
  EXPECT_EQ(ReadSmallFile(path.c_str()), big);
  EXPECT_EQ(ReadSmallFile(path.c_str(), 5000), std::string(5000, 'x'));
  EXPECT_EQ(ReadSmallFile(tree.File("empty", "").c_str()), "");
}

// A file that cannot be opened, or whose read fails (a directory: EISDIR,
// as /proc/self/attr/current fails with EINVAL), is nullopt, never a throw.
TEST(SmallFile, AFileThatCannotBeReadIsNothing) {
  TestTree tree;
  EXPECT_EQ(ReadSmallFile(tree.Join("missing").c_str()), std::nullopt);
  EXPECT_EQ(ReadSmallFile(tree.Dir("dir").c_str()), std::nullopt);
}

TEST(SmallFile, ANumberIsTheFirstOneOrTheFallback) {
  TestTree tree;
  EXPECT_EQ(ReadSmallNumber(tree.File("n", "42\n").c_str(), -1), 42);
  EXPECT_EQ(ReadSmallNumber(tree.File("neg", " -3 7").c_str(), -1), -3);
  EXPECT_EQ(ReadSmallNumber(tree.File("word", "on\n").c_str(), -1), -1);
  EXPECT_EQ(ReadSmallNumber(tree.File("none", "").c_str(), 9), 9);
  EXPECT_EQ(ReadSmallNumber(tree.Join("missing").c_str(), 9), 9);
  EXPECT_EQ(ReadSmallNumber(tree.File("huge", "99999999999999999999999").c_str(), 9), 9);
}

}  // namespace
}  // namespace corral
