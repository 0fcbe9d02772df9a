// A repository the run created: what git init makes is admitted (a copy
// built from what was checked goes back); anything that could make a host
// git run code keeps the whole repository in the quarantine, named.
#include "repair/fresh_repository.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "base/unique_fd.h"
#include "policy/protected.h"
#include "repair/sweep.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;
using Outcome = SweepFinding::Outcome;

constexpr char kInitConfig[] =
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n";

class FreshRepositoryTest : public ::testing::Test {
 protected:
  FreshRepositoryTest() : ws_(tree_.Dir("ws")), state_(tree_.Dir("state")) {
    home_.Reset(::open(state_.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    set_ = DiscoverProtected({ws_});
  }

  // What `git init` makes, as git 2.39 makes it.
  void GitInit() {
    tree_.File("ws/.git/HEAD", "ref: refs/heads/main\n");
    tree_.File("ws/.git/config", kInitConfig);
    tree_.File("ws/.git/description", "Unnamed repository\n");
    tree_.File("ws/.git/hooks/pre-commit.sample", "#!/bin/sh\n");
    tree_.File("ws/.git/info/exclude", "# git ls-files --others --exclude-from=.git/info/exclude\n");
    tree_.Dir("ws/.git/objects/info");
    tree_.Dir("ws/.git/objects/pack");
    tree_.Dir("ws/.git/refs/heads");
    tree_.Dir("ws/.git/refs/tags");
    tree_.Dir("ws/.git/branches");
  }

  SweepFinding Sweep() {
    std::vector<SweepFinding> findings = SweepProtected(set_, OpenSweepRoots(set_), {home_.get(), state_}, "run");
    EXPECT_EQ(findings.size(), 1u);
    return findings.empty() ? SweepFinding{} : findings[0];
  }

  void ExpectQuarantinedFor(const std::string& why) {
    SweepFinding finding = Sweep();
    EXPECT_EQ(finding.outcome, Outcome::kQuarantined);
    EXPECT_NE(finding.detail.find(why), std::string::npos) << finding.detail;
    EXPECT_FALSE(TestTree::Exists(ws_ + "/.git"));
    EXPECT_TRUE(TestTree::Exists(state_ + "/quarantine/run" + ws_ + "/.git"));
  }

  TestTree tree_;
  std::string ws_, state_;
  UniqueFd home_;
  ProtectedSet set_;
};

TEST_F(FreshRepositoryTest, WhatGitInitMakesIsAdmittedWithoutItsHooks) {
  GitInit();
  tree_.File("ws/.git/objects/ab/cdef", "blob");
  SweepFinding finding = Sweep();
  EXPECT_EQ(finding.outcome, Outcome::kAdmitted) << finding.detail << finding.error;
  EXPECT_EQ(finding.path, ws_ + "/.git");
  EXPECT_FALSE(AnyLeftInPlace({finding}));
  EXPECT_EQ(TestTree::Read(ws_ + "/.git/config"), kInitConfig);
  EXPECT_EQ(TestTree::Read(ws_ + "/.git/HEAD"), "ref: refs/heads/main\n");
  EXPECT_EQ(TestTree::Read(ws_ + "/.git/objects/ab/cdef"), "blob");
  EXPECT_TRUE(TestTree::Exists(ws_ + "/.git/refs/heads"));
  EXPECT_TRUE(TestTree::Exists(ws_ + "/.git/info/exclude"));
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git/hooks")) << "the samples stay in the quarantine";
  EXPECT_TRUE(TestTree::Exists(finding.moved_to + "/hooks/pre-commit.sample"));
}

TEST_F(FreshRepositoryTest, TheConfigThatGoesBackIsANewFileWithTheCheckedBytes) {
  GitInit();
  struct stat before;
  ASSERT_EQ(::stat((ws_ + "/.git/config").c_str(), &before), 0);
  EXPECT_EQ(Sweep().outcome, Outcome::kAdmitted);
  struct stat after;
  ASSERT_EQ(::stat((ws_ + "/.git/config").c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino) << "a descriptor another run holds on the old config reaches nothing";
}

TEST_F(FreshRepositoryTest, AHookIsNamedAndKeepsTheRepositoryOut) {
  GitInit();
  tree_.File("ws/.git/hooks/pre-commit", "#!/bin/sh\ntouch /tmp/x\n");
  ExpectQuarantinedFor("hooks/pre-commit is a hook git could run");
}

TEST_F(FreshRepositoryTest, AnUnsafeConfigKeyIsNamedAndKeepsTheRepositoryOut) {
  GitInit();
  tree_.File("ws/.git/config", std::string(kInitConfig) + "\tfsmonitor = touch /tmp/x\n");
  ExpectQuarantinedFor("core.fsmonitor (line 6) is not on the safe list");
}

TEST_F(FreshRepositoryTest, ASymlinkedConfigKeepsTheRepositoryOut) {
  GitInit();
  std::string elsewhere = tree_.File("elsewhere", "[core]\n\tfsmonitor = sh\n");
  ASSERT_EQ(::unlink((ws_ + "/.git/config").c_str()), 0);
  tree_.Symlink("ws/.git/config", elsewhere);
  ExpectQuarantinedFor("config is not a regular file");
}

TEST_F(FreshRepositoryTest, PointersToOtherGitdirsAndObjectsKeepTheRepositoryOut) {
  for (const char* name : {"commondir", "config.worktree", "modules/x/config", "worktrees/w/gitdir",
                           "rebase-merge/git-rebase-todo", "info/attributes", "objects/info/alternates"}) {
    GitInit();
    tree_.File(std::string("ws/.git/") + name, "../elsewhere\n");
    std::string top = std::string(name).substr(0, std::string(name).find('/'));
    ExpectQuarantinedFor(std::string(name).starts_with("info/") || std::string(name).starts_with("objects/")
                             ? name
                             : top.c_str());
    std::error_code ignored;
    std::filesystem::remove_all(state_ + "/quarantine", ignored);
  }
}

TEST_F(FreshRepositoryTest, ASymlinkOrAFifoAmongTheObjectsKeepsTheRepositoryOut) {
  GitInit();
  tree_.Symlink("ws/.git/refs/heads/main", "/etc/passwd");
  ExpectQuarantinedFor("refs/heads/main is not a regular file or a directory");
}

TEST_F(FreshRepositoryTest, ADirectoryThatIsNoRepositoryIsNotAdmitted) {
  tree_.File("ws/.git/config", kInitConfig);
  ExpectQuarantinedFor("not a repository git made");
}

}  // namespace
}  // namespace corral
