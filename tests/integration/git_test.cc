// Planting code that git runs on the host: each attempt is judged by running
// the real git on the host after the sandbox is gone, and checking that the
// planted command left no canary.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <gtest/gtest.h>

#include "harness.h"

namespace corral_it {
namespace {

class GitEscape : public SandboxTest {
 protected:
  // Runs git on the host in `dir`; its own exit status does not matter.
  void HostGit(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"};
    argv.insert(argv.end(), args.begin(), args.end());
    Execute(argv);
  }
  void MakeRepo() {
    HostGit(workspace_.path(), {"init", "-q", "."});
    HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "init"});
  }
  // A config whose fsmonitor hook would write the canary when git runs.
  std::string EvilConfig() const { return "[core]\n\tfsmonitor = \"touch " + canary_ + "; false\"\n"; }
  // A hook script that writes the canary, as a printf format.
  std::string EvilHook() const { return "#!/bin/sh\\ntouch " + canary_ + "\\n"; }

  const std::string canary_ = outside_ / "PWNED";
};

TEST_F(GitEscape, PlantedCommondirIsQuarantined) {
  MakeRepo();
  std::string script = "mkdir -p evil && cp -r .git/objects .git/refs evil/ && printf '" + EvilConfig() +
                       "' > evil/config && echo ../evil > .git/commondir";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git/commondir"));
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_)) << "git ran the planted config";
}

TEST_F(GitEscape, RepositoryCreatedInAPlainDirectoryIsQuarantinedWhole) {
  std::string script = "git init -q . && printf '" + EvilConfig() + "' >> .git/config";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git"));
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_));
}

TEST_F(GitEscape, HookSymlinkedIntoTheTreeIsReadOnly) {
  MakeRepo();
  workspace_.Write("tools/pre-commit", "#!/bin/sh\nexit 0\n", 0755);
  ASSERT_EQ(::symlink("../../tools/pre-commit", (workspace_ / ".git/hooks/pre-commit").c_str()), 0);
  Outcome outcome = RunIn({}, {"sh", "-c", "printf '#!/bin/sh\\ntouch " + canary_ + "\\n' > tools/pre-commit"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(Exists(canary_));
}

TEST_F(GitEscape, IncludedConfigIsReadOnly) {
  MakeRepo();
  workspace_.Write(".gitconfig.local", "[user]\n\tname = t\n");
  HostGit(workspace_.path(), {"config", "include.path", "../.gitconfig.local"});
  Outcome outcome = RunIn({}, {"sh", "-c", "printf '" + EvilConfig() + "' >> .gitconfig.local"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_));
}

// An unprivileged caller's sweep cannot move a directory without its owner's
// write bit, nor delete what is in it; the command chose that mode.
TEST_F(GitEscape, ReadOnlyHooksDirectoryTheCommandCreatedDoesNotRunOnCommit) {
  MakeRepo();
  std::filesystem::remove_all(workspace_ / ".git/hooks");
  std::string script = "mkdir .git/hooks && printf '" + EvilHook() +
                       "' > .git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit && chmod 555 .git/hooks";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit"));
  HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(Exists(canary_)) << "the planted hook ran";
}

// husky v9: core.hooksPath is .husky/_, whose stubs run .husky/<hook>.
TEST_F(GitEscape, HuskyHookScriptsAreReadOnly) {
  MakeRepo();
  workspace_.Write(".husky/_/pre-commit", "#!/bin/sh\n. \"$(dirname \"$0\")/h\"\n", 0755);
  workspace_.Write(".husky/_/h", "#!/bin/sh\nsh \".husky/$(basename \"$0\")\"\n", 0755);
  workspace_.Write(".husky/pre-commit", "true\n");
  HostGit(workspace_.path(), {"config", "core.hooksPath", ".husky/_"});
  Outcome outcome = RunIn({}, {"sh", "-c", "echo 'touch " + canary_ + "' > .husky/pre-commit"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(ReadFile(workspace_ / ".husky/pre-commit"), "true\n");
  HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(Exists(canary_));
}

TEST_F(GitEscape, DanglingHookSymlinkTargetIsSwept) {
  MakeRepo();
  ASSERT_EQ(::symlink("../../scripts/pre-commit", (workspace_ / ".git/hooks/pre-commit").c_str()), 0);
  std::string script = "mkdir scripts && printf '" + EvilHook() + "' > scripts/pre-commit && chmod 755 scripts/pre-commit";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "scripts"));
  HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(Exists(canary_)) << "the hook's target, created by the run, ran";
}

TEST_F(GitEscape, GitFileToAMissingGitdirIsSwept) {
  workspace_.Write(".git", "gitdir: .realgit\n");
  std::string script = "git init -q repo && mv repo/.git .realgit && rmdir repo && printf '" + EvilConfig() +
                       "' >> .realgit/config";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".realgit"));
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_));
}

