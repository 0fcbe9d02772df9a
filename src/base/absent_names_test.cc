#include "base/absent_names.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

AbsentNames ListingOf(const std::string& dir) {
  UniqueFd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  EXPECT_TRUE(fd) << dir;
  return AbsentNames::Read(fd.get());
}

TEST(AbsentNames, ProvesOnlyWhatTheListingLacks) {
  testing::TestTree tree;
  tree.File(".bashrc");
  tree.Dir(".vscode");
  AbsentNames names = ListingOf(tree.path());
  ASSERT_TRUE(names.complete()) << "the scratch directory's filesystem should be a local one";
  EXPECT_FALSE(names.CertainlyAbsent(".bashrc"));
  EXPECT_FALSE(names.CertainlyAbsent(".vscode"));
  EXPECT_TRUE(names.CertainlyAbsent(".zshrc"));
  EXPECT_TRUE(names.CertainlyAbsent(".git"));
}

// A case-insensitive directory finds ".GIT" when asked for ".git": an entry
// that differs only in case never proves the name absent.
TEST(AbsentNames, AnEntryDifferingOnlyInCaseProvesNothing) {
  testing::TestTree tree;
  tree.Dir(".GIT");
  tree.File("LeftHook.YML");
  AbsentNames names = ListingOf(tree.path());
  ASSERT_TRUE(names.complete());
  EXPECT_FALSE(names.CertainlyAbsent(".git"));
  EXPECT_FALSE(names.CertainlyAbsent("lefthook.yml"));
  EXPECT_TRUE(names.CertainlyAbsent(".hg"));
}

// Unicode case folding maps some letters onto ASCII (the Kelvin sign onto
// "k"): a listing with any name outside ASCII proves nothing.
TEST(AbsentNames, ANameOutsideAsciiProvesNothing) {
  testing::TestTree tree;
  tree.File(".\xe2\x84\xaashrc");  // ".Kshrc" with U+212A KELVIN SIGN
  AbsentNames names = ListingOf(tree.path());
  EXPECT_FALSE(names.CertainlyAbsent(".kshrc"));
  EXPECT_FALSE(names.CertainlyAbsent(".zshrc"));
}

TEST(AbsentNames, AFilesystemThatMayListFromACacheProvesNothing) {
  AbsentNames proc = ListingOf("/proc");
  EXPECT_FALSE(proc.complete());
  EXPECT_FALSE(proc.CertainlyAbsent("no-such-name"));
}

TEST(AbsentNames, AnUnreadableOrHugeDirectoryProvesNothing) {
  testing::TestTree tree;
  std::string many = tree.Dir("many");
  // Each entry takes at least 24 bytes of a listing.
  for (size_t i = 0; i <= AbsentNames::kMaxListingBytes / 24; ++i) {
    UniqueFd made(::open((many + "/f" + std::to_string(i)).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
    ASSERT_TRUE(made);
  }
  EXPECT_FALSE(ListingOf(many).CertainlyAbsent(".git"));
  EXPECT_FALSE(AbsentNames().CertainlyAbsent(".git"));
  if (::geteuid() != 0) {  // root reads a mode-0 directory anyway
    std::string closed = tree.Dir("closed");
    ASSERT_EQ(::chmod(closed.c_str(), 0), 0);
    EXPECT_FALSE(ListingOf(closed).CertainlyAbsent(".git"));
    ASSERT_EQ(::chmod(closed.c_str(), 0700), 0);
  }
}

}  // namespace
}  // namespace corral
