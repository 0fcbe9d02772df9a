// What an earlier run can plant for DiscoverProtected to find: pointers in
// gitdirs under .git/modules and .git/worktrees, unreadable git files,
// pointers at the root itself, dangling pointers. Discovery must neither
// hang, nor read without bound, nor bind a whole root read-only, nor look
// outside the roots on a planted pointer's word.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>

#include "testing/test_scratch_dir.h"
#include "policy/protected.h"
#include "testing/protected_test_support.h"

namespace corral {
namespace {

using ::corral::testing::StateOf;
using ::corral::testing::TestTree;
using State = ProtectedPath::State;

bool Bound(const ProtectedSet& set, const std::string& path) {
  const ProtectedPath* entry = ::corral::testing::FindProtected(set, path);
  return entry != nullptr && (entry->state == State::kDirectory || entry->state == State::kFile);
}

bool NoteMentions(const ProtectedSet& set, const std::string& text) {
  return std::any_of(set.notes.begin(), set.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

class PlantedPointers : public ::testing::Test {
 protected:
  PlantedPointers() : ws_(tree_.Dir("ws")) {
    tree_.Dir("ws/.git/hooks");
    tree_.File("ws/.git/config", "[core]\n");
  }
  TestTree tree_;
  std::string ws_;
};

TEST_F(PlantedPointers, NestedGitdirsAreProtectedButNothingInThemIsFollowedOrRead) {
  // A FIFO config (would block every later run), an include of /dev/zero
  // (would grow corral without bound), hooks and a hooks path naming the
  // root (would make it read-only), and a hook through a host directory
  // back into the tree (would say whether the host directory exists).
  tree_.Dir("ws/.git/worktrees/fifo");
  ASSERT_EQ(::mkfifo(tree_.Join("ws/.git/worktrees/fifo/config").c_str(), 0644), 0);
  tree_.File("ws/.git/worktrees/zero/config", "[include]\n\tpath = /dev/zero\n[core]\n\thooksPath = " + ws_ + "\n");
  tree_.Dir("ws/.git/modules/evil");
  tree_.Symlink("ws/.git/modules/evil/hooks", ws_);
  tree_.Dir("ws/.git/modules/p/hooks");
  tree_.Dir("host/secret");
  tree_.Symlink("ws/.git/modules/p/hooks/a", tree_.Join("host/secret/../../ws/m_a"));
  tree_.File("ws/m_a");

  auto start = std::chrono::steady_clock::now();
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));

  EXPECT_EQ(StateOf(set, ws_), "absent");
  EXPECT_EQ(StateOf(set, ws_ + "/m_a"), "absent");
  EXPECT_EQ(StateOf(set, ws_ + "/.git/modules/evil/hooks"), "symlink") << "recorded, not followed";
  EXPECT_TRUE(Bound(set, ws_ + "/.git/modules/p/hooks"));
  EXPECT_TRUE(Bound(set, ws_ + "/.git/worktrees/zero/config"));
  EXPECT_TRUE(Bound(set, ws_ + "/.git/worktrees/fifo/config")) << "bound where it is, never opened";
  EXPECT_TRUE(set.notes.empty()) << set.notes.front();
}

TEST_F(PlantedPointers, TheUsersOwnGitFilesAreReadWithBounds) {
  tree_.File("ws/.git/config", "[include]\n\tpath = /dev/zero\n\tpath = ../big.inc\n\tpath = ../fifo.inc\n");
  std::string big = tree_.File("ws/big.inc");
  ASSERT_EQ(::truncate(big.c_str(), off_t{2} << 20), 0);
  ASSERT_EQ(::mkfifo(tree_.Join("ws/fifo.inc").c_str(), 0644), 0);

  auto start = std::chrono::steady_clock::now();
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_TRUE(NoteMentions(set, "/dev/zero: not read (not a regular file)"));
  EXPECT_TRUE(NoteMentions(set, "big.inc: not read (larger than"));
  EXPECT_TRUE(NoteMentions(set, "fifo.inc: not read (not a regular file)"));
  EXPECT_TRUE(Bound(set, big)) << "still protected: it is in the tree";
}

TEST_F(PlantedPointers, TooManyNestedGitdirsAreCutOffWithANote) {
  for (int i = 0; i < 100; ++i) tree_.Dir("ws/.git/modules/m" + std::to_string(1000 + i) + "/hooks");
  ProtectedSet set = DiscoverProtected({ws_});
  size_t nested = std::count_if(set.paths.begin(), set.paths.end(), [&](const ProtectedPath& entry) {
    return entry.path.starts_with(ws_ + "/.git/modules/") && entry.path.ends_with("/hooks");
  });
  EXPECT_EQ(nested, 64u);
  EXPECT_TRUE(NoteMentions(set, "more than 64 gitdirs"));
}

TEST_F(PlantedPointers, AHooksPathAtTheRootProtectsTheHookNamesNotTheRoot) {
  tree_.File("ws/.git/config", "[core]\n\thooksPath = .\n");
  tree_.File("ws/pre-push", "#!/bin/sh\n");
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_EQ(StateOf(set, ws_), "absent");
  EXPECT_TRUE(Bound(set, ws_ + "/pre-push"));
  EXPECT_EQ(StateOf(set, ws_ + "/pre-commit"), "missing");

  tree_.File("ws/.git/config", "[core]\n\thooksPath = /\n");
  set = DiscoverProtected({ws_});
  EXPECT_EQ(StateOf(set, "/"), "absent");
  EXPECT_EQ(StateOf(set, "/pre-commit"), "absent");
}

TEST_F(PlantedPointers, ASymlinkToTheRootIsNotBound) {
  tree_.Symlink("ws/.vscode", ".");
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_EQ(StateOf(set, ws_ + "/.vscode"), "symlink");
  EXPECT_EQ(StateOf(set, ws_), "absent");
  EXPECT_TRUE(NoteMentions(set, "it is a writable root"));
}

TEST_F(PlantedPointers, APlantedSymlinkOnTheWayToAHooksPathIsNotFollowedOut) {
  tree_.File("ws/.git/config", "[core]\n\thooksPath = tools/hooks\n");
  tree_.Dir("host/secret");
  tree_.Symlink("ws/tools", tree_.Join("host/secret/../../ws/m_a"));
  tree_.Dir("ws/m_a/hooks");
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_EQ(StateOf(set, ws_ + "/m_a/hooks"), "absent");
}

TEST_F(PlantedPointers, DanglingPointersRecordTheirTargetAsMissing) {
  tree_.Symlink("ws/.git/hooks/pre-commit", "../../scripts/pre-commit");
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_EQ(StateOf(set, ws_ + "/scripts"), "missing") << "the first missing component is swept";

  TestTree other;
  std::string wt = other.Dir("wt");
  other.File("wt/.git", "gitdir: .realgit\n");
  ProtectedSet pointer = DiscoverProtected({wt});
  EXPECT_EQ(StateOf(pointer, wt + "/.realgit"), "missing");
}

}  // namespace
}  // namespace corral
