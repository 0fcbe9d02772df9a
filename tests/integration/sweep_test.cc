// The sweep, judged from outside after the run: what the command created at a
// missing protected path is gone from the workspace whatever modes it gave
// it, is never copied (a sparse file stays sparse), and when it cannot be
// removed corral says so and exits 79 instead of the command's status.
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <memory>

#include "harness.h"

namespace corral_it {
namespace {

constexpr int kExitProtectedPathLeft = 79;

// A directory on /dev/shm: a filesystem other than the workspace's (/tmp).
class OtherFilesystemDir {
 public:
  OtherFilesystemDir() {
    char pattern[] = "/dev/shm/corral-it-XXXXXX";
    if (::mkdtemp(pattern) != nullptr) path_ = pattern;
  }
  ~OtherFilesystemDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class ProtectedSweep : public SandboxTest {
 protected:
  std::vector<nlohmann::json> Findings() const { return AuditEvents("protected"); }
  // The findings of a killed run's sweep, done by the run after it.
  std::vector<nlohmann::json> RecoveredFindings() const {
    std::vector<nlohmann::json> recovered;
    for (const nlohmann::json& finding : Findings()) {
      if (finding.contains("recovered_from")) recovered.push_back(finding);
    }
    return recovered;
  }
  std::string RunId() const {
    std::vector<nlohmann::json> spawned = AuditEvents("spawned");
    return spawned.empty() ? std::string() : spawned.front()["run"].get<std::string>();
  }
  // A run that plants .envrc, its corral killed (SIGKILL) before its sweep;
  // then the next run, which recovers it. Judged from outside: the .envrc
  // is there after the kill and gone after the next run.
  Outcome KillARunThatPlantsAnEnvrcThenRunAgain() {
    auto run = std::make_unique<Process>(RunArgv({}, {"sh", "-c", "echo evil > .envrc; touch ready; sleep 30"}),
                                         Defaults({}));
    EXPECT_TRUE(WaitFor([&] { return Exists(workspace_ / "ready"); }, 10s)) << run->OutputSoFar();
    EXPECT_EQ(::kill(run->pid(), SIGKILL), 0);
    run->Wait();
    EXPECT_TRUE(Exists(workspace_ / ".envrc")) << "the kill came before the sweep";
    Outcome next = RunIn({}, {"true"});
    EXPECT_EQ(next.exit_code, 0) << next.Describe();
    EXPECT_FALSE(Exists(workspace_ / ".envrc")) << next.Describe();
    return next;
  }
};

TEST_F(ProtectedSweep, ReadOnlyDirectoriesTheCommandCreatedAreTakenOut) {
  workspace_.Write(".git/config", "[core]\n");
  workspace_.Write(".git/HEAD", "ref: refs/heads/main\n");
  workspace_.Write("src/main.c", "int main(void) { return 0; }\n");
  std::set<std::string> before = workspace_.Listing();
  // Every mode trick against an unprivileged caller's sweep: read-only
  // directories, unreadable files and directories, and the caller's own .git
  // made read-only above the created hooks.
  std::string script =
      "mkdir .git/hooks .vscode .claude && printf '#!/bin/sh\\ntouch canary\\n' > .git/hooks/pre-commit && "
      "chmod 755 .git/hooks/pre-commit && echo '{}' > .vscode/tasks.json && echo '{}' > .claude/settings.json && "
      "mkdir .claude/inner && chmod 0 .claude/inner .claude/settings.json && "
      "chmod 555 .git/hooks .vscode .claude .git";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  ::chmod((workspace_ / ".git").c_str(), 0755);
  EXPECT_EQ(workspace_.Listing(), before) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit"));
  for (const nlohmann::json& finding : Findings()) {
    EXPECT_EQ(finding["outcome"], "quarantined") << finding.dump();
    std::string moved = finding.value("moved_to", "");
    EXPECT_TRUE(moved.starts_with(state_.path() + "/corral/quarantine/")) << finding.dump();
    EXPECT_TRUE(Exists(moved)) << moved;
  }
  EXPECT_EQ(Findings().size(), 3u) << outcome.Describe();
  EXPECT_NE(outcome.err.find(".git/hooks: the command created a protected path; moved to "), std::string::npos)
      << outcome.err;
}

// The state directory on another filesystem: nothing is copied (a copy would
// write the sparse file out in full); the tree moves beside the workspace,
// on its own filesystem, under a name no tool runs.
TEST_F(ProtectedSweep, OnAnotherFilesystemTheQuarantineStaysOnTheWorkspaces) {
  OtherFilesystemDir state;
  ASSERT_FALSE(state.path().empty()) << "the test needs a writable /dev/shm";
  struct stat here, there;
  ASSERT_EQ(::stat(workspace_.path().c_str(), &here), 0);
  ASSERT_EQ(::stat(state.path().c_str(), &there), 0);
  ASSERT_NE(here.st_dev, there.st_dev) << "the test needs /dev/shm on a filesystem other than /tmp";

  SpawnOptions options = WithEnv({{"XDG_STATE_HOME", state.path()}});
  std::string script = "mkdir .vscode && truncate -s 1G .vscode/big && chmod 555 .vscode";
  Outcome outcome = RunIn({}, {"sh", "-c", script}, options);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".vscode"));

