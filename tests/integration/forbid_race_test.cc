// forbid_read against a workspace that changes under corral: a directory the
// mask walk cannot read, a concurrent run renaming the tree while the walk
// runs, and a pattern that hides a whole system tree. Each is judged from
// outside: the secret's bytes are not in anything the runs printed.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "harness.h"

namespace corral_it {
namespace {

constexpr int kExitPolicy = 77;

class ForbidRace : public SandboxTest {
 protected:
  void ExpectSecretAbsent(const Outcome& outcome) {
    EXPECT_EQ(outcome.out.find(secret_), std::string::npos) << outcome.Describe();
    EXPECT_EQ(outcome.err.find(secret_), std::string::npos) << outcome.Describe();
  }

  // `command` under --forbid-read **/.env, again and again for `length`
  // while a racer runs: the secret is in no run's output. The number of runs.
  int ReadsWhileRacing(const std::string& command, std::chrono::milliseconds length) {
    int runs = 0;
    for (const auto end = std::chrono::steady_clock::now() + length; std::chrono::steady_clock::now() < end;) {
      Outcome read = RunIn({"--forbid-read", "**/.env"}, {"sh", "-c", command});
      ++runs;
      ExpectSecretAbsent(read);
      if (HasFailure()) break;
    }
    return runs;
  }
  // The secret at `file` in the workspace, hidden by `pattern`: the run
  // starts, and `cat` of it shows nothing of the secret.
  void ExpectPatternHides(const std::string& pattern, const std::string& file) {
    workspace_.Write(file, secret_ + "\n");
    Outcome read = RunIn({"--forbid-read", pattern}, {"sh", "-c", "echo started; cat \"$0\"", file});
    EXPECT_NE(read.out.find("started"), std::string::npos) << pattern << "\n" << read.Describe();
    ExpectSecretAbsent(read);
  }

