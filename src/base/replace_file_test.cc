#include "base/replace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "base/directory_names.h"
#include "base/unique_fd.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

class ReplaceFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = UniqueFd(::open(tree_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    ASSERT_TRUE(dir_);
  }

  std::string Read(const std::string& name) const {
    UniqueFd fd(::openat(dir_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    std::string text;
    char buffer[4096];
    for (ssize_t n; fd && (n = ::read(fd.get(), buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(n));
    return text;
  }
  mode_t ModeOf(const std::string& name) const {
    struct stat st;
    return ::fstatat(dir_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 ? st.st_mode : 0;
  }

  corral::testing::TestTree tree_;
  const std::string& path_ = tree_.path();
  UniqueFd dir_;
};

TEST_F(ReplaceFileTest, ReplacesTheWholeFileWithExactlyTheModeAndLeavesNoTemporary) {
  ASSERT_TRUE(ReplaceFileAt(dir_.get(), "f", "old contents, longer", 0600, Durability::kUnsynced, "f").ok());
  mode_t mask = ::umask(077);
  Result<void> replaced = ReplaceFileAt(dir_.get(), "f", "new", 0644, Durability::kSynced, "f");
  ::umask(mask);
  ASSERT_TRUE(replaced.ok()) << replaced.error().ToString();
  EXPECT_EQ(Read("f"), "new");
  EXPECT_EQ(ModeOf("f") & 07777, 0644u);
  EXPECT_EQ(DirectoryNames(dir_.get()), std::vector<std::string>{"f"});
}

TEST_F(ReplaceFileTest, ASymlinkAtTheNameIsReplacedNeverFollowed) {
  ASSERT_EQ(::symlinkat((path_ + "/target").c_str(), dir_.get(), "f"), 0);
  ASSERT_TRUE(ReplaceFileAt(dir_.get(), "target", "untouched", 0600, Durability::kUnsynced, "target").ok());
  ASSERT_TRUE(ReplaceFileAt(dir_.get(), "f", "mine", 0600, Durability::kUnsynced, "f").ok());
  EXPECT_TRUE(S_ISREG(ModeOf("f")));
  EXPECT_EQ(Read("f"), "mine");
  EXPECT_EQ(Read("target"), "untouched");
}

TEST_F(ReplaceFileTest, AFailureLeavesTheNameAsItWasAndNoTemporary) {
  ASSERT_EQ(::mkdirat(dir_.get(), "d", 0700), 0);
  Result<void> refused = ReplaceFileAt(dir_.get(), "d", "x", 0600, Durability::kUnsynced, "cannot write d");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().ToString().find("cannot write d"), std::string::npos) << refused.error().ToString();
  EXPECT_NE(refused.error().ToString().find("renameat"), std::string::npos) << refused.error().ToString();
  EXPECT_TRUE(S_ISDIR(ModeOf("d")));
  EXPECT_EQ(DirectoryNames(dir_.get()), std::vector<std::string>{"d"});
}

// Writers racing on one name: each makes its own temporary, and what is
// left is one writer's contents, whole.
TEST_F(ReplaceFileTest, RacingWritersLeaveOneWholeFile) {
  std::vector<std::thread> writers;
  for (int i = 0; i < 8; ++i) {
    writers.emplace_back([this, i] {
      std::string text(100000, static_cast<char>('a' + i));
      for (int round = 0; round < 20; ++round) {
        EXPECT_TRUE(ReplaceFileAt(dir_.get(), "f", text, 0600, Durability::kUnsynced, "f").ok());
      }
    });
  }
  for (std::thread& writer : writers) writer.join();
  std::string left = Read("f");
  ASSERT_EQ(left.size(), 100000u);
  EXPECT_EQ(left, std::string(100000, left[0]));
  EXPECT_EQ(DirectoryNames(dir_.get()), std::vector<std::string>{"f"});
}

TEST(ReplaceFileTemporary, KnowsItsOwnNamesOnly) {
  EXPECT_TRUE(IsReplaceFileTemporary(".corral-new-0123456789abcdef"));
  EXPECT_FALSE(IsReplaceFileTemporary(".corral-new-0123456789abcde"));
  EXPECT_FALSE(IsReplaceFileTemporary(".corral-new-0123456789abcdeg"));
  EXPECT_FALSE(IsReplaceFileTemporary("corral-new-0123456789abcdef"));
}

}  // namespace
}  // namespace corral