  std::string moved = workspace_ / (".corral-quarantine/" + RunId() + "/%2Evscode");
  std::vector<nlohmann::json> findings = Findings();
  ASSERT_EQ(findings.size(), 1u) << outcome.Describe();
  EXPECT_EQ(findings[0]["outcome"], "quarantined");
  EXPECT_EQ(findings[0]["moved_to"], moved);
  EXPECT_NE(outcome.err.find("moved to " + moved), std::string::npos) << outcome.err;
  struct stat big;
  ASSERT_EQ(::stat((moved + "/big").c_str(), &big), 0);
  EXPECT_EQ(big.st_size, off_t{1} << 30);
  EXPECT_LT(big.st_blocks, 1024) << "moved, not copied: still sparse";
  // Nothing of it reached the state directory's filesystem.
  std::error_code ec;
  std::filesystem::path quarantine = state.path() + "/corral/quarantine";
  for (auto it = std::filesystem::recursive_directory_iterator(quarantine, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    EXPECT_TRUE(it->is_directory()) << it->path();
  }
}

// What cannot be removed is not reported as removed: here the created
// directory is a mount point in corral's mount namespace (a mount the test
// makes from outside while the command waits), which can be neither renamed
// nor deleted.
TEST_F(ProtectedSweep, WhatCannotBeRemovedFailsTheRunLoudly) {
  std::string target = workspace_ / ".claude";
  std::string cover = outside_ / "cover";
  outside_.Mkdir("cover");
  std::string mount_when_created = "for i in $(seq 1 400); do if [ -d '" + target + "' ]; then mount --bind '" + cover +
                                   "' '" + target + "' && break; fi; sleep 0.05; done & \"$@\"; status=$?; wait; "
                                   "exit $status";
  std::vector<std::string> argv = {"/usr/bin/unshare", "--user", "--map-root-user", "--mount", "--propagation",
                                   "private", "/bin/sh", "-c", mount_when_created, "sh"};
  std::vector<std::string> corral =
      RunArgv({}, {"sh", "-c", "mkdir .claude && echo '{}' > .claude/settings.json && sleep 3; exit 3"});
  argv.insert(argv.end(), corral.begin(), corral.end());
  Outcome outcome = Execute(argv, Defaults({}));

  EXPECT_EQ(outcome.exit_code, kExitProtectedPathLeft) << outcome.Describe();
  EXPECT_NE(outcome.err.find(target + ": the command created a protected path; corral could NOT remove it"),
            std::string::npos)
      << outcome.err;
  std::vector<nlohmann::json> findings = Findings();
  ASSERT_EQ(findings.size(), 1u) << outcome.Describe();
  EXPECT_EQ(findings[0]["outcome"], "left");
  EXPECT_NE(findings[0]["error"].get<std::string>().find("Device or resource busy"), std::string::npos);
  std::vector<nlohmann::json> exited = AuditEvents("exited");
  ASSERT_EQ(exited.size(), 1u);
  EXPECT_EQ(exited[0]["code"], 3) << "the command's own status is still in the trail";
  // Outside corral's namespace the directory is plainly there, as reported.
  EXPECT_TRUE(Exists(target + "/settings.json"));
  EXPECT_FALSE(Exists(workspace_ / ".corral-quarantine")) << "no empty quarantine left behind";
}

// corral killed before its sweep (SIGKILL): the write-ahead journal makes
// the next run sweep what the interrupted one left. Judged from outside: the
// planted .envrc is in the workspace after the kill and gone after the next
// run, which says so and records where it went.
TEST_F(ProtectedSweep, WhatAKilledRunLeftIsSweptByTheNextRun) {
  Outcome next = KillARunThatPlantsAnEnvrcThenRunAgain();
  EXPECT_NE(next.err.find("ended before corral could sweep"), std::string::npos) << next.Describe();
  std::vector<nlohmann::json> recovered = RecoveredFindings();
  ASSERT_EQ(recovered.size(), 1u) << ReadFile(audit_path()).value_or("");
  EXPECT_EQ(recovered[0]["path"], workspace_ / ".envrc");
  EXPECT_EQ(recovered[0]["outcome"], "quarantined");
  EXPECT_TRUE(Exists(recovered[0]["moved_to"].get<std::string>()));

  // The journal is gone: a third run finds nothing to recover.
  Outcome third = RunIn({}, {"true"});
  EXPECT_EQ(third.err.find("ended before corral could sweep"), std::string::npos) << third.Describe();
}

// The same, when an earlier run named a directory with a byte that is not
// UTF-8: the journal records the names the protected set found there (the
// directory's own .envrc and .git among them), and a record the recovery
// could not parse would leave what the killed run planted (journal_bytes).
TEST_F(ProtectedSweep, ANameThatIsNotUtf8DoesNotStopTheRecovery) {
  Outcome named = RunIn({}, {"sh", "-c", "mkdir \"$(printf '\\377')\""});
  ASSERT_EQ(named.exit_code, 0) << named.Describe();
  ASSERT_TRUE(Exists(workspace_ / "\xff"));
  Outcome next = KillARunThatPlantsAnEnvrcThenRunAgain();
  EXPECT_EQ(next.err.find("not a sweep journal record"), std::string::npos) << next.Describe();
  std::vector<nlohmann::json> recovered = RecoveredFindings();
  ASSERT_EQ(recovered.size(), 1u) << ReadFile(audit_path()).value_or("");
  EXPECT_EQ(recovered[0]["path"], workspace_ / ".envrc");
}

// A state directory that is there but takes no journal record (here its
// pending/ is a file; a full disk in practice) refuses the run: the sweep
// of a corral killed mid-run is a guarantee (journal_optional). Under
// --best-effort the run goes on, and the trail says what was dropped.
TEST_F(ProtectedSweep, ARunWhoseJournalCannotBeWrittenIsRefused) {
  Outcome first = RunIn({}, {"true"});  // makes the state directory
  ASSERT_EQ(first.exit_code, 0) << first.Describe();
  std::filesystem::remove_all(state_ / "corral/pending");
  state_.Write("corral/pending", "not a directory\n", 0600);
  Outcome refused = RunIn({}, {"touch", "ran"});
  EXPECT_NE(refused.exit_code, 0) << refused.Describe();
  EXPECT_NE(refused.err.find("the sweep journal"), std::string::npos) << refused.Describe();
  EXPECT_FALSE(Exists(workspace_ / "ran")) << refused.Describe();
  Outcome best_effort = RunIn({"--best-effort"}, {"touch", "ran"});
  EXPECT_EQ(best_effort.exit_code, 0) << best_effort.Describe();
  EXPECT_TRUE(Exists(workspace_ / "ran"));
  EXPECT_NE(ReadFile(audit_path()).value_or("").find("\"action\":\"journal\""), std::string::npos);
}

// Two overlapping runs in one workspace: the first keeps renaming what it
// can reach in a directory the second created (and that directory itself)
// while the second run's sweep takes it out, its quarantine on another
// filesystem. Whatever the sweep does, it stays inside the workspace: the
// directory above it, the workspace, a file beside it and the user's file
// in it are all still there, and nothing else appeared or vanished outside.
TEST_F(ProtectedSweep, ARenameRaceNeverTakesTheSweepOutsideTheWorkspace) {
  OtherFilesystemDir state;
  ASSERT_FALSE(state.path().empty()) << "the test needs a writable /dev/shm";
  TempDir above("corral-above");
  std::string ws = above / "ws";
  above.Write("canary", "beside the workspace\n");
  above.Write("ws/src/keep", "the user's\n");
  SpawnOptions options = WithEnv({{"XDG_STATE_HOME", state.path()}});
  options.cwd = ws;
  // The chain's middle name is the workspace's: a sweep that climbs with
  // ".." from a moved directory would take the workspace's name for it.
  // Ten protected directories, each a chance for the race: one racer
  // thread each keeps the directory away from its name about half the time,
  // and moves the deepest directory in it up to the workspace and back.
  std::string names = "'.claude', '.vscode', '.idea', '.cursor', '.gemini', '.codex', '.windsurf', '.continue', "
                      "'.zed', '.devcontainer'";
  std::string racer =
      "import os, threading, time\n"
      "end = time.time() + 8\n"
      "def race(name):\n"
      "    deep, up = name + '/ws/b' + name, 'b' + name\n"
      "    while not os.path.exists('stop') and time.time() < end:\n"
      "        for old, new in ((name, name + '~'), (name + '~', name), (deep, up), (up, deep)):\n"
      "            try:\n"
      "                os.rename(old, new)\n"
      "            except OSError:\n"
      "                pass\n"
      "threads = [threading.Thread(target=race, args=(n,)) for n in (" + names + ")]\n"
      "for t in threads: t.start()\n"
      "open('a-ready', 'w').close()\n"
      "for t in threads: t.join()\n";
  std::string creator =
      "import os\n"
      "for name in (" + names + "):\n"
      "    try:\n"
      "        os.makedirs(name + '/ws/b' + name)\n"
      "        for i in range(300):\n"
      "            open(name + '/ws/b' + name + '/f%d' % i, 'w').close()\n"
      "    except OSError:\n"
      "        pass\n";
  for (int round = 0; round < 12; ++round) {
    Process first(RunArgv({}, {"/usr/bin/python3", "-c", racer}), Defaults(options));
    ASSERT_TRUE(WaitFor([&] { return Exists(ws + "/a-ready"); }, 10s)) << first.OutputSoFar();
    Outcome second = Execute(RunArgv({}, {"/usr/bin/python3", "-c", creator}), Defaults(options));
    WriteFile(ws + "/stop", "");
    first.Wait();
    EXPECT_TRUE(second.exit_code == 0 || second.exit_code == kExitProtectedPathLeft) << second.Describe();
    ASSERT_TRUE(Exists(ws)) << "round " << round << second.Describe();
    ASSERT_EQ(ReadFile(above / "canary"), "beside the workspace\n") << "round " << round << second.Describe();
    ASSERT_EQ(ReadFile(ws + "/src/keep"), "the user's\n") << "round " << round << second.Describe();
    std::set<std::string> outside;
    for (const std::string& entry : above.Listing()) {
      if (!entry.starts_with("ws/") || entry == "ws/") outside.insert(entry);
    }
    ASSERT_EQ(outside, (std::set<std::string>{"canary", "ws/"})) << "round " << round << second.Describe();
    // The next round starts from the user's tree alone.
    std::vector<std::string> made;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(ws, ec)) made.push_back(entry.path().string());
    for (const std::string& path : made) {
      if (path == ws + "/src") continue;
      Execute({"/bin/sh", "-c", "chmod -R u+rwx \"$0\"; rm -rf \"$0\"", path});
    }
  }
}

// Overlapping runs and the protected-path guarantee: run A makes a
// repository with a pre-commit hook and waits; run B starts while that .git
// exists (so B binds it read-only), waits for A's sweep to take it away, and
// makes .git again, hook and all. B's sweep takes out the new .git, because
// it is not the one B found. Judged by a real host `git commit` afterwards:
// the hook would write a file outside the workspace.
TEST_F(ProtectedSweep, AHookMadeAfterAnotherRunsSweepDoesNotSurviveTheRun) {
  std::string canary = outside_ / "PWNED";
  std::string plant = "git init -q . && printf '#!/bin/sh\\ntouch " + canary +
                      "\\n' > .git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit";
  std::string first_script =
      plant + " && touch a-ready && i=0; while [ ! -e b-started ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done";
  Process first(RunArgv({}, {"sh", "-c", first_script}), Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "a-ready"); }, 10s)) << first.OutputSoFar();
  std::string second_script = "touch b-started && i=0; while [ -e .git ] && [ $i -lt 200 ]; do sleep 0.05; "
                              "i=$((i+1)); done; [ ! -e .git ] && " + plant;
  Outcome second = RunIn({}, {"sh", "-c", second_script});
  const Outcome& a = first.Wait();
  EXPECT_EQ(a.exit_code, 0) << a.Describe();
  EXPECT_EQ(second.exit_code, 0) << second.Describe();
  EXPECT_NE(second.err.find(workspace_ / ".git: a new file or directory took the place of a protected path"),
            std::string::npos)
      << second.err;
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit")) << second.Describe();

  std::vector<std::string> git = {"/usr/bin/git", "-C", workspace_.path(), "-c", "user.email=t@t", "-c", "user.name=t"};
  auto host_git = [&](std::vector<std::string> args) {
    std::vector<std::string> argv = git;
    argv.insert(argv.end(), args.begin(), args.end());
    return Execute(argv);
  };
  host_git({"init", "-q", "."});
  Outcome commit = host_git({"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_EQ(commit.exit_code, 0) << commit.Describe();
  EXPECT_FALSE(Exists(canary)) << "the hook made in the second run ran on the host";
}

// Two runs, one's workspace inside the other's (an agent on a monorepo and
// one on a subproject). While the inner run's sweep works, the outer run has
// swapped a directory above the inner workspace for a symlink to a tree
// outside both. The sweep works in the inner workspace's own directory,
// opened before its command ran: the tree outside is untouched, and the
// hook the inner run planted is taken out all the same.
TEST_F(ProtectedSweep, AnOuterRunMovingTheWorkspaceAwayNeverRedirectsTheSweep) {
  outside_.Write("victim/b/.envrc", "export USERS=1\n");
  outside_.Write("victim/b/.git/HEAD", "ref: refs/heads/main\n");
  workspace_.Mkdir("a/b");
  const std::string inner = workspace_ / "a/b", canary = outside_ / "PWNED";
  auto wait_for = [](const std::string& file) {
    return "i=0; while [ ! -e " + file + " ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; [ -e " + file + " ]";
  };
  // The inner run starts once the outer one runs: an outer run whose
  // discovery (slow under load) saw the inner's .git would bind it, and could
  // then not move `a` at all.
  std::string outer_script = "touch outer-ready && " + wait_for("a/b/inner-ready") + " && mv a a_old && ln -s " +
                             outside_ / "victim" + " a && touch a_old/b/go && " + wait_for("release") +
                             "; rm a && mv a_old a";
  Process outer(RunArgv({}, {"sh", "-c", outer_script}), Defaults({}));
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "outer-ready"); }, 30s)) << outer.OutputSoFar();
  SpawnOptions in_inner;
  in_inner.cwd = inner;
  std::string inner_script = "git init -q . && printf '#!/bin/sh\\ntouch " + canary +
                             "\\n' > .git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit && touch .envrc && "
                             "touch inner-ready && " + wait_for("go");
  Outcome inner_run = RunIn({}, {"sh", "-c", inner_script}, in_inner);
  WriteFile(workspace_ / "release", "");
  const Outcome& outer_run = outer.Wait();
  EXPECT_EQ(inner_run.exit_code, 0) << inner_run.Describe();
  EXPECT_EQ(outer_run.exit_code, 0) << outer_run.Describe();
  // Outside both workspaces, nothing moved.
  EXPECT_EQ(ReadFile(outside_ / "victim/b/.envrc"), "export USERS=1\n");
  EXPECT_EQ(ReadFile(outside_ / "victim/b/.git/HEAD"), "ref: refs/heads/main\n");
  // Inside the inner workspace, what it planted is gone.
  EXPECT_TRUE(Exists(inner + "/inner-ready")) << "the outer run put the workspace back";
  EXPECT_FALSE(Exists(inner + "/.git")) << inner_run.Describe();
  EXPECT_FALSE(Exists(inner + "/.envrc")) << inner_run.Describe();
  Execute({"/usr/bin/git", "-C", inner, "init", "-q", "."});
  Execute({"/usr/bin/git", "-C", inner, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty",
           "-m", "x"});
  EXPECT_FALSE(Exists(canary)) << "the inner run's hook ran on the host";
}

