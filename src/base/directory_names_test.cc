#include "base/directory_names.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

// Every name but "." and "..", sorted; with a bound, nothing once the
// directory holds more names than it (and exactly the names up to it).
TEST(DirectoryNames, ListsSortedAndStopsPastTheBound) {
  TestTree tree;
  for (const char* name : {"c", "a", "b"}) tree.File(std::string("dir/") + name);
  UniqueFd dir(::open(tree.Join("dir").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  ASSERT_TRUE(dir);
  const std::vector<std::string> all = {"a", "b", "c"};
  EXPECT_EQ(DirectoryNames(dir.get()), all);
  EXPECT_EQ(DirectoryNamesUpTo(dir.get(), 3), all);
  EXPECT_EQ(DirectoryNamesUpTo(dir.get(), 2), std::nullopt);
  EXPECT_EQ(DirectoryNamesUpTo(dir.get(), 0), std::nullopt);
  UniqueFd empty(::open(tree.Dir("empty").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  EXPECT_EQ(DirectoryNamesUpTo(empty.get(), 0), std::vector<std::string>{});
}

}  // namespace
}  // namespace corral