// Gitdirs a run plants under .git/modules and .git/worktrees: nothing in them
// may hang, bloat or restrict a later run.
TEST_F(GitEscape, PlantedGitFilesDoNotHangOrBloatLaterRuns) {
  MakeRepo();
  std::string script =
      "mkdir -p .git/modules/evil .git/worktrees/evil && mkfifo .git/modules/evil/config && "
      "printf '[include]\\n\\tpath = /dev/zero\\n' > .git/worktrees/evil/config";
  Outcome plant = RunIn({}, {"sh", "-c", script});
  ASSERT_EQ(plant.exit_code, 0) << plant.Describe();
  SpawnOptions options;
  options.timeout = 20s;
  Outcome later = RunIn({}, {"true"}, options);
  EXPECT_FALSE(later.timed_out) << "a later run hung on the planted FIFO";
  EXPECT_EQ(later.exit_code, 0) << later.Describe();
}

// A file the user's config includes that is a FIFO (made there by another
// run, or left by one whose sweep could not move it) does not hang a run:
// discovery opens every git file it reads non-blocking and reads only
// regular files.
TEST_F(GitEscape, AFifoAtAnIncludedConfigDoesNotHangARun) {
  MakeRepo();
  HostGit(workspace_.path(), {"config", "include.path", "../included"});
  ASSERT_EQ(::mkfifo((workspace_ / "included").c_str(), 0644), 0);
  SpawnOptions options;
  options.timeout = 20s;
  Outcome later = RunIn({}, {"true"}, options);
  EXPECT_FALSE(later.timed_out) << "a run hung on the FIFO its config includes";
  EXPECT_EQ(later.exit_code, 0) << later.Describe();
}

TEST_F(GitEscape, PlantedHooksPointersDoNotMakeTheWorkspaceReadOnly) {
  MakeRepo();
  std::string script = "mkdir -p .git/modules/evil .git/worktrees/w && ln -s " + workspace_.path() +
                       " .git/modules/evil/hooks && printf '[core]\\n\\thooksPath = " + workspace_.path() +
                       "\\n' > .git/worktrees/w/config";
  Outcome plant = RunIn({}, {"sh", "-c", script});
  ASSERT_EQ(plant.exit_code, 0) << plant.Describe();
  Outcome later = RunIn({}, {"sh", "-c", "echo ok > output && mkdir build"});
  EXPECT_EQ(later.exit_code, 0) << later.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "output"), "ok\n");
  EXPECT_TRUE(Exists(workspace_ / "build"));
}