// corral killed before its sweep, and then its workspace deleted: the next
// run, in another workspace, says so in one line naming the root and what
// it could not check there, and records one finding, not one per
// protected path. It never claims that the gone root was swept.
TEST_F(ProtectedSweep, AKilledRunWhoseWorkspaceIsGoneIsReportedOnceByTheNextRun) {
  workspace_.Mkdir("gone");
  workspace_.Mkdir("next");
  SpawnOptions in_gone;
  in_gone.cwd = workspace_ / "gone";
  auto run = std::make_unique<Process>(RunArgv({}, {"sh", "-c", "touch ready; sleep 30"}), Defaults(in_gone));
  ASSERT_TRUE(WaitFor([&] { return Exists(workspace_ / "gone/ready"); }, 10s)) << run->OutputSoFar();
  ASSERT_EQ(::kill(run->pid(), SIGKILL), 0);
  run->Wait();
  std::filesystem::remove_all(workspace_ / "gone");

  SpawnOptions in_next;
  in_next.cwd = workspace_ / "next";
  Outcome next = RunIn({}, {"true"}, in_next);
  EXPECT_NE(next.err.find("ended before corral could sweep"), std::string::npos) << next.Describe();
  const std::string line = "the writable root " + workspace_ / "gone" +
                           " is gone (deleted, or moved away), so corral checked none of the protected paths in it";
  EXPECT_NE(next.err.find(line), std::string::npos) << next.Describe();
  EXPECT_EQ(next.err.find("kept moving"), std::string::npos) << next.Describe();
  EXPECT_LE(std::count(next.err.begin(), next.err.end(), '\n'), 3) << next.Describe();
  std::vector<nlohmann::json> recovered = RecoveredFindings();
  ASSERT_EQ(recovered.size(), 1u) << ReadFile(audit_path()).value_or("");
  EXPECT_EQ(recovered[0]["path"], workspace_ / "gone");
  EXPECT_EQ(recovered[0]["action"], "unreachable");
  EXPECT_EQ(recovered[0]["outcome"], "left");
}

