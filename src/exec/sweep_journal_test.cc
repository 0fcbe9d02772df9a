#include "exec/sweep_journal.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "base/test_scratch_dir.h"

namespace corral {
namespace {

using corral::testing::TestTree;

ProtectedSet MissingEnvrc(const std::string& root) {
  ProtectedSet set;
  set.paths.push_back({root + "/.envrc", ProtectedPath::State::kMissing, {}, "", root});
  return set;
}

TEST(SweepJournal, NothingToSweepWritesNoRecord) {
  TestTree tree;
  Result<std::string> written = WriteSweepJournal(tree.Join("pending"), "r1", ProtectedSet{}, tree.Join("q"));
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  EXPECT_EQ(*written, "");
  EXPECT_FALSE(std::filesystem::exists(tree.Join("pending")));
}

TEST(SweepJournal, ARecordOfALiveCorralIsLeftAlone) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  tree.File("ws/.envrc", "made by a run still going\n");
  Result<std::string> written = WriteSweepJournal(tree.Join("pending"), "live", MissingEnvrc(root), tree.Join("q"));
  ASSERT_TRUE(written.ok()) << written.error().ToString();
  struct stat st;
  ASSERT_EQ(::stat(written->c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(RecoverInterruptedSweeps(tree.Join("pending")).empty());  // this process wrote it: alive
  EXPECT_TRUE(std::filesystem::exists(root + "/.envrc"));
  EXPECT_TRUE(std::filesystem::exists(*written));
  RemoveSweepJournal(*written);
  EXPECT_FALSE(std::filesystem::exists(*written));
}

TEST(SweepJournal, ARecordOfADeadCorralIsSweptAndRemoved) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  tree.File("ws/.envrc", "left by a killed run\n");
  std::string dir = tree.Join("pending");
  // Written by a child that then exits: the record's corral is gone.
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(WriteSweepJournal(dir, "dead", MissingEnvrc(root), tree.Join("q")).ok() ? 0 : 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

  std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(dir);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].run, "dead");
  ASSERT_EQ(recovered[0].findings.size(), 1u);
  EXPECT_EQ(recovered[0].findings[0].outcome, SweepFinding::Outcome::kQuarantined);
  EXPECT_FALSE(std::filesystem::exists(root + "/.envrc"));
  EXPECT_TRUE(std::filesystem::exists(recovered[0].findings[0].moved_to));
  EXPECT_FALSE(std::filesystem::exists(dir + "/dead.json"));
}

TEST(SweepJournal, AMalformedRecordIsReportedAndKept) {
  TestTree tree;
  std::string dir = tree.Dir("pending");
  std::string path = tree.File("pending/bad.json", "{\"version\":1,\"paths\":\"nope\"}\n");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(dir);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_NE(recovered[0].error.find("bad.json"), std::string::npos) << recovered[0].error;
  EXPECT_TRUE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace corral
