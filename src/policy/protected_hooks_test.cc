// core.hooksPath protection (husky and friends).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "policy/protected.h"

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
    for (const ProtectedPath& entry : set.paths) {
      if (entry.path == path) return &entry;
    }
    return nullptr;
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