  const std::string secret_ = RandomToken("DOTENV");
};

// A directory the walk cannot list is hidden whole: the next run cannot open
// it up again and read what the walk never saw.
TEST_F(ForbidRace, ADirectoryTheWalkCannotReadIsHiddenWhole) {
  workspace_.Write("sub/.env", secret_ + "\n");
  Outcome lock = RunIn({}, {"chmod", "000", "sub"});
  ASSERT_EQ(lock.exit_code, 0) << lock.Describe();
  Outcome read = RunIn({"--forbid-read", "**/.env"}, {"sh", "-c", "chmod 755 sub; cat sub/.env"});
  EXPECT_EQ(read.exit_code, 1) << read.Describe();  // the run started, and cat failed
  ExpectSecretAbsent(read);
  ASSERT_EQ(::chmod((workspace_ / "sub").c_str(), 0755), 0);
  EXPECT_EQ(ReadFile(workspace_ / "sub/.env"), secret_ + "\n");  // nothing was lost either
}

// explain says why a directory is hidden whole.
TEST_F(ForbidRace, ExplainSaysAnUnreadableDirectoryIsHiddenWhole) {
  workspace_.Write("sub/.env", secret_ + "\n");
  Outcome lock = RunIn({}, {"chmod", "000", "sub"});
  ASSERT_EQ(lock.exit_code, 0) << lock.Describe();
  Outcome explain = Corral({"explain", "--forbid-read", "**/.env", "--", "true"});
  ASSERT_EQ(::chmod((workspace_ / "sub").c_str(), 0755), 0);
  EXPECT_EQ(explain.exit_code, 0) << explain.Describe();
  if (::geteuid() != 0) {
    EXPECT_NE(explain.out.find(workspace_ / "sub"), std::string::npos) << explain.Describe();
    EXPECT_NE(explain.out.find("could not be read"), std::string::npos) << explain.Describe();
  } else {
    // root reads every directory: the file itself is hidden, not its parent.
    EXPECT_EQ(explain.out.find("could not be read"), std::string::npos) << explain.Describe();
  }
}

// One run renames sub <-> sub2 as fast as it can; the other runs, each with
// --forbid-read '**/.env', try to read the secret under both names. Every run
// either reads the control file and not the secret, or is refused because
// the tree moved. Three hundred empty directories beside sub keep each walk
// of the workspace busy for a while between its listing and its look at
// sub, so that the rename falls in between in most runs: a walk that took
// a move for no move (the forbid_walk_moves mutant) then shows the secret
// within the test's time every time, not in two runs of three.
TEST_F(ForbidRace, ARenameRacerNeverRevealsTheSecret) {
  workspace_.Write("sub/.env", secret_ + "\n");
  for (int i = 0; i < 300; ++i) workspace_.Mkdir("pad" + std::to_string(i));
  const std::string control = RandomToken("VISIBLE");
  workspace_.Write("visible.txt", control + "\n");
  Process racer(ProbeArgv("rename_swap", {"sub", "sub2", "3000"}), Defaults({}));
  int runs = 0, refused = 0;
  const auto end = std::chrono::steady_clock::now() + 2500ms;
  while (std::chrono::steady_clock::now() < end) {
    Outcome read = RunIn({"--forbid-read", "**/.env"}, {"sh", "-c", "cat visible.txt; cat sub/.env sub2/.env"});
    ++runs;
    ExpectSecretAbsent(read);
    if (read.exit_code == kExitPolicy) {
      ++refused;
      EXPECT_NE(read.err.find("moved"), std::string::npos) << read.Describe();
    } else if (read.exit_code == 79) {
      // The racer renamed sub while this run's sweep checked sub/.git (a
      // nested protected path): reported, never passed over.
      EXPECT_NE(read.err.find("kept moving while corral checked"), std::string::npos) << read.Describe();
    } else {
      EXPECT_NE(read.out.find(control), std::string::npos) << read.Describe();
    }
    if (HasFailure()) break;
  }
  const Outcome& raced = racer.Wait();
  EXPECT_EQ(raced.exit_code, kProbeEscaped) << raced.Describe();  // the racer did rename
  EXPECT_GT(runs, 5);
  std::printf("%d runs, %d refused because the tree moved\n", runs, refused);
}

// Without the racer the same runs start and hide the file.
TEST_F(ForbidRace, ControlWithoutARacerTheRunStartsAndHidesTheFile) {
  workspace_.Write("sub/.env", secret_ + "\n");
  Outcome read = RunIn({"--forbid-read", "**/.env"}, {"sh", "-c", "cat sub/.env"});
  EXPECT_EQ(read.exit_code, 1) << read.Describe();
  ExpectSecretAbsent(read);
}

// Hiding /etc itself starts (as root, /etc's root-only files are masks of
// their own, which lie inside it) and hides it.
TEST_F(ForbidRace, ForbidReadOfEtcStartsAndHidesIt) {
  ASSERT_NE(ReadFile("/etc/passwd").value_or("").find("root:x:0:0"), std::string::npos);
  Outcome outcome = RunIn({"--forbid-read", "/etc"}, {"sh", "-c", "echo started; cat /etc/passwd; ls -a /etc"});
  EXPECT_NE(outcome.out.find("started"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("root:x:0:0"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("passwd"), std::string::npos) << outcome.Describe();
}

// Hiding a directory that holds protected files (.git/config, which the
// sandbox otherwise binds read-only) starts and hides them: nothing is
// mounted inside a hidden directory.
TEST_F(ForbidRace, ForbidReadOfADirectoryWithProtectedFilesStartsAndHidesIt) {
  workspace_.Write(".git/config", "[core]\n\t# " + secret_ + "\n");
  workspace_.Mkdir(".git/hooks");
  Outcome outcome = RunIn({"--forbid-read", ".git"}, {"sh", "-c", "echo started; cat .git/config"});
  EXPECT_NE(outcome.out.find("started"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.exit_code, 1) << outcome.Describe();
  ExpectSecretAbsent(outcome);
  EXPECT_NE(ReadFile(workspace_ / ".git/config").value_or("").find(secret_), std::string::npos);
}

// A file <-> directory exchange racer. The walk skips the fstatat of a
// non-matching entry readdir calls DT_REG; `sub` (holding .env) and the
// file `subf` swap places (RENAME_EXCHANGE) as fast as they can, so a
// listing may call the directory's name a file: the swap is an inotify
// event, and the walk is done again.
TEST_F(ForbidRace, AFileDirectoryExchangeRacerNeverRevealsTheSecret) {
  workspace_.Write("sub/.env", secret_ + "\n");
  workspace_.Write("subf", "plain\n");
  const std::string control = RandomToken("VISIBLE");
  workspace_.Write("visible.txt", control + "\n");
  Process racer(ProbeArgv("rename_swap", {"sub", "subf", "3000", "exchange"}), Defaults({}));
  EXPECT_GT(ReadsWhileRacing("cat visible.txt; for i in 1 2 3 4 5 6 7 8; do cat sub/.env subf/.env 2>/dev/null; done",
                             2500ms),
            5);
  const Outcome& raced = racer.Wait();
  EXPECT_EQ(raced.exit_code, kProbeEscaped) << raced.Describe();
}

// Pattern edge cases, each a secret the pattern names: a "." segment (it
// used to hide nothing), and a backslash, which is a character like any
// other (fnmatch read it as an escape and hid `ab` instead).
TEST_F(ForbidRace, ADotSegmentPatternHidesTheFile) { ExpectPatternHides("./.env", ".env"); }

TEST_F(ForbidRace, AnInnerDotSegmentPatternHidesTheFile) { ExpectPatternHides("conf/./key.pem", "conf/key.pem"); }

TEST_F(ForbidRace, ABackslashNamedFileIsHidden) { ExpectPatternHides("a\\b", "a\\b"); }

// A racer outside the sandbox turns the file `sub`
// into a directory and back without RENAME_EXCHANGE: the directory `hold`
// (its .env written before any run) is renamed over the unlinked file
// `sub`, then back, and the file is made again. The secret exists, unmoved
// in its directory, before every walk.
TEST_F(ForbidRace, AFileThatBecomesADirectoryNeverRevealsTheSecret) {
  workspace_.Write("hold/.env", secret_ + "\n");
  workspace_.Write("sub", "plain\n");
  const std::string script =
      "import os,time\n"
      "end=time.time()+4\n"
      "n=0\n"
      "while time.time()<end:\n"
      "  try:\n"
      "    os.unlink('sub'); os.rename('hold','sub'); os.rename('sub','hold'); open('sub','w').write('plain\\n'); n+=1\n"
      "  except OSError: pass\n"
      "print('cycles', n)\n";
  Process racer({"/usr/bin/python3", "-c", script}, Defaults({}));
  EXPECT_GT(ReadsWhileRacing("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do cat sub/.env hold/.env 2>/dev/null; done; true",
                             3500ms),
            5);
  const Outcome& raced = racer.Wait();
  EXPECT_NE(raced.out.find("cycles"), std::string::npos) << raced.Describe();
}

// A relative pattern is joined to the workspace's path quoted: a workspace
// whose path holds `[` or `\` (which made every relative pattern, `**/.env`
// too, hide nothing when the path went in as pattern text) still hides.
TEST_F(ForbidRace, AWorkspacePathWithBracketOrBackslashStillHides) {
  for (const char* name : {"proj[1]", "proj\\x"}) {
    const std::string dir = workspace_ / name;
    workspace_.Write(std::string(name) + "/.env", secret_ + "\n");
    workspace_.Write(std::string(name) + "/sub/.env", secret_ + "\n");
    SpawnOptions options;
    options.cwd = dir;
    Outcome read = RunIn({"--workspace", dir, "--forbid-read", "**/.env"},
                         {"sh", "-c", "echo started; cat .env sub/.env"}, options);
    EXPECT_NE(read.out.find("started"), std::string::npos) << name << " " << read.Describe();
    ExpectSecretAbsent(read);
  }
}

// The same for HOME: a home whose path holds `[` still hides ~/.ssh (a
// --forbid-read pattern) and the built-in credential stores through a
// grant of the home.
TEST_F(ForbidRace, AHomePathWithBracketStillHidesCredentialStores) {
  const std::string home = "/tmp/corral-home[" + RandomToken("H") + "]";
  std::filesystem::create_directories(home + "/.ssh");
  std::filesystem::create_directories(home + "/.aws");
  std::ofstream(home + "/.ssh/id_rsa") << secret_ << "\n";
  std::ofstream(home + "/.aws/credentials") << secret_ << "\n";
  SpawnOptions options;
  options.env["HOME"] = home;
  Outcome read = RunIn({"--allow-read", home, "--forbid-read", "~/.ssh"},
                       {"sh", "-c", "echo started; cat \"$0/.ssh/id_rsa\" \"$0/.aws/credentials\"", home}, options);
  EXPECT_NE(read.out.find("started"), std::string::npos) << read.Describe();
  ExpectSecretAbsent(read);
  std::filesystem::remove_all(home);
}

}  // namespace
}  // namespace corral_it
