// Protected paths: what DiscoverProtected finds in a writable root (following
// .git pointers). The sweep has its own tests (sweep_test.cc).
#include "policy/protected.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>

#include "testing/test_scratch_dir.h"
#include "testing/protected_test_support.h"

namespace corral {
namespace {

using ::corral::testing::FindProtected;
using ::corral::testing::StateOf;
using ::corral::testing::TestTree;
using State = ProtectedPath::State;

FileIdentity IdentityOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return {st.st_dev, st.st_ino};
}

bool HasAnchor(const ProtectedSet& set, const std::string& path) {
  return std::any_of(set.anchors.begin(), set.anchors.end(), [&](const PinnedPath& a) { return a.path == path; });
}

TEST(DiscoverProtected, ExistingEntriesAreBoundAndMissingOnesRecorded) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.Dir("ws/.git/hooks");
  tree.File("ws/.git/config", "[core]\n");
  tree.File("ws/.bashrc", "echo hi\n");
  ProtectedSet set = DiscoverProtected({ws});

  EXPECT_EQ(StateOf(set, ws + "/.git/hooks"), "dir");
  EXPECT_EQ(FindProtected(set, ws + "/.git/hooks")->id, IdentityOf(ws + "/.git/hooks"));
  EXPECT_EQ(StateOf(set, ws + "/.git/config"), "file");
  EXPECT_EQ(FindProtected(set, ws + "/.git/config")->id, IdentityOf(ws + "/.git/config"));
  EXPECT_EQ(StateOf(set, ws + "/.bashrc"), "file");
  EXPECT_EQ(FindProtected(set, ws + "/.bashrc")->root, ws);
  for (const char* missing : {"/.envrc", "/.zshrc", "/.gitmodules", "/.vscode", "/.idea", "/.git/config.worktree"}) {
    EXPECT_EQ(StateOf(set, ws + missing), "missing") << missing;
  }
  EXPECT_TRUE(HasAnchor(set, ws + "/.git"));
  EXPECT_FALSE(HasAnchor(set, ws)) << "the root itself is bound by its grant, not as an anchor";
  EXPECT_TRUE(std::is_sorted(set.paths.begin(), set.paths.end(),
                             [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; }));
}

TEST(DiscoverProtected, MissingGitDirectoryIsRecordedAsMissing) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  ProtectedSet set = DiscoverProtected({ws});
  // The first missing component is what the sweep moves out, whole: a `.git`
  // the run creates goes with its config, hooks and commondir.
  EXPECT_EQ(StateOf(set, ws + "/.git"), "missing");
  EXPECT_EQ(StateOf(set, ws + "/.git/hooks"), "absent");
  EXPECT_TRUE(set.anchors.empty());
}

TEST(DiscoverProtected, FollowsAGitFileIntoAWritableRoot) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  std::string real = tree.Dir("real.git");
  tree.Dir("real.git/hooks");
  tree.File("real.git/config", "[core]\n");
  tree.File("ws/.git", "gitdir: ../real.git\n");

  ProtectedSet set = DiscoverProtected({ws, real});
  EXPECT_EQ(StateOf(set, ws + "/.git"), "file") << "the pointer itself stays read-only";
  EXPECT_EQ(StateOf(set, real + "/hooks"), "dir");
  EXPECT_EQ(StateOf(set, real + "/config"), "file");
  EXPECT_EQ(FindProtected(set, real + "/hooks")->root, real);

  // Outside every writable root the target is not the sandbox's to touch.
  ProtectedSet only_ws = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(only_ws, ws + "/.git"), "file");
  EXPECT_EQ(StateOf(only_ws, real + "/hooks"), "absent");
}

