#include "repair/sweep_journal.h"

#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"
#include "state/state_dir.h"

namespace corral {
namespace {

using corral::testing::TestTree;

ProtectedSet MissingEnvrc(const std::string& root) {
  ProtectedSet set;
  set.paths.push_back({root + "/.envrc", ProtectedPath::State::kMissing, {}, "", root});
  return set;
}

// corral's state directory for a test: <tree>/corral.
StateDir StateIn(const TestTree& tree) {
  Result<StateDir> state = StateDir::OpenBelow(tree.path(), StateDir::Create::kYes);
  EXPECT_TRUE(state.ok()) << state.error().ToString();
  return state.ok() ? std::move(state).value() : StateDir();
}

// Begins a journal in a child that then exits without finishing it, as a
// killed corral would: the record stays active and its lock is gone.
void BeginInAProcessThatDies(const StateDir& state, const std::string& run, const ProtectedSet& set) {
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(SweepJournal::Begin(state, run, set).ok() ? 0 : 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(SweepJournal, NothingToSweepWritesNoRecord) {
  TestTree tree;
  Result<SweepJournal> journal = SweepJournal::Begin(StateIn(tree), "r1", ProtectedSet{});
  ASSERT_TRUE(journal.ok()) << journal.error().ToString();
  EXPECT_EQ(journal->path(), "");
  EXPECT_FALSE(std::filesystem::exists(tree.Join("corral/pending")));
}

TEST(SweepJournal, ARecordOfALiveCorralIsLeftAlone) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  tree.File("ws/.envrc", "made by a run still going\n");
  StateDir state = StateIn(tree);
  Result<SweepJournal> journal = SweepJournal::Begin(state, "live", MissingEnvrc(root));
  ASSERT_TRUE(journal.ok()) << journal.error().ToString();
  struct stat st;
  ASSERT_EQ(::stat(journal->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_TRUE(RecoverInterruptedSweeps(state).empty());  // its slot is locked: alive
  EXPECT_TRUE(std::filesystem::exists(root + "/.envrc"));
  // A second run takes another slot.
  Result<SweepJournal> second = SweepJournal::Begin(state, "next", MissingEnvrc(root));
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_NE(second->path(), journal->path());
  journal->Finish();
  second->Finish();
  EXPECT_TRUE(RecoverInterruptedSweeps(state).empty());  // both done
  EXPECT_TRUE(std::filesystem::exists(root + "/.envrc"));
}

// Also for a root whose name needs escaping in the record: quotes,
// backslashes and a newline.
TEST(SweepJournal, ARecordOfADeadCorralIsSweptOnce) {
  for (const std::string name : {"ws", "we\"ird\\dir\nname"}) {
    TestTree tree;
    std::string root = tree.Dir(name);
    tree.File(name + "/.envrc", "left by a killed run\n");
    StateDir dir = StateIn(tree);
    BeginInAProcessThatDies(dir, "dead", MissingEnvrc(root));

    std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(dir);
    ASSERT_EQ(recovered.size(), 1u) << name;
    EXPECT_EQ(recovered[0].error, "");
    EXPECT_EQ(recovered[0].run, "dead");
    ASSERT_EQ(recovered[0].findings.size(), 1u) << name;
    EXPECT_EQ(recovered[0].findings[0].path, root + "/.envrc");
    EXPECT_EQ(recovered[0].findings[0].outcome, SweepFinding::Outcome::kQuarantined);
    EXPECT_FALSE(std::filesystem::exists(root + "/.envrc"));
    EXPECT_TRUE(std::filesystem::exists(recovered[0].findings[0].moved_to));
    EXPECT_TRUE(RecoverInterruptedSweeps(dir).empty()) << "swept once";
  }
}

off_t SizeOf(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? st.st_size : -1;
}

// A finished slot is left empty, so a recovery need not open it; a dead
// corral's record behind finished slots is still found, and a slot an older
// corral marked done ('D') is emptied by the recovery that locks it.
TEST(SweepJournal, FinishedSlotsAreEmptyAndRecordsBehindThemAreRecovered) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  tree.File("ws/.envrc", "left by a killed run\n");
  StateDir state = StateIn(tree);
  Result<SweepJournal> first = SweepJournal::Begin(state, "first", MissingEnvrc(root));
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  BeginInAProcessThatDies(state, "dead", MissingEnvrc(root));  // the next slot
  std::string first_path = first->path();
  EXPECT_GT(SizeOf(first_path), 0);
  first->Finish();
  EXPECT_EQ(SizeOf(first_path), 0);

  std::string legacy = tree.File("corral/pending/slot-2.json", "D{\"version\":2}\n");
  ASSERT_EQ(::chmod(legacy.c_str(), 0600), 0);
  std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(state);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].run, "dead");
  ASSERT_EQ(recovered[0].findings.size(), 1u);
  EXPECT_FALSE(std::filesystem::exists(root + "/.envrc"));
  EXPECT_EQ(SizeOf(legacy), 0);
  EXPECT_TRUE(RecoverInterruptedSweeps(state).empty()) << "swept once";
}

// A slot kept from one run to the next (an executor's calls): each run's
// record goes over the last, its end marks it done and keeps the slot
// locked, so no recovery sweeps it; released, it is empty.
TEST(SweepJournal, AKeptSlotTakesEachRunsRecordAndIsNeverSweptWhenDone) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  StateDir state = StateIn(tree);
  SweepJournalSlot kept;
  std::string path;
  for (const char* run : {"call-1", "call-2", "call-3"}) {
    Result<SweepJournal> journal = SweepJournal::Begin(state, run, MissingEnvrc(root), &kept);
    ASSERT_TRUE(journal.ok()) << journal.error().ToString();
    if (path.empty()) path = journal->path();
    EXPECT_EQ(journal->path(), path) << "one slot for every run";
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text.substr(0, 1), "A");
    EXPECT_NE(text.find(run), std::string::npos);
    tree.File("ws/.envrc", "made by the user between calls\n");
    journal->Finish();
    EXPECT_GT(SizeOf(path), 0) << "kept, not emptied";
    EXPECT_TRUE(RecoverInterruptedSweeps(state).empty());
    EXPECT_TRUE(std::filesystem::exists(root + "/.envrc")) << "a done record is never swept";
    std::filesystem::remove(root + "/.envrc");
  }
  kept.Release();
  EXPECT_EQ(SizeOf(path), 0);
}

