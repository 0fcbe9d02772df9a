// Protected paths below the top of a writable root, Mercurial's and yarn's:
// what DiscoverProtected's bounded walk finds, and where it stops.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"
#include "policy/protected.h"
#include "testing/protected_test_support.h"

namespace corral {
namespace {

using ::corral::testing::StateOf;
using ::corral::testing::TestTree;

size_t MissingBelow(const ProtectedSet& set, const std::string& root) {
  return static_cast<size_t>(std::count_if(set.paths.begin(), set.paths.end(), [&](const ProtectedPath& entry) {
    return entry.state == ProtectedPath::State::kMissing && entry.path.find('/', root.size() + 1) != std::string::npos;
  }));
}

bool NoteMentions(const ProtectedSet& set, const std::string& text) {
  return std::any_of(set.notes.begin(), set.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

TEST(NestedProtected, ARepositoryBelowTheTopIsProtectedLikeTheTopOne) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.Dir("ws/sub/.git/hooks");
  tree.File("ws/sub/.git/config", "[core]\n");
  tree.Dir("ws/.git/modules");
  tree.File("ws/a/b/.git", "gitdir: ../../.git/modules/b\n");
  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(set, ws + "/sub/.git/hooks"), "dir");
  EXPECT_EQ(StateOf(set, ws + "/sub/.git/config"), "file");
  EXPECT_EQ(StateOf(set, ws + "/sub/.git/commondir"), "missing");
  EXPECT_EQ(StateOf(set, ws + "/a/b/.git"), "file");
  EXPECT_EQ(StateOf(set, ws + "/.git/modules/b"), "missing") << "the gitdir it names would be swept";
}

TEST(NestedProtected, MissingRepositoriesAreRecordedNearTheTopOnly) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.Dir("ws/a/b/c/d");
  ProtectedSet set = DiscoverProtected({ws});
  for (const char* dir : {"/a", "/a/b"}) {
    EXPECT_EQ(StateOf(set, ws + dir + "/.git"), "missing") << dir;
    EXPECT_EQ(StateOf(set, ws + dir + "/.hg"), "missing") << dir;
  }
  EXPECT_EQ(StateOf(set, ws + "/a/b/c/.git"), "absent") << "deeper than kMissingDepth";
  EXPECT_EQ(StateOf(set, ws + "/a/.envrc"), "absent") << "only repositories are recorded missing below the top";
}

TEST(NestedProtected, ExistingProtectedNamesAreFoundToTheWalksDepth) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.File("ws/a/.zshrc");
  tree.File("ws/a/b/c/.envrc");
  tree.File("ws/a/b/c/d/.envrc");
  tree.Dir("ws/a/b/c/d/.git/hooks");
  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(set, ws + "/a/.zshrc"), "file");
  EXPECT_EQ(StateOf(set, ws + "/a/b/c/.envrc"), "file");
  EXPECT_EQ(StateOf(set, ws + "/a/b/c/d/.envrc"), "absent") << "deeper than kWalkDepth";
  EXPECT_EQ(StateOf(set, ws + "/a/b/c/d/.git/hooks"), "absent");
}

TEST(NestedProtected, TheWalkFollowsNoSymlinkAndSkipsDependencyTrees) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.File("elsewhere/.envrc");
  tree.Symlink("ws/link", tree.Join("elsewhere"));
  tree.File("ws/node_modules/pkg/.envrc");
  tree.Dir("ws/node_modules/pkg/.git/hooks");
  tree.Dir("ws/target/debug/.git/hooks");
  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(set, ws + "/link/.envrc"), "absent");
  EXPECT_EQ(StateOf(set, tree.Join("elsewhere/.envrc")), "absent");
  EXPECT_EQ(StateOf(set, ws + "/node_modules/pkg/.envrc"), "absent");
  EXPECT_EQ(StateOf(set, ws + "/node_modules/pkg/.git/hooks"), "absent");
  EXPECT_EQ(StateOf(set, ws + "/target/debug/.git/hooks"), "absent");
  EXPECT_EQ(StateOf(set, ws + "/node_modules/.git"), "absent") << "not even looked in";
}

// A `.git` file below the top may be an earlier run's: its pointer is never
// resolved outside the roots.
TEST(NestedProtected, ANestedGitFileIsNotFollowedOutOfTheRoots) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.Dir("host/secret");
  tree.File("ws/sub/.git", "gitdir: " + tree.Join("host/secret") + "/../../ws/evil\n");
  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(set, ws + "/sub/.git"), "file");
  EXPECT_EQ(StateOf(set, ws + "/evil"), "absent") << "resolving it would reveal that host/secret exists";
}

TEST(NestedProtected, TheWalkIsBounded) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  for (int i = 0; i < 300; ++i) tree.Dir("ws/d" + std::to_string(1000 + i));
  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_LE(MissingBelow(set, ws), 64u);
  EXPECT_EQ(StateOf(set, ws + "/d1000/.git"), "missing") << "breadth first, by name";
  EXPECT_EQ(StateOf(set, ws + "/d1299/.git"), "absent");
  EXPECT_TRUE(NoteMentions(set, "missing paths below the top")) << "the cap on missing paths is said";
  EXPECT_TRUE(NoteMentions(set, "directories within depth")) << "the cap on directories is said";
}

TEST(NestedProtected, MercurialsConfigAndSharedSourceAreProtected) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.File("ws/.hg/hgrc", "[paths]\n");
  tree.File("ws/.hg/sharedpath", ws + "/source/.hg\n");
  tree.Dir("ws/source/.hg");
  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(set, ws + "/.hg/hgrc"), "file");
  EXPECT_EQ(StateOf(set, ws + "/.hg/sharedpath"), "file");
  EXPECT_EQ(StateOf(set, ws + "/.hg/hgrc-not-shared"), "missing");
  EXPECT_EQ(StateOf(set, ws + "/source/.hg/hgrc"), "missing") << "hg loads the share source's config";

  TestTree bare;
  std::string plain = bare.Dir("ws");
  EXPECT_EQ(StateOf(DiscoverProtected({plain}), plain + "/.hg"), "missing");
}

// yarn's .yarn/releases and .yarn/plugins: protected when .yarn exists or a
// .yarnrc.yml could name them; otherwise a .yarn the run makes is its output.
TEST(NestedProtected, YarnReleasesAndPluginsAreProtectedWhenYarnCouldUseThem) {
  TestTree none;
  std::string ws = none.Dir("ws");
  EXPECT_EQ(StateOf(DiscoverProtected({ws}), ws + "/.yarn"), "absent");

  TestTree rc;
  ws = rc.Dir("ws");
  rc.File("ws/.yarnrc.yml", "yarnPath: .yarn/releases/yarn.cjs\n");
  EXPECT_EQ(StateOf(DiscoverProtected({ws}), ws + "/.yarn"), "missing");

  TestTree dir;
  ws = dir.Dir("ws");
  dir.File("ws/.yarn/releases/yarn.cjs");
  dir.Dir("ws/.yarn/cache");
  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(set, ws + "/.yarn/releases"), "dir");
  EXPECT_EQ(StateOf(set, ws + "/.yarn/plugins"), "missing");
  EXPECT_EQ(StateOf(set, ws + "/.yarn/cache"), "absent");
}

}  // namespace
}  // namespace corral
