// Run from a subdirectory of a repository, the workspace is the
// repository's top; never "/" or the home, never a directory not the
// caller's, never through a symlinked .git.
#include "resolve/repository_top.h"

#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

class RepositoryTopTest : public ::testing::Test {
 protected:
  HostContext Host(const std::string& cwd) const {
    HostContext host;
    host.cwd = tree_.Join(cwd);
    host.home = tree_.Join("home");
    host.uid = ::geteuid();
    host.gid = ::getegid();
    return host;
  }
  TestTree tree_;
  std::string note_;
};

TEST_F(RepositoryTopTest, ASubdirectoryOfARepositoryGivesItsTop) {
  tree_.Dir("repo/.git");
  tree_.Dir("repo/src/deep");
  EXPECT_EQ(RepositoryTop(Host("repo/src/deep"), &note_), tree_.Join("repo"));
  EXPECT_EQ(note_, "");
  tree_.File("wt/.git", "gitdir: /elsewhere\n");  // a linked worktree's top
  tree_.Dir("wt/sub");
  EXPECT_EQ(RepositoryTop(Host("wt/sub"), &note_), tree_.Join("wt"));
}

TEST_F(RepositoryTopTest, TheTopItselfOrNoRepositoryChangesNothing) {
  tree_.Dir("repo/.git");
  tree_.Dir("plain/sub");
  EXPECT_EQ(RepositoryTop(Host("repo"), &note_), std::nullopt);
  EXPECT_EQ(RepositoryTop(Host("plain/sub"), &note_), std::nullopt);
  EXPECT_EQ(note_, "");
}

TEST_F(RepositoryTopTest, TheHomeIsNeverTheWorkspaceAndTheWalkStopsThere) {
  tree_.Dir("home/.git");  // a dotfiles repository
  tree_.Dir("home/proj/sub");
  EXPECT_EQ(RepositoryTop(Host("home/proj/sub"), &note_), std::nullopt);
  EXPECT_NE(note_.find("the home directory is never the workspace"), std::string::npos) << note_;
  std::filesystem::remove(tree_.Join("home/.git"));
  tree_.Dir(".git");  // above the home: never reached from inside it
  EXPECT_EQ(RepositoryTop(Host("home/proj/sub"), &note_), std::nullopt);
  EXPECT_EQ(note_, "");
}

TEST_F(RepositoryTopTest, ASymlinkedGitIsNotARepositoryTop) {
  tree_.Dir("real");
  tree_.Dir("repo/sub");
  tree_.Symlink("repo/.git", tree_.Join("real"));
  EXPECT_EQ(RepositoryTop(Host("repo/sub"), &note_), std::nullopt);
}

TEST_F(RepositoryTopTest, ARepositoryNotTheCallersIsRefusedWithANote) {
  tree_.Dir("repo/.git");
  tree_.Dir("repo/sub");
  HostContext host = Host("repo/sub");
  host.uid += 1;
  EXPECT_EQ(RepositoryTop(host, &note_), std::nullopt);
  EXPECT_NE(note_.find("it is not yours"), std::string::npos) << note_;
}

}  // namespace
}  // namespace corral