// A planted hook symlink through a host directory back into the workspace
// would become a protected bind (visible in the next run's mount table)
// only if the host directory exists: corral never follows it out.
TEST_F(GitEscape, PlantedPointersDoNotRevealHostDirectories) {
  MakeRepo();
  outside_.Mkdir("secret");
  workspace_.Write("m_yes", "x");
  workspace_.Write("m_no", "x");
  std::string back = "/../../" + std::filesystem::path(workspace_.path()).filename().string();
  std::string script = "mkdir -p .git/modules/p/hooks && ln -s " + outside_.path() + "/secret" + back +
                       "/m_yes .git/modules/p/hooks/a && ln -s " + outside_.path() + "/absent" + back +
                       "/m_no .git/modules/p/hooks/b";
  Outcome plant = RunIn({}, {"sh", "-c", script});
  ASSERT_EQ(plant.exit_code, 0) << plant.Describe();
  Outcome later = RunIn({}, {"cat", "/proc/self/mountinfo"});
  ASSERT_EQ(later.exit_code, 0) << later.Describe();
  EXPECT_EQ(later.out.find("m_yes"), std::string::npos) << "a bind appeared because the host directory exists";
  EXPECT_EQ(later.out.find("m_no"), std::string::npos);
}

// The user's own pointer (core.hooksPath) through a symlink that a run
// planted in the workspace is resolved as the sandbox sees it: once the walk
// passes a symlink inside a writable root, it never looks at a host
// directory, so whether that directory exists never shows as a bind.
TEST_F(GitEscape, APointerThroughAPlantedSymlinkNeverLooksAtHostDirectories) {
  MakeRepo();
  outside_.Mkdir("secret");
  workspace_.Write("m_yes", "x");
  std::string back = "/../../" + std::filesystem::path(workspace_.path()).filename().string();
  ASSERT_EQ(::symlink((outside_.path() + "/secret" + back).c_str(), (workspace_ / "planted").c_str()), 0);
  HostGit(workspace_.path(), {"config", "core.hooksPath", "planted/m_yes"});
  Outcome later = RunIn({}, {"cat", "/proc/self/mountinfo"});
  ASSERT_EQ(later.exit_code, 0) << later.Describe();
  EXPECT_EQ(later.out.find("m_yes"), std::string::npos) << "a bind appeared because the host directory exists";
}

// `git init`, a commit and `git remote add` in a fresh workspace: the
// repository stays, since nothing in it runs on the host; git's sample hooks
// stay in the quarantine, and a host commit afterwards runs no hook.
TEST_F(GitEscape, AFreshRepositoryWithOnlySafeKeysIsAdmitted) {
  workspace_.Write("README", "hello\n");
  std::string script =
      "git init -q . && git config user.name bob && git config user.email bob@example.com && "
      "git add README && git commit -qm first && git remote add origin https://example.com/x.git";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / ".git/HEAD")) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks")) << "the sample hooks stay in the quarantine";
  EXPECT_NE(outcome.err.find("/.git: the command created this repository; corral checked it and kept it"),
            std::string::npos)
      << outcome.err;
  std::vector<nlohmann::json> findings = AuditEvents("protected");
  ASSERT_EQ(findings.size(), 1u) << outcome.Describe();
  EXPECT_EQ(findings[0]["outcome"], "admitted");
  // The host's git reads it as the run left it, and runs nothing of it.
  Outcome log = Execute({"/usr/bin/git", "-C", workspace_.path(), "log", "--format=%an %s"});
  EXPECT_EQ(log.out, "bob first\n") << log.Describe();
  Outcome remote = Execute({"/usr/bin/git", "-C", workspace_.path(), "remote", "get-url", "origin"});
  EXPECT_EQ(remote.out, "https://example.com/x.git\n");
}

