// The copied snapshot (overlay/snapshot.h), without a sandbox: the copy is
// changed here as a command would change it, then turned into an upper that
// ScanChanges reads against the real tree.
#include "overlay/snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "base/unique_fd.h"
#include "overlay/changes.h"
#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::corral::testing::TestTree;

class SnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    real_ = tree_.Dir("real");
    layer_ = tree_.Dir("layer");
    ASSERT_EQ(::mkdir((layer_ + "/upper").c_str(), 0700), 0);
  }
  UniqueFd Open(const std::string& path) {
    return UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  }
  Result<Snapshot> Take(const std::vector<std::string>& masked = {}, SnapshotLimits limits = {}) {
    UniqueFd real = Open(real_);
    UniqueFd layer = Open(layer_);
    return Snapshot::Take(real.get(), layer.get(), masked, limits);
  }
  // The changes the copy holds, by path.
  std::map<std::string, std::string> Changes(const Snapshot& snapshot) {
    UniqueFd layer = Open(layer_);
    Result<void> converted = snapshot.ToUpper(layer.get());
    EXPECT_TRUE(converted.ok()) << converted.error().ToString();
    UniqueFd upper = Open(layer_ + "/upper");
    UniqueFd real = Open(real_);
    Result<ChangeSet> changes = ScanChanges(upper.get(), real.get(), 0);
    EXPECT_TRUE(changes.ok()) << changes.error().ToString();
    std::map<std::string, std::string> out;
    if (changes.ok()) {
      for (const Change& change : changes->changes) out[change.path] = std::string(ChangeKindName(change.kind));
    }
    return out;
  }
  std::string Copy(const std::string& relative) const { return layer_ + "/snapshot/" + relative; }
  TestTree tree_;
  std::string real_;
  std::string layer_;
};

TEST_F(SnapshotTest, AnUntouchedCopyIsNoChangeAndIsRemoved) {
  tree_.File("real/a.txt", "a\n");
  tree_.File("real/d/e/f.txt", "f\n");
  ASSERT_EQ(::symlink("../../outside", (real_ + "/d/link").c_str()), 0);
  ASSERT_EQ(::chmod((real_ + "/d").c_str(), 02755), 0);  // a set-group-ID directory
  Result<Snapshot> snapshot = Take();
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().ToString();
  struct stat st;
  ASSERT_EQ(::lstat(Copy("d").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u) << "a set-ID bit was copied";
  ASSERT_EQ(::lstat(Copy("d/link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  ::chmod(Copy("d").c_str(), 0755);  // a write that leaves the mode as it was
  EXPECT_TRUE(Changes(*snapshot).empty());
  EXPECT_FALSE(std::filesystem::exists(layer_ + "/snapshot"));
}

TEST_F(SnapshotTest, EachKindOfChangeBecomesTheUpperOverlayfsWouldWrite) {
  tree_.File("real/edit.txt", "one\n");
  tree_.File("real/gone.txt", "gone\n");
  tree_.File("real/old.txt", "moved, long enough to be recognised\n");
  tree_.File("real/tree/a/one.txt", "1\n");
  tree_.File("real/deep/a/b/keep.txt", "keep\n");
  tree_.File("real/deep/a/b/drop.txt", "drop\n");
  tree_.File("real/mode.sh", "#!/bin/sh\n");
  Result<Snapshot> snapshot = Take();
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().ToString();
  std::ofstream(Copy("edit.txt")) << "two\n";
  ASSERT_EQ(::unlink(Copy("gone.txt").c_str()), 0);
  ASSERT_EQ(::rename(Copy("old.txt").c_str(), Copy("new.txt").c_str()), 0);
  std::filesystem::remove_all(Copy("tree"));
  ASSERT_EQ(::unlink(Copy("deep/a/b/drop.txt").c_str()), 0);
  ASSERT_EQ(::chmod(Copy("mode.sh").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(Copy("made").c_str(), 0755), 0);
  std::ofstream(Copy("made/inside.txt")) << "in\n";
  std::map<std::string, std::string> expected = {
      {"deep/a/b/drop.txt", "deleted"}, {"edit.txt", "modified"},       {"gone.txt", "deleted"},
      {"made", "added"},                {"made/inside.txt", "added"},   {"mode.sh", "mode"},
      {"new.txt", "added"},             {"old.txt", "deleted"},         {"tree", "deleted"},
  };
  EXPECT_EQ(Changes(*snapshot), expected);
}

TEST_F(SnapshotTest, SpecialFilesAreNotCopiedAndAMaskedPathIsAnEmptyPlaceholder) {
  tree_.File("real/.env", "secret\n");
  tree_.Dir("real/keys");
  tree_.File("real/keys/id", "key\n");
  ASSERT_EQ(::mkfifo((real_ + "/pipe").c_str(), 0644), 0);
  Result<Snapshot> snapshot = Take({".env", "keys"});
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().ToString();
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(Copy("pipe"))));
  EXPECT_EQ(std::filesystem::file_size(Copy(".env")), 0u);
  struct stat inside;
  EXPECT_NE(::lstat(Copy("keys/id").c_str(), &inside), 0) << "a masked directory's entries were copied";
  ASSERT_EQ(snapshot->placeholders().size(), 2u);
  struct stat st;
  ASSERT_EQ(::lstat(Copy(".env").c_str(), &st), 0);
  EXPECT_EQ(snapshot->placeholders().at(".env").ino, st.st_ino);
  ASSERT_EQ(::lstat(Copy("keys").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0u);
  EXPECT_TRUE(Changes(*snapshot).empty()) << "a placeholder is no change";
}

TEST_F(SnapshotTest, ATreeOverTheLimitIsRefusedAndNothingIsLeft) {
  tree_.File("real/big.bin", std::string(4096, 'x'));
  Result<Snapshot> snapshot = Take({}, SnapshotLimits{.bytes = 1024, .entries = 100});
  ASSERT_FALSE(snapshot.ok());
  EXPECT_NE(snapshot.error().message().find("the copied snapshot is limited to"), std::string::npos)
      << snapshot.error().ToString();
  EXPECT_FALSE(std::filesystem::exists(layer_ + "/snapshot"));
}

}  // namespace
}  // namespace corral