TEST(DiscoverProtected, FollowsAnAbsoluteGitdirAndItsCommondir) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  std::string real = tree.Dir("real.git");
  tree.Dir("real.git/hooks");
  tree.File("real.git/config", "[core]\n");
  tree.Dir("real.git/worktrees/wt");
  tree.File("real.git/worktrees/wt/commondir", "../..\n");
  tree.File("ws/.git", "gitdir: " + real + "/worktrees/wt\n");

  ProtectedSet set = DiscoverProtected({ws, real});
  EXPECT_EQ(StateOf(set, real + "/worktrees/wt/hooks"), "missing");
  EXPECT_EQ(StateOf(set, real + "/worktrees/wt/config"), "missing");
  EXPECT_EQ(StateOf(set, real + "/hooks"), "dir");
  EXPECT_EQ(StateOf(set, real + "/config"), "file");
}

TEST(DiscoverProtected, ProtectsSubmoduleGitdirs) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.Dir("ws/.git/hooks");
  tree.Dir("ws/.git/modules/x/hooks");
  tree.File("ws/.git/modules/x/config", "[core]\n");
  tree.Dir("ws/.git/modules/x/modules/y/hooks");

  ProtectedSet set = DiscoverProtected({ws});
  EXPECT_EQ(StateOf(set, ws + "/.git/modules/x/hooks"), "dir");
  EXPECT_EQ(StateOf(set, ws + "/.git/modules/x/config"), "file");
  EXPECT_EQ(StateOf(set, ws + "/.git/modules/x/modules/y/hooks"), "dir");
  EXPECT_TRUE(HasAnchor(set, ws + "/.git/modules/x"));
  EXPECT_TRUE(HasAnchor(set, ws + "/.git/modules"));
}

TEST(DiscoverProtected, RecordsASymlinkAndItsTarget) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.File("ws/dotfiles/bashrc", "alias ls=ls\n");
  tree.Symlink("ws/.bashrc", "dotfiles/bashrc");
  ProtectedSet set = DiscoverProtected({ws});
  ASSERT_EQ(StateOf(set, ws + "/.bashrc"), "symlink");
  EXPECT_EQ(FindProtected(set, ws + "/.bashrc")->link_target, "dotfiles/bashrc");
  EXPECT_EQ(StateOf(set, ws + "/dotfiles/bashrc"), "file") << "the writable target is pinned read-only too";
}

TEST(ProtectedNames, CoverHookManagersPackageManagersEditorsAndAgents) {
  const std::vector<std::string>& names = ProtectedNames();
  for (const char* name : {".husky", ".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml",
                           ".lefthook-local.yml", ".yarnrc.yml", ".yarnrc", ".npmrc", ".pnpmfile.cjs", ".nvimrc",
                           ".vimrc", ".gvimrc", ".cursor", ".gemini", ".codex", ".windsurf", ".continue", ".zed",
                           ".aider.conf.yml", ".vscode", ".claude", ".envrc", ".git/hooks"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

// What `corral apply` holds back: protected names at any depth, a new
// repository or gitdir pointer, and what lies inside them.
TEST(IsProtectedRelative, NamesProtectedPathsAtAnyDepthAndNothingElse) {
  for (const char* path : {".git", ".git/hooks", ".git/hooks/pre-commit", ".git/config", "sub/.git",
                           "sub/.git/hooks/post-checkout", ".git/modules/m/hooks/x", ".git/worktrees/w/config",
                           ".hg", ".hg/hgrc", ".bashrc", "deep/down/.envrc", ".vscode/tasks.json", "corral.toml",
                           ".aws/config", ".yarn/releases/yarn.js", ".husky/pre-commit"}) {
    EXPECT_TRUE(IsProtectedRelative(path)) << path;
  }
  for (const char* path : {"src/main.c", ".github/workflows/ci.yml", ".gitignore", "git/hooks", "hooks/x",
                           ".git-blame-ignore-revs", "docs/config.md", ".yarn/cache/x.zip", ".aws/notes"}) {
    EXPECT_FALSE(IsProtectedRelative(path)) << path;
  }
}

}  // namespace
}  // namespace corral
