// ReadGitFile: what a run may plant where corral reads git files (a FIFO,
// a device, a symlink, a huge file) is reported, never waited on or read.
#include "policy/git_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

TEST(ReadGitFile, ReadsARegularFile) {
  TestTree tree;
  GitFileText file = ReadGitFile(tree.File("config", "[core]\n\thooksPath = x\n"));
  EXPECT_TRUE(file.found);
  EXPECT_EQ(file.problem, "");
  EXPECT_EQ(file.text, "[core]\n\thooksPath = x\n");
}

TEST(ReadGitFile, AMissingFileIsNoProblem) {
  TestTree tree;
  GitFileText file = ReadGitFile(tree.Join("none"));
  EXPECT_FALSE(file.found);
  EXPECT_EQ(file.problem, "");
  EXPECT_FALSE(ReadGitFile(tree.Join("none/config")).found);
}

TEST(ReadGitFile, AFifoIsReportedAtOnce) {
  TestTree tree;
  ASSERT_EQ(::mkfifo(tree.Join("config").c_str(), 0644), 0);
  auto start = std::chrono::steady_clock::now();
  GitFileText file = ReadGitFile(tree.Join("config"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_FALSE(file.found);
  EXPECT_EQ(file.problem, "not a regular file");
}

TEST(ReadGitFile, DevicesAndSymlinksAreNotRead) {
  TestTree tree;
  EXPECT_EQ(ReadGitFile("/dev/zero").problem, "not a regular file");
  tree.File("real", "[core]\n");
  tree.Symlink("link", "real");
  EXPECT_EQ(ReadGitFile(tree.Join("link")).problem, "a symlink");
  tree.Symlink("dir", tree.path());
  EXPECT_EQ(ReadGitFile(tree.Join("dir/real")).problem, "a symlink") << "nor a symlink on the way";
}

TEST(ReadGitFile, AFileOverTheLimitIsNotRead) {
  TestTree tree;
  std::string big = tree.File("config");
  ASSERT_EQ(::truncate(big.c_str(), static_cast<off_t>(kMaxGitFileBytes) + 1), 0);
  GitFileText file = ReadGitFile(big);
  EXPECT_FALSE(file.found);
  EXPECT_EQ(file.text, "");
  EXPECT_EQ(file.problem, "larger than 1048576 bytes");
}

TEST(ParseGitConfigRefs, FindsHooksPathAndIncludes) {
  GitConfigRefs refs = ParseGitConfigRefs(
      "# hooksPath = no\n[Core]\n  HooksPath = \"githooks\"\n[include]\n\tpath = a.inc\n"
      "[includeIf \"gitdir:~/x/\"]\n\tpath = b.inc\n[alias]\n\tpath = c.inc\n");
  EXPECT_EQ(refs.hooks_path, "githooks");
  EXPECT_EQ(refs.includes, (std::vector<std::string>{"a.inc", "b.inc"}));
}

TEST(FirstLine, DropsTheLineEnd) { EXPECT_EQ(FirstLine("gitdir: ../x \r\nmore\n"), "gitdir: ../x"); }

}  // namespace
}  // namespace corral