// A corral killed during a run that used a kept slot left an active record
// there, and its lock went with it: the next recovery sweeps it. One killed
// between runs left a done record: the recovery empties it, sweeping nothing.
TEST(SweepJournal, AKeptSlotsRecordIsRecoveredWhenItsCorralDiesDuringARun) {
  for (const bool during : {true, false}) {
    TestTree tree;
    std::string root = tree.Dir("ws");
    tree.File("ws/.envrc", "left by a killed run\n");
    StateDir state = StateIn(tree);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      SweepJournalSlot kept;
      Result<SweepJournal> journal = SweepJournal::Begin(state, "first", MissingEnvrc(root), &kept);
      if (!journal.ok()) ::_exit(1);
      journal->Finish();
      journal = SweepJournal::Begin(state, "killed", MissingEnvrc(root), &kept);
      if (!journal.ok()) ::_exit(1);
      if (!during) journal->Finish();
      ::_exit(0);  // no destructor runs, as under SIGKILL
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(state);
    if (during) {
      ASSERT_EQ(recovered.size(), 1u);
      EXPECT_EQ(recovered[0].run, "killed");
      EXPECT_FALSE(std::filesystem::exists(root + "/.envrc"));
    } else {
      EXPECT_TRUE(recovered.empty());
      EXPECT_TRUE(std::filesystem::exists(root + "/.envrc"));
      EXPECT_EQ(SizeOf(tree.Join("corral/pending/slot-0.json")), 0);
    }
    EXPECT_TRUE(RecoverInterruptedSweeps(state).empty()) << "swept once";
  }
}

// A root named with bytes that are not UTF-8 is recorded losslessly and
// recovered (journal_bytes: written raw, the record would not parse).
TEST(SweepJournal, ANameThatIsNotUtf8IsRecordedAndRecovered) {
  TestTree tree;
  std::string root = tree.Dir("ws\xff\xfe");
  tree.File("ws\xff\xfe/.envrc", "left by a killed run\n");
  StateDir dir = StateIn(tree);
  BeginInAProcessThatDies(dir, "dead", MissingEnvrc(root));
  std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(dir);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].error, "");
  ASSERT_EQ(recovered[0].findings.size(), 1u);
  EXPECT_EQ(recovered[0].findings[0].path, root + "/.envrc");
  EXPECT_FALSE(std::filesystem::exists(root + "/.envrc"));
}

// A slot that cannot be used (not a private file; a rejected record kept
// for a person) is passed over: the next slot takes the record.
TEST(SweepJournal, ASlotThatCannotBeUsedIsPassedOver) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  tree.Dir("corral/pending");
  StateDir state = StateIn(tree);
  std::string open_slot = tree.File("corral/pending/slot-0.json", "");
  ASSERT_EQ(::chmod(open_slot.c_str(), 0644), 0);
  std::string rejected = tree.File("corral/pending/slot-1.json", "R{}\n");
  ASSERT_EQ(::chmod(rejected.c_str(), 0600), 0);
  Result<SweepJournal> journal = SweepJournal::Begin(state, "r", MissingEnvrc(root));
  ASSERT_TRUE(journal.ok()) << journal.error().ToString();
  EXPECT_EQ(journal->path(), tree.Join("corral/pending/slot-2.json"));
  std::ifstream kept(rejected);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), std::istreambuf_iterator<char>()), "R{}\n");
  journal->Finish();
}

