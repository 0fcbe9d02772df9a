// The mask walk's move detection, step by step on a temporary tree: a
// directory renamed or created after its parent was listed makes the walk
// not hold; a file renamed under a name no pattern matches does not.
#include "policy/forbid_walk.h"

#include <stdio.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "testing/test_scratch_dir.h"

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

  // Walks ws (the walk holds and finds ws/sub/.env), applies `change`, and
  // says whether the walk still holds.
  bool HoldsAfter(const std::function<int()>& change) {
    MaskWalk walk(patterns_, 1000);
    EXPECT_TRUE(walk.Start().ok());
    Result<bool> held = walk.WalkRoot(tree_.Join("ws"));
    EXPECT_TRUE(held.ok() && *held);
    std::vector<std::string> found;
    for (const MaskedPath& mask : walk.found()) found.push_back(mask.path);
    EXPECT_EQ(found, std::vector<std::string>{tree_.Join("ws/sub/.env")});
    EXPECT_EQ(change(), 0);
    Result<bool> unmoved = walk.Unmoved();
    EXPECT_TRUE(unmoved.ok()) << unmoved.error().ToString();
    return unmoved.ok() && *unmoved;
  }
  int Rename(const char* from, const char* to) const {
    return ::rename(tree_.Join(from).c_str(), tree_.Join(to).c_str());
  }

  TestTree tree_;
  PatternSegments patterns_;
};

TEST_F(MaskWalkTest, AnUnchangedTreeHolds) { EXPECT_TRUE(HoldsAfter([] { return 0; })); }

TEST_F(MaskWalkTest, ADirectoryRenamedAfterTheListingDoesNotHold) {
  EXPECT_FALSE(HoldsAfter([&] { return Rename("ws/sub", "ws/sub2"); }));
}

TEST_F(MaskWalkTest, ADirectoryCreatedAfterTheListingDoesNotHold) {
  EXPECT_FALSE(HoldsAfter([&] { return ::mkdir(tree_.Join("ws/new").c_str(), 0755); }));
}

TEST_F(MaskWalkTest, AMatchingFileMovedInDoesNotHold) {
  tree_.File("ws/sub/env.txt", "x");
  EXPECT_FALSE(HoldsAfter([&] { return Rename("ws/sub/env.txt", "ws/.env"); }));
}

TEST_F(MaskWalkTest, AFileRenamedUnderNamesNoPatternMatchesHolds) {
  EXPECT_TRUE(HoldsAfter([&] { return Rename("ws/notes.txt", "ws/notes.old"); }));
}

}  // namespace
}  // namespace corral
