// ResolveInRoots: a symlink below a writable root never leads the walk out
// of the roots, so what lies outside cannot change the answer.
#include "policy/resolve_in_roots.h"

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

class ResolveInRootsTest : public ::testing::Test {
 protected:
  ResolveInRootsTest() : ws_(tree_.Dir("ws")), roots_({ws_}) {}
  Resolved Sandbox(const std::string& path) { return ResolveInRoots(path, roots_, Trust::kSandbox); }
  Resolved User(const std::string& path) { return ResolveInRoots(path, roots_, Trust::kUser); }
  TestTree tree_;
  std::string ws_;
  std::vector<std::string> roots_;
};

TEST_F(ResolveInRootsTest, AnExistingPathIsItself) {
  tree_.File("ws/a/b");
  Resolved resolved = Sandbox(ws_ + "/a/./b");
  EXPECT_EQ(resolved.path, ws_ + "/a/b");
  EXPECT_TRUE(resolved.inside);
  EXPECT_TRUE(resolved.exists);
}

TEST_F(ResolveInRootsTest, AMissingTailIsLexical) {
  tree_.Dir("ws/a");
  Resolved resolved = Sandbox(ws_ + "/a/new/../x/y");
  EXPECT_EQ(resolved.path, ws_ + "/a/x/y");
  EXPECT_TRUE(resolved.inside);
  EXPECT_FALSE(resolved.exists);
}

TEST_F(ResolveInRootsTest, SymlinksInsideTheRootAreFollowedLikeTheKernel) {
  tree_.Dir("ws/c/d");
  tree_.Symlink("ws/a", "c/d");
  tree_.File("ws/c/b");
  Resolved resolved = Sandbox(ws_ + "/a/../b");  // a -> c/d, so a/.. is c
  EXPECT_EQ(resolved.path, ws_ + "/c/b");
  EXPECT_TRUE(resolved.exists);
}

TEST_F(ResolveInRootsTest, ASymlinkOutOfTheRootsStopsTheWalk) {
  tree_.File("outside/file");
  tree_.Symlink("ws/link", tree_.Join("outside"));
  EXPECT_EQ(Sandbox(ws_ + "/link/file").path, "");
  // Even for the user's own text: the symlink on the way is the sandbox's.
  EXPECT_EQ(User(ws_ + "/link/file").path, "");
  EXPECT_EQ(Sandbox(ws_ + "/../outside/file").path, "") << "`..` above the root";
}

// The existence oracle: a planted link through a host directory back into
// the workspace must give the same answer whether that directory exists.
TEST_F(ResolveInRootsTest, AWalkThroughAHostDirectoryNeverLooksAtIt) {
  tree_.Dir("host/secret");
  tree_.Symlink("ws/yes", tree_.Join("host/secret/../../ws/m_yes"));
  tree_.Symlink("ws/no", tree_.Join("host/absent/../../ws/m_no"));
  for (const char* name : {"/yes", "/no"}) {
    Resolved resolved = Sandbox(ws_ + name);
    EXPECT_EQ(resolved.path, "") << name;
    EXPECT_FALSE(resolved.inside) << name;
    EXPECT_EQ(User(ws_ + name).path, "") << name;
  }
}

TEST_F(ResolveInRootsTest, TheUsersOwnTextIsResolvedOutsideToo) {
  std::string outside = tree_.File("outside/config");
  tree_.Symlink("outside/link", "config");
  EXPECT_EQ(Sandbox(outside).path, "") << "a sandbox text may not name an outside path";
  Resolved resolved = User(tree_.Join("outside/link"));
  EXPECT_EQ(resolved.path, outside);
  EXPECT_FALSE(resolved.inside);
  EXPECT_TRUE(resolved.exists);
  // Entering the roots from outside, through the user's path, is fine.
  tree_.File("ws/x");
  EXPECT_EQ(User(tree_.Join("outside/../ws/x")).path, ws_ + "/x");
}

TEST_F(ResolveInRootsTest, ALoopGivesNothing) {
  tree_.Symlink("ws/a", "b");
  tree_.Symlink("ws/b", "a");
  EXPECT_EQ(Sandbox(ws_ + "/a").path, "");
}

TEST_F(ResolveInRootsTest, ALinkIsResolvedFromItsDirectory) {
  tree_.File("ws/tools/pre-commit");
  tree_.Dir("ws/.git/hooks");
  tree_.Symlink("ws/.git/hooks/pre-commit", "../../tools/pre-commit");
  tree_.Symlink("ws/.git/hooks/post-merge", "../../tools/missing");
  Resolved present = ResolveLink(ws_ + "/.git/hooks/pre-commit", roots_, Trust::kUser);
  EXPECT_EQ(present.path, ws_ + "/tools/pre-commit");
  EXPECT_TRUE(present.exists);
  Resolved missing = ResolveLink(ws_ + "/.git/hooks/post-merge", roots_, Trust::kUser);
  EXPECT_EQ(missing.path, ws_ + "/tools/missing");
  EXPECT_FALSE(missing.exists);
  EXPECT_TRUE(missing.inside);
}

}  // namespace
}  // namespace corral