// A record larger than a recovery reads is never written: Begin fails (and
// the run is refused), so no record is left that the next run cannot read.
TEST(SweepJournal, ARecordTooLargeToReadIsNeverWritten) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  StateDir state = StateIn(tree);
  ProtectedSet set;
  const std::string target(4000, '\x01');  // six bytes each in the record
  for (int i = 0; i < 800; ++i) {
    set.paths.push_back({root + "/d" + std::to_string(i) + "/.envrc", ProtectedPath::State::kSymlink, {}, target,
                         root});
  }
  Result<SweepJournal> journal = SweepJournal::Begin(state, "r", set);
  ASSERT_FALSE(journal.ok());
  EXPECT_NE(journal.error().message().find("more than the 16 MiB"), std::string::npos) << journal.error().ToString();
  EXPECT_TRUE(RecoverInterruptedSweeps(state).empty());
}

// A state directory on a read-only filesystem (a read-only home) is one
// that cannot be made: Begin says so with kStateDirUnavailable, and the run
// goes on without a journal instead of being refused. Judged in a child of
// the test's own, in a user and mount namespace where the tree is bound
// read-only.
TEST(SweepJournal, AReadOnlyStateDirectoryIsUnavailable) {
  TestTree tree;
  std::string root = tree.Dir("ws");
  {
    StateDir state = StateIn(tree);
    Result<SweepJournal> first = SweepJournal::Begin(state, "first", MissingEnvrc(root));
    ASSERT_TRUE(first.ok()) << first.error().ToString();
    first->Finish();  // pending/slot-0.json is there, and empty
  }
  const uid_t uid = ::geteuid();
  const gid_t gid = ::getegid();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto write = [](const char* path, const std::string& text) {
      std::ofstream out(path);
      out << text;
      return static_cast<bool>(out.flush());
    };
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 || !write("/proc/self/setgroups", "deny") ||
        !write("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
        !write("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
      ::_exit(2);
    }
    const std::string dir = tree.Join("corral");
    struct statvfs fs;
    if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 || ::statvfs(dir.c_str(), &fs) != 0 ||
        ::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | fs.f_flag, nullptr) != 0) {
      ::_exit(3);
    }
    Result<StateDir> state = StateDir::OpenBelow(tree.path(), StateDir::Create::kYes);
    if (!state.ok()) ::_exit(4);
    Result<SweepJournal> journal = SweepJournal::Begin(*state, "ro", MissingEnvrc(root));
    ::_exit(!journal.ok() && journal.error().code() == kStateDirUnavailable ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child exit " << WEXITSTATUS(status);
}

TEST(SweepJournal, AMalformedRecordIsReportedAndKept) {
  TestTree tree;
  tree.Dir("corral/pending");
  StateDir dir = StateIn(tree);
  std::string path = tree.File("corral/pending/slot-0.json", "A{\"version\":2,\"run\":\"r\",\"quarantine\":\"/q\",\"paths\":[[\"missing\"]]}\n");
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(dir);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_NE(recovered[0].error.find("slot-0.json"), std::string::npos) << recovered[0].error;
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_TRUE(RecoverInterruptedSweeps(dir).empty()) << "reported once, never retried";
}

// A record naming a path outside its root (or the root itself) is never
// swept: the sweep runs unconfined and must only ever touch a writable root.
TEST(SweepJournal, APathOutsideItsRootIsNeverSwept) {
  TestTree tree;
  tree.Dir("corral/pending");
  StateDir dir = StateIn(tree);
  std::string victim = tree.File("home/.bashrc", "the user's own\n");
  std::string root = tree.Dir("ws");
  for (const std::string& paths : {"[[\"missing\",\"" + victim + "\",\"" + root + "\",\"\"]]",
                                   "[[\"missing\",\"" + root + "\",\"" + root + "\",\"\"]]",
                                   std::string("[[\"missing\",\"/\",\"/tmp/x\",\"\"]]")}) {
    std::string path = tree.File("corral/pending/slot-0.json", "A{\"version\":2,\"run\":\"r\",\"quarantine\":\"" +
                                                            tree.Join("q") + "\",\"paths\":" + paths + "}\n");
    ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
    std::vector<RecoveredSweep> recovered = RecoverInterruptedSweeps(dir);
    ASSERT_EQ(recovered.size(), 1u) << paths;
    EXPECT_NE(recovered[0].error.find("not inside its root"), std::string::npos) << recovered[0].error;
    EXPECT_TRUE(std::filesystem::exists(victim));
    EXPECT_TRUE(std::filesystem::exists(root));
  }
}

}  // namespace
}  // namespace corral