TEST_F(GitEscape, AFreshRepositoryWithAHookIsQuarantinedNamingIt) {
  std::string script = "git init -q . && printf '" + EvilHook() +
                       "' > .git/hooks/pre-commit && chmod 755 .git/hooks/pre-commit";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git"));
  EXPECT_NE(outcome.err.find("not admitted: hooks/pre-commit is a hook git could run"), std::string::npos)
      << outcome.err;
  HostGit(workspace_.path(), {"init", "-q", "."});
  HostGit(workspace_.path(), {"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(Exists(canary_)) << "the planted hook ran on the host";
}

TEST_F(GitEscape, AFreshRepositoryWithAnUnsafeKeyIsQuarantinedNamingIt) {
  std::string script = "git init -q . && git config core.fsmonitor 'touch " + canary_ + "; false'";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".git"));
  EXPECT_NE(outcome.err.find("not admitted: config: core.fsmonitor (line 6) is not on the safe list"),
            std::string::npos)
      << outcome.err;
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_)) << "the planted fsmonitor ran on the host";
}

// A linked gitdir, an include or a symlinked config: all a host git would
// follow, none admitted.
TEST_F(GitEscape, AFreshRepositoryPointingElsewhereIsQuarantined) {
  for (const std::string& plant : {
           std::string("ln -sf ../cfg .git/config && printf '") + EvilConfig() + "' > cfg",
           std::string("git config include.path ../cfg && printf '") + EvilConfig() + "' > cfg",
           std::string("mkdir evil && cp -r .git/objects .git/refs evil/ && printf '") + EvilConfig() +
               "' > evil/config && echo ../evil > .git/commondir",
       }) {
    Outcome outcome = RunIn({}, {"sh", "-c", "git init -q . && " + plant});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_FALSE(Exists(workspace_ / ".git")) << plant;
    EXPECT_NE(outcome.err.find("not admitted: "), std::string::npos) << outcome.err;
    HostGit(workspace_.path(), {"status"});
    EXPECT_FALSE(Exists(canary_)) << plant;
  }
}

// Run from a subdirectory of a repository, the workspace is its top, so git
// finds the repository; the command starts where it was started.
TEST_F(GitEscape, FromASubdirectoryTheRepositorysTopIsTheWorkspace) {
  MakeRepo();
  workspace_.Write("src/deep/file.c", "int x;\n");
  SpawnOptions in_sub;
  in_sub.cwd = workspace_ / "src/deep";
  Outcome explain = Corral({"explain", "--", "true"}, in_sub);
  EXPECT_EQ(explain.exit_code, 0) << explain.Describe();
  EXPECT_NE(explain.out.find("workspace    " + workspace_.path() +
                             " (the top of the git repository the working directory is in)"),
            std::string::npos)
      << explain.out;
  Outcome outcome = RunIn({}, {"sh", "-c", "pwd && git rev-parse --show-toplevel && echo made > ../../top.txt"}, in_sub);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, workspace_ / "src/deep" + "\n" + workspace_.path() + "\n") << outcome.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "top.txt"), "made\n");
}

