// Canonical, pinned paths: PinPath's refusals and identities, and the lexical
// helpers IsWithin and CollapseSlashes. A pinned path swapped before the
// spawn is refused by the sandbox child (tests/integration/pin_test.cc).
#include "policy/path.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <string>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

// The refusal message, or "" when the path was pinned.
std::string Refusal(std::string_view given) {
  Result<PinnedPath> pinned = PinPath(given, "--allow-read");
  if (pinned.ok()) return "";
  EXPECT_EQ(pinned.error().kind(), ErrorKind::kUsage) << pinned.error().message();
  return pinned.error().message();
}

FileIdentity IdentityOf(const std::string& path) {
  struct stat st = {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return {st.st_dev, st.st_ino};
}

TEST(PinPath, RefusesEmpty) {
  EXPECT_NE(Refusal("").find("empty path"), std::string::npos);
}

TEST(PinPath, RefusesRelativeAndSuggestsAnAbsolutePath) {
  std::string message = Refusal("src/project");
  EXPECT_NE(message.find("relative path"), std::string::npos) << message;
  EXPECT_NE(message.find("pass an absolute path"), std::string::npos) << message;
  EXPECT_NE(message.find("--allow-read src/project"), std::string::npos) << message;
  EXPECT_NE(Refusal("./here").find("relative path"), std::string::npos);
}

TEST(PinPath, RefusesDotAndDotDotComponents) {
  TestTree tree;
  tree.Dir("a/b");
  for (const std::string& given : {tree.Join("a/../a"), tree.Join("a/./b"), tree.Join("a/b/.."), tree.Join("a/."),
                                   std::string("/..")}) {
    std::string message = Refusal(given);
    EXPECT_NE(message.find("'.' or '..' component"), std::string::npos) << given << ": " << message;
  }
  // A name that merely starts with dots is an ordinary component.
  tree.Dir("a/..hidden");
  EXPECT_EQ(Refusal(tree.Join("a/..hidden")), "");
}

TEST(PinPath, RefusesASymlinkAndNamesTheResolvedPath) {
  TestTree tree;
  std::string real = tree.Dir("real/inner");
  tree.Symlink("link", "real");
  std::string message = Refusal(tree.Join("link/inner"));
  EXPECT_NE(message.find("goes through a symlink"), std::string::npos) << message;
  EXPECT_NE(message.find("(" + tree.Join("link") + ")"), std::string::npos) << message;
  EXPECT_NE(message.find("pass the resolved path " + real), std::string::npos) << message;
  // The symlink as the last component too.
  message = Refusal(tree.Join("link"));
  EXPECT_NE(message.find("pass the resolved path " + tree.Join("real")), std::string::npos) << message;
}

TEST(PinPath, RefusesANonexistentPath) {
  TestTree tree;
  std::string message = Refusal(tree.Join("missing/deeper"));
  EXPECT_NE(message.find("no such file or directory"), std::string::npos) << message;
  EXPECT_NE(message.find(tree.Join("missing/deeper")), std::string::npos) << message;
  tree.File("file");
  EXPECT_NE(Refusal(tree.Join("file/below")).find("no such file or directory"), std::string::npos);
}

TEST(PinPath, RefusesANulByte) {
  TestTree tree;
  std::string given = tree.path() + std::string("\0/etc", 5);
  EXPECT_NE(Refusal(given).find("NUL byte"), std::string::npos);
}

TEST(PinPath, PinsByDeviceAndInode) {
  TestTree tree;
  std::string dir = tree.Dir("project");
  std::string file = tree.File("project/notes.txt", "x");
  Result<PinnedPath> pinned_dir = PinPath(dir, "--allow-read");
  ASSERT_TRUE(pinned_dir.ok()) << pinned_dir.error().message();
  EXPECT_EQ(pinned_dir->path, dir);
  EXPECT_EQ(pinned_dir->id, IdentityOf(dir));
  EXPECT_TRUE(pinned_dir->is_dir());
  Result<PinnedPath> pinned_file = PinPath(file, "--allow-read");
  ASSERT_TRUE(pinned_file.ok()) << pinned_file.error().message();
  EXPECT_EQ(pinned_file->id, IdentityOf(file));
  EXPECT_EQ(pinned_file->type, FileType::kRegular);
  Result<PinnedPath> device = PinPath("/dev/null", "--allow-read");
  ASSERT_TRUE(device.ok());
  EXPECT_EQ(device->type, FileType::kOther);
}

TEST(PinPath, CollapsesTrailingAndDoubledSlashes) {
  TestTree tree;
  std::string dir = tree.Dir("a/b");
  std::string messy = tree.path() + "//a///b/";
  Result<PinnedPath> pinned = PinPath(messy, "--allow-write");
  ASSERT_TRUE(pinned.ok()) << pinned.error().message();
  EXPECT_EQ(pinned->path, dir);
  EXPECT_EQ(pinned->id, IdentityOf(dir));
}

TEST(PinDerivedPath, StillRefusesSymlinks) {
  TestTree tree;
  tree.Dir("real");
  tree.Symlink("link", "real");
  Result<PinnedPath> pinned = PinDerivedPath(tree.Join("link"), "the working directory");
  ASSERT_FALSE(pinned.ok());
  EXPECT_NE(pinned.error().message().find("symlink"), std::string::npos);
}

TEST(IsWithin, ComparesWholeComponents) {
  EXPECT_TRUE(IsWithin("/a/b", "/a/b"));
  EXPECT_TRUE(IsWithin("/a/b/c", "/a/b"));
  EXPECT_FALSE(IsWithin("/a/bc", "/a/b"));
  EXPECT_FALSE(IsWithin("/a/b", "/a/bc"));
  EXPECT_FALSE(IsWithin("/a", "/a/b"));
  EXPECT_FALSE(IsWithin("/ab", "/a"));
}

TEST(IsWithin, RootContainsEveryAbsolutePath) {
  EXPECT_TRUE(IsWithin("/", "/"));
  EXPECT_TRUE(IsWithin("/etc", "/"));
  EXPECT_TRUE(IsWithin("/a/b/c", "/"));
  EXPECT_FALSE(IsWithin("relative", "/"));
  EXPECT_FALSE(IsWithin("", "/"));
}

TEST(CollapseSlashes, CollapsesRunsAndTheTrailingSlash) {
  EXPECT_EQ(CollapseSlashes("/a//b/"), "/a/b");
  EXPECT_EQ(CollapseSlashes("///a////b///c"), "/a/b/c");
  EXPECT_EQ(CollapseSlashes("/"), "/");
  EXPECT_EQ(CollapseSlashes("//"), "/");
  EXPECT_EQ(CollapseSlashes(""), "");
  EXPECT_EQ(CollapseSlashes("a//b/"), "a/b");
  // Dot components are kept so that callers can refuse them.
  EXPECT_EQ(CollapseSlashes("/a/./b/../c/"), "/a/./b/../c");
}

}  // namespace
}  // namespace corral
