// The mask walk's move detection, step by step on a temporary tree: a
// directory renamed or created after its parent was listed makes the walk
// not hold; a file renamed under a name no pattern matches does not.
#include "policy/forbid_walk.h"

#include <stdio.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "base/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

class MaskWalkTest : public ::testing::Test {
 protected:
  MaskWalkTest() {
    tree_.File("ws/sub/.env", "x");
    tree_.File("ws/notes.txt", "x");
    patterns_ = {PathSegments(tree_.Join("ws") + "/**/.env")};
  }

  // A walk of ws that held; the caller then changes the tree.
  void Walk(MaskWalk& walk) {
    ASSERT_TRUE(walk.Start().ok());
    Result<bool> held = walk.WalkRoot(tree_.Join("ws"));
    ASSERT_TRUE(held.ok()) << held.error().ToString();
    ASSERT_TRUE(*held);
    ASSERT_EQ(walk.found().size(), 1u);
    EXPECT_EQ(walk.found()[0].path, tree_.Join("ws/sub/.env"));
  }

  bool Unmoved(MaskWalk& walk) {
    Result<bool> unmoved = walk.Unmoved();
    EXPECT_TRUE(unmoved.ok()) << unmoved.error().ToString();
    return unmoved.ok() && *unmoved;
  }

  TestTree tree_;
  PatternSegments patterns_;
};

TEST_F(MaskWalkTest, AnUnchangedTreeHolds) {
  MaskWalk walk(patterns_, 1000);
  Walk(walk);
  EXPECT_TRUE(Unmoved(walk));
}

TEST_F(MaskWalkTest, ADirectoryRenamedAfterTheListingDoesNotHold) {
  MaskWalk walk(patterns_, 1000);
  Walk(walk);
  ASSERT_EQ(::rename(tree_.Join("ws/sub").c_str(), tree_.Join("ws/sub2").c_str()), 0);
  EXPECT_FALSE(Unmoved(walk));
}

TEST_F(MaskWalkTest, ADirectoryCreatedAfterTheListingDoesNotHold) {
  MaskWalk walk(patterns_, 1000);
  Walk(walk);
  ASSERT_EQ(::mkdir(tree_.Join("ws/new").c_str(), 0755), 0);
  EXPECT_FALSE(Unmoved(walk));
}

TEST_F(MaskWalkTest, AMatchingFileMovedInDoesNotHold) {
  tree_.File("ws/sub/env.txt", "x");
  MaskWalk walk(patterns_, 1000);
  Walk(walk);
  ASSERT_EQ(::rename(tree_.Join("ws/sub/env.txt").c_str(), tree_.Join("ws/.env").c_str()), 0);
  EXPECT_FALSE(Unmoved(walk));
}

TEST_F(MaskWalkTest, AFileRenamedUnderNamesNoPatternMatchesHolds) {
  MaskWalk walk(patterns_, 1000);
  Walk(walk);
  ASSERT_EQ(::rename(tree_.Join("ws/notes.txt").c_str(), tree_.Join("ws/notes.old").c_str()), 0);
  EXPECT_TRUE(Unmoved(walk));
}

}  // namespace
}  // namespace corral