// An outer run keeps exchanging the inner runs' workspace with a sibling
// directory. Each inner run plants a hook in the repository it creates in a
// directory that existed when it started. Discovery reads by path, so it may
// have read the sibling: such a run is refused before anything runs (exit
// 77), and one that ran either took its hook out or said so (exit 79). No
// run leaves its hook with a clean exit.
TEST_F(ProtectedSweep, AWorkspaceSwappedDuringDiscoveryNeverLeavesAHookSilently) {
  workspace_.Mkdir("w/sub");
  workspace_.Mkdir("w2/sub2");
  Process outer(ProbeArgv("rename_swap", {"w", "w2", "3000", "exchange"}), Defaults({}));
  const auto end = std::chrono::steady_clock::now() + 2500ms;
  int runs = 0, ran = 0;
  SpawnOptions in_w;
  in_w.cwd = workspace_ / "w";
  while (std::chrono::steady_clock::now() < end) {
    std::string token = RandomToken("HOOK");
    Outcome inner = RunIn({}, {"sh", "-c",
                               "d=sub; [ -d sub2 ] && d=sub2; cd $d && git init -q . && printf '#!/bin/sh\\n# " +
                                   token + "\\n' > .git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit"},
                          in_w);
    ++runs;
    if (inner.exit_code == 0) ++ran;
    if (inner.exit_code == 79 || inner.exit_code == 77) continue;
    for (const auto& file : std::filesystem::recursive_directory_iterator(workspace_.path())) {
      if (file.path().filename() != "pre-commit") continue;
      EXPECT_EQ(ReadFile(file.path()).value_or("").find(token), std::string::npos)
          << "left silently at " << file.path() << "\n" << inner.Describe();
    }
    if (HasFailure()) break;
  }
  outer.Wait();
  EXPECT_GT(runs, 5);
  std::printf("%d inner runs, %d ran\n", runs, ran);
}

