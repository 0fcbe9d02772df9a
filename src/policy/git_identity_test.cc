// The private home's gitconfig: the user's identity and default branch,
// nothing else of their config.
#include "policy/git_identity.h"

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

TEST(GitIdentity, CarriesTheIdentityAndDefaultBranchOnly) {
  TestTree tree;
  tree.File("home/.gitconfig",
            "[user]\n\tname = Ana \"A\" Li\n\temail = ana@example.com\n\tsigningkey = ABC\n[credential]\n"
            "\thelper = store\n[alias]\n\tx = !sh\n[core]\n\tfsmonitor = sh\n[init]\n\tdefaultBranch = trunk\n");
  EXPECT_EQ(GitIdentityConfig(tree.Join("home")),
            "[user]\n\tname = \"Ana A Li\"\n\temail = \"ana@example.com\"\n[init]\n\tdefaultBranch = \"trunk\"\n");
}

TEST(GitIdentity, TheHomeGitconfigWinsOverTheXdgOne) {
  TestTree tree;
  tree.File("home/.config/git/config", "[user]\n\tname = old\n\temail = xdg@example.com\n");
  tree.File("home/.gitconfig", "[user]\n\tname = \"new \\\\ one\"\n");
  EXPECT_EQ(GitIdentityConfig(tree.Join("home")),
            "[user]\n\tname = \"new \\\\ one\"\n\temail = \"xdg@example.com\"\n");
}

TEST(GitIdentity, NothingWhenThereIsNoIdentityOrTheFileCannotBeRead) {
  TestTree tree;
  tree.Dir("home");
  EXPECT_EQ(GitIdentityConfig(tree.Join("home")), "");
  tree.File("home/.gitconfig", "[user]\n\tname = a \\\n\tb\n");  // a continuation line
  EXPECT_EQ(GitIdentityConfig(tree.Join("home")), "");
}

}  // namespace
}  // namespace corral
