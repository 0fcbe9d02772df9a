// core.hooksPath protection (husky and friends).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "base/unique_fd.h"
#include "policy/protected.h"
#include "testing/protected_test_support.h"
#include "repair/sweep.h"

namespace corral {
namespace {

namespace fs = std::filesystem;

class HooksPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/corral-hooks-XXXXXX";
    root_ = ::mkdtemp(pattern);
    fs::create_directories(root_ + "/.git/hooks");
  }
  void TearDown() override { fs::remove_all(root_); }
  void WriteConfig(const std::string& text) { std::ofstream(root_ + "/.git/config") << text; }
  const ProtectedPath* Find(const ProtectedSet& set, const std::string& path) {
    return ::corral::testing::FindProtected(set, path);
  }
  std::string root_;
};

TEST_F(HooksPathTest, RelativeHooksPathIsProtectedWhenItExists) {
  fs::create_directories(root_ + "/.husky/_");
  WriteConfig("[core]\n\trepositoryformatversion = 0\n\thooksPath = .husky/_\n");
  ProtectedSet set = DiscoverProtected({root_});
  const ProtectedPath* hooks = Find(set, root_ + "/.husky/_");
  ASSERT_NE(hooks, nullptr);
  EXPECT_EQ(hooks->state, ProtectedPath::State::kDirectory);
  // .husky between the root and the hooks is pinned against renames.
  bool anchored = false;
  for (const PinnedPath& anchor : set.anchors) anchored |= anchor.path == root_ + "/.husky";
  EXPECT_TRUE(anchored);
}

TEST_F(HooksPathTest, MissingHooksPathIsSweptAfterTheRun) {
  WriteConfig("[Core]\n  HooksPath = \"githooks\"\n");
  ProtectedSet set = DiscoverProtected({root_});
  const ProtectedPath* hooks = Find(set, root_ + "/githooks");
  ASSERT_NE(hooks, nullptr);
  EXPECT_EQ(hooks->state, ProtectedPath::State::kMissing);
}

TEST_F(HooksPathTest, OtherSectionsAndCommentsAreIgnored) {
  WriteConfig("# hooksPath = nope\n[alias]\n\thooksPath = alias-not-core\n[core]\n; hooksPath = commented\n");
  ProtectedSet set = DiscoverProtected({root_});
  EXPECT_EQ(Find(set, root_ + "/alias-not-core"), nullptr);
  EXPECT_EQ(Find(set, root_ + "/nope"), nullptr);
  EXPECT_EQ(Find(set, root_ + "/commented"), nullptr);
}

TEST_F(HooksPathTest, HooksPathOutsideEveryWritableRootNeedsNothing) {
  WriteConfig("[core]\n\thooksPath = /usr/share/git-hooks\n");
  ProtectedSet set = DiscoverProtected({root_});
  EXPECT_EQ(Find(set, "/usr/share/git-hooks"), nullptr);
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

class GitPointersTest : public HooksPathTest {};

TEST_F(GitPointersTest, CommondirIsProtectedWhetherOrNotItExists) {
  ProtectedSet missing = DiscoverProtected({root_});
  const ProtectedPath* entry = Find(missing, root_ + "/.git/commondir");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->state, ProtectedPath::State::kMissing);
  WriteConfig("[core]\n");
  std::ofstream(root_ + "/.git/commondir") << "../other\n";
  ProtectedSet present = DiscoverProtected({root_});
  entry = Find(present, root_ + "/.git/commondir");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->state, ProtectedPath::State::kFile);
}

TEST_F(GitPointersTest, AHookThatIsASymlinkIntoTheTreeProtectsItsTarget) {
  fs::create_directories(root_ + "/tools");
  std::ofstream(root_ + "/tools/pre-commit") << "#!/bin/sh\n";
  fs::create_symlink("../../tools/pre-commit", root_ + "/.git/hooks/pre-commit");
  ProtectedSet set = DiscoverProtected({root_});
  const ProtectedPath* target = Find(set, root_ + "/tools/pre-commit");
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->state, ProtectedPath::State::kFile);
}

TEST_F(GitPointersTest, ConfigIncludesAreProtectedTransitively) {
  WriteConfig("[include]\n\tpath = ../.gitconfig.local\n[includeIf \"gitdir:~/x/\"]\n\tpath = \"../more.inc\"\n");
  std::ofstream(root_ + "/.gitconfig.local") << "[include]\n path = nested.inc\n";
  ProtectedSet set = DiscoverProtected({root_});
  const ProtectedPath* first = Find(set, root_ + "/.gitconfig.local");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->state, ProtectedPath::State::kFile);
  const ProtectedPath* second = Find(set, root_ + "/more.inc");
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->state, ProtectedPath::State::kMissing);
  EXPECT_NE(Find(set, root_ + "/nested.inc"), nullptr);  // included by the included file
}

TEST_F(GitPointersTest, ACreatedGitDirectoryIsSweptWhole) {
  char pattern[] = "/tmp/corral-plain-XXXXXX";
  std::string plain = ::mkdtemp(pattern);
  ProtectedSet set = DiscoverProtected({plain});
  // The run turns the directory into a repository whose commondir points at
  // a config it controls.
  fs::create_directories(plain + "/.git/objects");
  std::ofstream(plain + "/.git/HEAD") << "ref: refs/heads/main\n";
  std::ofstream(plain + "/.git/commondir") << "../evil\n";
  std::string quarantine = plain + "-quarantine";
  fs::create_directories(quarantine);
  UniqueFd home(::open(quarantine.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  std::vector<SweepFinding> findings = SweepProtected(set, OpenSweepRoots(set), QuarantineHome{home.get(), quarantine}, "run");
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, plain + "/.git");
  EXPECT_FALSE(fs::exists(plain + "/.git"));
  EXPECT_TRUE(fs::exists(quarantine + "/quarantine/run" + plain + "/.git/commondir"));
  fs::remove_all(plain);
  fs::remove_all(quarantine);
}

}  // namespace
}  // namespace corral