// A repository at the home (dotfiles) never makes the home the workspace.
TEST_F(GitEscape, ARepositoryAtTheHomeNeverMakesTheHomeTheWorkspace) {
  HostGit(outside_.path(), {"init", "-q", "."});
  std::filesystem::create_directories(outside_ / "proj");
  SpawnOptions in_proj;
  in_proj.cwd = outside_ / "proj";
  in_proj.env["HOME"] = outside_.path();
  Outcome explain = Corral({"explain", "--", "true"}, in_proj);
  EXPECT_EQ(explain.exit_code, 0) << explain.Describe();
  EXPECT_NE(explain.out.find("workspace    " + outside_ / "proj" + "\n"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("the home directory is never the workspace"), std::string::npos) << explain.out;
}

// The user's git identity and default branch reach the private home, and
// nothing else of their git config: a commit inside works, and a helper or
// an alias from their config is not there.
TEST_F(GitEscape, TheUsersGitIdentityAndNothingElseReachesTheSandbox) {
  WriteFile(outside_ / ".gitconfig",
            "[user]\n\tname = Ana Test\n\temail = ana@example.com\n[init]\n\tdefaultBranch = trunk\n"
            "[credential]\n\thelper = store-secret\n[alias]\n\tst = !touch " + canary_ + "\n");
  SpawnOptions with_home;
  with_home.env["HOME"] = outside_.path();
  std::string script =
      "cat ~/.gitconfig; git init -q . && echo x > f && git add f && git commit -qm c && "
      "git log --format='%an <%ae> %D'";
  Outcome outcome = RunIn({}, {"sh", "-c", script}, with_home);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find("Ana Test <ana@example.com> HEAD -> trunk"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("store-secret"), std::string::npos) << outcome.out;
  EXPECT_EQ(outcome.out.find("alias"), std::string::npos) << outcome.out;
  Outcome explain = Corral({"explain", "--", "true"}, with_home);
  EXPECT_NE(explain.out.find("empty but for a .gitconfig with your git identity"), std::string::npos) << explain.out;
}

// A linked worktree (`git worktree add`): git inside finds its repository
// and commits land in it, while the main worktree's files stay unseen and
// the repository's hooks and config stay read-only (judged by a host commit
// in the main worktree afterwards: no canary).
TEST_F(GitEscape, ALinkedWorktreeCommitsIntoItsRepositoryWhoseHooksStayReadOnly) {
  const std::string main = outside_ / "main";
  std::filesystem::create_directories(main);
  WriteFile(main + "/secret.txt", "MAIN-WORKTREE-BYTES\n");
  HostGit(main, {"init", "-q", "."});
  HostGit(main, {"add", "secret.txt"});
  HostGit(main, {"commit", "-q", "-m", "init"});
  HostGit(main, {"worktree", "add", "-q", "-b", "wt", workspace_.path()});
  ASSERT_TRUE(Exists(workspace_ / ".git")) << "git worktree add did not make the worktree";
  Outcome explain = Corral({"explain", "--", "true"});
  EXPECT_NE(explain.out.find(main + "/.git"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("worktree"), std::string::npos) << explain.out;
  std::string script =
      "echo change > f && git add f && git -c user.name=w -c user.email=w@w commit -qm inside && "
      "git log --format=%s -1; cat " + main + "/secret.txt; "
      "printf '" + EvilHook() + "' > " + main + "/.git/hooks/post-commit; chmod 755 " + main + "/.git/hooks/post-commit; "
      "printf '" + EvilConfig() + "' >> " + main + "/.git/config; true";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, "inside\n") << outcome.Describe();
  EXPECT_EQ(outcome.err.find("MAIN-WORKTREE-BYTES"), std::string::npos) << outcome.err;
  Outcome log = Execute({"/usr/bin/git", "-C", main, "log", "wt", "--format=%s", "-1"});
  EXPECT_EQ(log.out, "inside\n") << log.Describe();
  HostGit(main, {"commit", "-q", "--allow-empty", "-m", "after"});
  HostGit(main, {"status"});
  EXPECT_FALSE(Exists(canary_)) << "a hook or config the run planted in the repository ran on the host";
}

// A `.git` file naming another worktree's gitdir, which does not point back
// at this workspace, grants nothing of that repository.
TEST_F(GitEscape, AWorktreePointerItsRepositoryDoesNotClaimGrantsNothing) {
  const std::string main = outside_ / "main";
  std::filesystem::create_directories(main);
  HostGit(main, {"init", "-q", "."});
  HostGit(main, {"commit", "-q", "--allow-empty", "-m", "init"});
  HostGit(main, {"worktree", "add", "-q", "-b", "other", outside_ / "other"});
  WriteFile(workspace_ / ".git", "gitdir: " + main + "/.git/worktrees/other\n");
  Outcome explain = Corral({"explain", "--", "true"});
  EXPECT_NE(explain.out.find("does not point back at " + workspace_ / ".git"), std::string::npos) << explain.out;
  Outcome outcome = RunIn({}, {"sh", "-c", "cat " + main + "/.git/HEAD || echo unseen"});
  EXPECT_EQ(outcome.out, "unseen\n") << outcome.Describe();
}

}  // namespace
}  // namespace corral_it
