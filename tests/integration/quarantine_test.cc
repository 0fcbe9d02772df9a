// `corral quarantine list | show | restore`, through the binary: what the
// sweep took out of the workspace is listed, shown and brought back on
// purpose, never over something that is there now (unless --overwrite),
// and never through a symlink the command left on the way.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "harness.h"

namespace corral_it {
namespace {

class Quarantine : public SandboxTest {
 protected:
  // A run that creates .git/hooks/pre-commit (swept into the quarantine);
  // returns the run id.
  std::string QuarantineAHook(const std::string& body) {
    workspace_.Write(".git/config", "[core]\n");
    workspace_.Write(".git/HEAD", "ref: refs/heads/main\n");
    Outcome outcome = RunIn({}, {"sh", "-c", "mkdir .git/hooks && printf '" + body + "' > .git/hooks/pre-commit"});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_FALSE(Exists(workspace_ / ".git/hooks")) << "the sweep took it out";
    std::vector<nlohmann::json> spawned = AuditEvents("spawned");
    return spawned.empty() ? std::string() : spawned.front().value("run", "");
  }
  std::string Hooks() const { return workspace_ / ".git/hooks"; }
};

TEST_F(Quarantine, ListShowsWhatTheSweepMoved) {
  std::string run = QuarantineAHook("#!/bin/sh\\necho hook\\n");
  ASSERT_FALSE(run.empty());
  Outcome listed = Corral({"quarantine", "list"});
  EXPECT_EQ(listed.exit_code, 0) << listed.Describe();
  EXPECT_EQ(listed.out, run + "  " + Hooks() + "  (directory)\n") << listed.Describe();
  Outcome json = Corral({"quarantine", "list", "--json"});
  nlohmann::json entries = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_TRUE(entries.is_array()) << json.Describe();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0]["run"], run);
  EXPECT_EQ(entries[0]["path"], Hooks());
  EXPECT_EQ(entries[0]["kind"], "directory");

  Outcome shown = Corral({"quarantine", "show", run, Hooks()});
  EXPECT_EQ(shown.exit_code, 0) << shown.Describe();
  EXPECT_EQ(shown.out, "pre-commit\n");
  shown = Corral({"quarantine", "show", run, Hooks() + "/pre-commit"});
  EXPECT_EQ(shown.out, "#!/bin/sh\necho hook\n") << shown.Describe();
  EXPECT_FALSE(Exists(Hooks())) << "show changes nothing";
}

TEST_F(Quarantine, RestorePutsItBackAndTheListForgetsIt) {
  std::string run = QuarantineAHook("restored\\n");
  Outcome restored = Corral({"quarantine", "restore", run, Hooks()});
  EXPECT_EQ(restored.exit_code, 0) << restored.Describe();
  EXPECT_EQ(ReadFile(Hooks() + "/pre-commit"), "restored\n");
  EXPECT_EQ(Corral({"quarantine", "list"}).out, "");
  Outcome again = Corral({"quarantine", "restore", run, Hooks()});
  EXPECT_EQ(again.exit_code, 64) << again.Describe();
  EXPECT_NE(again.err.find("nothing from " + Hooks()), std::string::npos) << again.Describe();
}

// Something at the path now (another run made it meanwhile) is never
// replaced without --overwrite.
TEST_F(Quarantine, RestoreRefusesToReplaceWhatIsThereUnlessTold) {
  std::string run = QuarantineAHook("quarantined\\n");
  std::string planted = RandomToken("PLANTED");
  WriteFile(Hooks(), planted);
  Outcome refused = Corral({"quarantine", "restore", run, Hooks()});
  EXPECT_EQ(refused.exit_code, 64) << refused.Describe();
  EXPECT_NE(refused.err.find("something is there now"), std::string::npos) << refused.Describe();
  EXPECT_EQ(ReadFile(Hooks()), planted);
  ASSERT_EQ(::unlink(Hooks().c_str()), 0);
  // An empty directory is what a plain rename would replace without a word.
  workspace_.Mkdir(".git/hooks");
  struct stat before;
  ASSERT_EQ(::stat(Hooks().c_str(), &before), 0);
  refused = Corral({"quarantine", "restore", run, Hooks()});
  EXPECT_EQ(refused.exit_code, 64) << refused.Describe();
  EXPECT_NE(refused.err.find("something is there now"), std::string::npos) << refused.Describe();
  struct stat after;
  ASSERT_EQ(::stat(Hooks().c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino) << "the directory there now was replaced";
  EXPECT_FALSE(Exists(Hooks() + "/pre-commit"));
  Outcome forced = Corral({"quarantine", "restore", "--overwrite", run, Hooks()});
  EXPECT_EQ(forced.exit_code, 0) << forced.Describe();
  EXPECT_EQ(ReadFile(Hooks() + "/pre-commit"), "quarantined\n");
}

// A symlink the command left on the way (.git pointing outside) is
// refused, never followed: nothing lands where it points.
TEST_F(Quarantine, RestoreNeverFollowsASymlinkOnTheWay) {
  std::string run = QuarantineAHook("hook\\n");
  std::filesystem::rename(workspace_ / ".git", workspace_ / "git-real");
  ASSERT_EQ(::symlink((outside_.path()).c_str(), (workspace_ / ".git").c_str()), 0);
  Outcome refused = Corral({"quarantine", "restore", run, Hooks()});
  EXPECT_EQ(refused.exit_code, 64) << refused.Describe();
  EXPECT_NE(refused.err.find("a symlink is on the way"), std::string::npos) << refused.Describe();
  EXPECT_FALSE(Exists(outside_ / "hooks"));
  EXPECT_EQ(Corral({"quarantine", "list"}).out, run + "  " + Hooks() + "  (directory)\n");
}

TEST_F(Quarantine, BadArgumentsAreOneClearError) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"quarantine", "show", "../x", "/tmp/a"},
        std::vector<std::string>{"quarantine", "show", "run", "relative/path"},
        std::vector<std::string>{"quarantine", "restore", "run", "/tmp/../etc"},
        std::vector<std::string>{"quarantine", "restore", "run"}}) {
    Outcome outcome = Corral(args);
    EXPECT_EQ(outcome.exit_code, 64) << outcome.Describe();
    EXPECT_EQ(std::count(outcome.err.begin(), outcome.err.end(), '\n'), 1) << outcome.Describe();
  }
}

}  // namespace
}  // namespace corral_it
