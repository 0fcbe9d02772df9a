// A linked worktree's repository is found only when every link agrees; any
// broken or foreign link gives no repository and a note naming the link.
#include "policy/linked_worktree.h"

#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

class LinkedWorktreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_.home = tree_.Join("home");
    host_.uid = ::geteuid();
    tree_.File("repo/.git/HEAD", "ref: refs/heads/main\n");
    tree_.Dir("repo/.git/objects");
    tree_.Dir("repo/.git/refs");
    tree_.File("repo/.git/worktrees/wt/commondir", "../..\n");
    tree_.File("repo/.git/worktrees/wt/gitdir", tree_.Join("wt/.git") + "\n");
    tree_.File("wt/.git", "gitdir: " + tree_.Join("repo/.git/worktrees/wt") + "\n");
  }
  std::optional<std::string> Find() { return LinkedWorktreeRepository(tree_.Join("wt"), host_, &note_); }
  TestTree tree_;
  HostContext host_;
  std::string note_;
};

TEST_F(LinkedWorktreeTest, AWorktreeTheRepositoryClaimsGivesItsCommonDir) {
  EXPECT_EQ(Find(), tree_.Join("repo/.git"));
  EXPECT_EQ(note_, "");
}

TEST_F(LinkedWorktreeTest, ARelativeGitdirIsReadFromTheWorkspace) {
  tree_.File("wt/.git", "gitdir: ../repo/.git/worktrees/wt\n");
  EXPECT_EQ(Find(), tree_.Join("repo/.git"));
}

TEST_F(LinkedWorktreeTest, ARepositoryDirectoryOrNoGitIsNotAWorktree) {
  tree_.Dir("plain");
  EXPECT_EQ(LinkedWorktreeRepository(tree_.Join("plain"), host_, &note_), std::nullopt);
  EXPECT_EQ(LinkedWorktreeRepository(tree_.Join("repo"), host_, &note_), std::nullopt);
  EXPECT_EQ(note_, "");
}

TEST_F(LinkedWorktreeTest, EachBrokenLinkIsNamed) {
  struct Case {
    std::string file, text, named;
  };
  const Case cases[] = {
      {"wt/.git", "gitdir: " + tree_.Join("nowhere") + "\n", "that gitdir does not exist"},
      {"wt/.git", "gitdir: " + tree_.Join("repo/.git") + "\n", "not a directory under a repository's worktrees/"},
      {"repo/.git/worktrees/wt/commondir", "../../../elsewhere\n", "its commondir does not name"},
      {"repo/.git/worktrees/wt/gitdir", tree_.Join("other/.git") + "\n", "does not point back at"},
  };
  for (const Case& c : cases) {
    SetUp();
    tree_.File(c.file, c.text);
    EXPECT_EQ(Find(), std::nullopt) << c.file;
    EXPECT_NE(note_.find(c.named), std::string::npos) << note_;
  }
}

TEST_F(LinkedWorktreeTest, ADirectoryThatIsNoRepositoryOrNotTheCallersIsRefused) {
  host_.uid = ::geteuid() + 1;
  EXPECT_EQ(Find(), std::nullopt);
  EXPECT_NE(note_.find("is not a directory of yours"), std::string::npos) << note_;
  host_.uid = ::geteuid();
  std::filesystem::remove(tree_.Join("repo/.git/HEAD"));
  EXPECT_EQ(Find(), std::nullopt);
  EXPECT_NE(note_.find("HEAD, objects/ or refs/ is missing"), std::string::npos) << note_;
}

}  // namespace
}  // namespace corral