// corral's state directory through a symlink into the workspace: refused
// before anything runs (the canary command did not run), and nothing of
// corral's state (the sweep journal) was written where a command could
// forge it. The same for a symlink higher up, in $XDG_STATE_HOME itself.
TEST_F(ProtectedSweep, AStateDirectoryThroughASymlinkIsRefusedAndNothingRuns) {
  workspace_.Mkdir("planted");
  ASSERT_EQ(::symlink((workspace_ / "planted").c_str(), (state_ / "corral").c_str()), 0);
  ASSERT_EQ(::symlink(workspace_.path().c_str(), (outside_ / "state-link").c_str()), 0);
  for (const std::string& home : {state_.path(), outside_ / "state-link/planted"}) {
    Outcome outcome = RunIn({}, {"touch", "ran"}, WithEnv({{"XDG_STATE_HOME", home}}));
    EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_NE(outcome.err.find("corral's state directory is not safe to use"), std::string::npos) << outcome.err;
    EXPECT_NE(outcome.err.find("is a symlink"), std::string::npos) << outcome.err;
    EXPECT_FALSE(Exists(workspace_ / "ran")) << "the command ran";
    EXPECT_EQ(workspace_.Listing(), (std::set<std::string>{"planted/"})) << outcome.Describe();
  }
}

}  // namespace
}  // namespace corral_it
