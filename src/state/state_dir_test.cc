// corral's state directory: made 0700 when missing, and refused (one code,
// state_dir_unsafe) when a component is a symlink, when another user may
// write it, or when a directory above it is writable by others and not
// sticky.
#include "state/state_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

mode_t ModeOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

void ExpectUnsafe(const Result<StateDir>& state, const std::string& words) {
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().code(), kStateDirUnsafe) << state.error().ToString();
  EXPECT_NE(state.error().message().find(words), std::string::npos) << state.error().ToString();
}

TEST(StateDir, MissingDirectoriesAreMadePrivate) {
  TestTree tree;
  Result<StateDir> state = StateDir::OpenBelow(tree.Join("home/.local/state"), StateDir::Create::kYes);
  ASSERT_TRUE(state.ok()) << state.error().ToString();
  EXPECT_EQ(state->path(), tree.Join("home/.local/state/corral"));
  EXPECT_EQ(ModeOf(tree.Join("home/.local/state")), 0700u);
  EXPECT_EQ(ModeOf(state->path()), 0700u);
  Result<UniqueFd> pending = state->Subdir("pending", StateDir::Create::kYes);
  ASSERT_TRUE(pending.ok()) << pending.error().ToString();
  EXPECT_EQ(ModeOf(state->path() + "/pending"), 0700u);
}

// A caller that opened it hands on a copy of the descriptor: the same
// directory, and `corral` checked again, so one made writable by others
// since the open is refused as Open would refuse it.
TEST(StateDir, ADuplicateIsTheSameDirectoryCheckedAgain) {
  TestTree tree;
  Result<StateDir> state = StateDir::OpenBelow(tree.Join("state"), StateDir::Create::kYes);
  ASSERT_TRUE(state.ok()) << state.error().ToString();
  Result<StateDir> copy = state->Duplicate();
  ASSERT_TRUE(copy.ok()) << copy.error().ToString();
  EXPECT_EQ(copy->path(), state->path());
  EXPECT_NE(copy->fd(), state->fd());
  struct stat one = {};
  struct stat two = {};
  ASSERT_EQ(::fstat(state->fd(), &one), 0);
  ASSERT_EQ(::fstat(copy->fd(), &two), 0);
  EXPECT_EQ(one.st_ino, two.st_ino);
  EXPECT_EQ(one.st_dev, two.st_dev);
  ASSERT_EQ(::chmod(state->path().c_str(), 0770), 0);
  ExpectUnsafe(state->Duplicate(), "writable by group or others");
  EXPECT_FALSE(StateDir().Duplicate().ok());
}

TEST(StateDir, NothingIsMadeWhenAskedNotTo) {
  TestTree tree;
  Result<StateDir> state = StateDir::OpenBelow(tree.Join("state"), StateDir::Create::kNo);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().code(), kStateDirUnavailable);
  EXPECT_FALSE(TestTree::Exists(tree.Join("state")));
}

TEST(StateDir, ASymlinkAnywhereOnTheWayIsRefused) {
  TestTree tree;
  std::string elsewhere = tree.Dir("workspace/planted");
  tree.Dir("a");
  ASSERT_EQ(::symlink(elsewhere.c_str(), tree.Join("a/corral").c_str()), 0);
  ASSERT_EQ(::symlink(tree.Join("workspace").c_str(), tree.Join("link").c_str()), 0);
  ExpectUnsafe(StateDir::OpenBelow(tree.Join("a"), StateDir::Create::kYes), "is a symlink");
  ExpectUnsafe(StateDir::OpenBelow(tree.Join("link/planted"), StateDir::Create::kYes), "is a symlink");
  tree.Dir("b/corral");
  ASSERT_EQ(::chmod(tree.Join("b/corral").c_str(), 0700), 0);
  ASSERT_EQ(::symlink(elsewhere.c_str(), tree.Join("b/corral/pending").c_str()), 0);
  Result<StateDir> state = StateDir::OpenBelow(tree.Join("b"), StateDir::Create::kYes);
  ASSERT_TRUE(state.ok()) << state.error().ToString();
  Result<UniqueFd> pending = state->Subdir("pending", StateDir::Create::kYes);
  ASSERT_FALSE(pending.ok());
  EXPECT_EQ(pending.error().code(), kStateDirUnsafe);
  EXPECT_TRUE(TestTree::Exists(elsewhere));
  EXPECT_FALSE(TestTree::Exists(elsewhere + "/slot-0.json"));
}

TEST(StateDir, DirectoriesOthersMayWriteAreRefused) {
  TestTree tree;
  std::string corral = tree.Dir("s/corral");
  ASSERT_EQ(::chmod(corral.c_str(), 0770), 0);
  ExpectUnsafe(StateDir::OpenBelow(tree.Join("s"), StateDir::Create::kYes), "writable by group or others");
  ASSERT_EQ(::chmod(corral.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(tree.Join("s").c_str(), 0777), 0);  // above it: others may write it, and it is not sticky
  Result<StateDir> state = StateDir::OpenBelow(tree.Join("s"), StateDir::Create::kYes);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.error().code(), kStateDirUnsafe);
  ASSERT_EQ(::chmod(tree.Join("s").c_str(), 0755), 0);
  EXPECT_TRUE(StateDir::OpenBelow(tree.Join("s"), StateDir::Create::kYes).ok());
}

// The session logs' directory is reached the same way: a symlink on the way
// to it is refused, and nothing is made through it.
TEST(StateDir, ADirectoryReachedThroughASymlinkOnTheWayIsRefused) {
  TestTree tree;
  std::string elsewhere = tree.Dir("workspace");
  ASSERT_EQ(::symlink(elsewhere.c_str(), tree.Join("state").c_str()), 0);
  Result<UniqueFd> sessions = OpenDirectoryWithoutSymlinks(tree.Join("state/corral/sessions"), StateDir::Create::kYes);
  ASSERT_FALSE(sessions.ok());
  EXPECT_EQ(sessions.error().code(), kStateDirUnsafe);
  EXPECT_FALSE(TestTree::Exists(elsewhere + "/corral"));
  Result<UniqueFd> made = OpenDirectoryWithoutSymlinks(tree.Join("real/corral/sessions"), StateDir::Create::kYes);
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  EXPECT_EQ(ModeOf(tree.Join("real/corral/sessions")), 0700u);
}

}  // namespace
}  // namespace corral
