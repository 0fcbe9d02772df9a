// Config that runs on the host, beyond `.git` at the top of the workspace:
// Mercurial's, home-directory config a root may hold, and repositories below
// the top. Each attempt is judged after the sandbox is gone, by running the
// real tool on the host (git, hg) and checking that the planted command left
// no canary, or by what is left at the path.
#include <filesystem>

#include <gtest/gtest.h>

#include "harness.h"

namespace corral_it {
namespace {

class NestedEscape : public SandboxTest {
 protected:
  // Runs a tool on the host; its own exit status does not matter.
  void HostGit(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/git", "-C", dir, "-c", "user.email=t@t", "-c", "user.name=t"};
    argv.insert(argv.end(), args.begin(), args.end());
    Execute(argv);
  }
  void HostHg(const std::string& dir, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"/usr/bin/hg", "--cwd", dir};
    argv.insert(argv.end(), args.begin(), args.end());
    Execute(argv, WithEnv({{"HGUSER", "t"}}));
  }
  void MakeRepo(const std::string& dir) {
    HostGit(dir, {"init", "-q", "."});
    HostGit(dir, {"commit", "-q", "--allow-empty", "-m", "init"});
  }
  // printf formats, for `sh -c` inside the sandbox.
  std::string EvilGitConfig() const { return "[core]\\n\\tfsmonitor = \"touch " + canary_ + "; false\"\\n"; }
  std::string EvilHook() const { return "#!/bin/sh\\ntouch " + canary_ + "\\n"; }
  std::string EvilHgrc() const { return "[hooks]\\npre-status = touch " + canary_ + "\\n"; }

  const std::string canary_ = outside_ / "PWNED";
};

TEST_F(NestedEscape, AMercurialRepositoryTheRunCreatesDoesNotRunItsHooksOnTheHost) {
  Outcome outcome = RunIn({}, {"sh", "-c", "hg init . && printf '" + EvilHgrc() + "' >> .hg/hgrc"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".hg"));
  HostHg(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_)) << "a host hg status ran the planted hook";
}

TEST_F(NestedEscape, AnExistingHgrcIsReadOnly) {
  HostHg(workspace_.path(), {"init"});
  workspace_.Write(".hg/hgrc", "[paths]\ndefault = https://example.com/repo\n");  // as hg clone writes it
  Outcome outcome = RunIn({}, {"sh", "-c", "printf '" + EvilHgrc() + "' >> .hg/hgrc"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  HostHg(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_)) << "a host hg status ran the planted hook";
}

// Config that tools read from the project (dev containers, yarn, asdf and
// mise) or from a root that is a home directory (git, hg, ripgrep, the AWS
// CLI): written when it exists, created when it does not.
TEST_F(NestedEscape, ProjectAndHomeConfigThatRunsCommandsIsProtected) {
  const std::string original = "original\n";
  std::vector<std::string> existing = {".devcontainer.json", ".gitconfig", ".hgrc",
                                       ".ripgreprc", ".tool-versions", ".aws/config",
                                       ".yarn/releases/yarn-4.cjs", ".yarn/plugins/plugin.cjs"};
  for (const std::string& name : existing) workspace_.Write(name, original);
  EXPECT_PROBE_BLOCKED(Probe("write_file", existing));
  for (const std::string& name : existing) EXPECT_EQ(ReadFile(workspace_ / name), original) << name;
}

TEST_F(NestedEscape, ProjectAndHomeConfigTheRunCreatesIsTakenOut) {
  workspace_.Write(".yarnrc.yml", "yarnPath: .yarn/releases/yarn-4.cjs\n");
  std::vector<std::string> created = {".devcontainer.json", ".gitconfig", ".hgrc",
                                      ".ripgreprc", ".tool-versions", ".aws/config",
                                      ".yarn/releases/yarn-4.cjs"};
  std::string script;
  for (const std::string& name : created) {
    script += "mkdir -p $(dirname " + name + ") && echo 'touch " + canary_ + "' > " + name + " && ";
  }
  Outcome outcome = RunIn({}, {"sh", "-c", script + "true"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  for (const std::string& name : created) EXPECT_FALSE(Exists(workspace_ / name)) << name;
  EXPECT_FALSE(Exists(workspace_ / ".aws")) << "the directory the run created goes whole";
  EXPECT_FALSE(Exists(workspace_ / ".yarn"));
}

// A repository below the top that existed before the run: its hooks and
// config are read-only like the top one's.
TEST_F(NestedEscape, ANestedRepositorysHooksDoNotRunOnAHostCommit) {
  workspace_.Mkdir("sub");
  MakeRepo(workspace_ / "sub");
  // The config write goes to the run's own copy (repair/git_config_stage.h),
  // and its fsmonitor never lands; the hook write fails.
  std::string script = "printf '" + EvilGitConfig() + "' >> sub/.git/config; printf '" + EvilHook() +
                       "' > sub/.git/hooks/pre-commit && chmod 755 sub/.git/hooks/pre-commit";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.err.find("sub/.git/config: not written, since git could run code it names outside the sandbox: "
                             "core.fsmonitor"),
            std::string::npos)
      << outcome.err;
  HostGit(workspace_ / "sub", {"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(Exists(canary_)) << "the nested repository's planted hook or config ran";
}

// A repository the run creates in a directory below the top that existed
// before it is taken out whole.
TEST_F(NestedEscape, ARepositoryTheRunCreatesBelowTheTopIsTakenOut) {
  workspace_.Write("pkg/lib/main.c", "int main(void) { return 0; }\n");
  std::string script = "git init -q pkg/lib && printf '" + EvilHook() +
                       "' > pkg/lib/.git/hooks/pre-commit && chmod 755 pkg/lib/.git/hooks/pre-commit";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "pkg/lib/.git"));
  EXPECT_TRUE(Exists(workspace_ / "pkg/lib/main.c")) << "only the repository goes, not the directory";
  MakeRepo(workspace_.path());
  HostGit(workspace_ / "pkg/lib", {"commit", "-q", "--allow-empty", "-m", "x"});
  EXPECT_FALSE(Exists(canary_)) << "the planted hook ran";
}

// The run makes `sub` a repository whose core.fsmonitor names a command, and
// registers it as a gitlink in the top repository's index: a plain host
// `git status` at the top would run that command in sub.
TEST_F(NestedEscape, ANestedRepositoryRegisteredAsAGitlinkDoesNotRunOnAHostStatus) {
  MakeRepo(workspace_.path());
  workspace_.Write("sub/README", "sub\n");
  std::string script = "cd sub && git init -q . && git add README && git -c user.email=t@t -c user.name=t commit -qm s && "
                       "printf '" + EvilGitConfig() + "' >> .git/config && cd .. && git add sub";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  HostGit(workspace_.path(), {"status"});
  EXPECT_FALSE(Exists(canary_)) << "a host git status ran the nested repository's fsmonitor";
}

// The same attack in a directory the run creates: the walk at the start
// could not record it, and nothing after the run looks for it. Stated in
// SECURITY.md as a non-claim (the copy-on-write mode is the answer).
TEST_F(NestedEscape, NonClaimAGitlinkToARepositoryInANewDirectoryRunsOnAHostStatus) {
  MakeRepo(workspace_.path());
  std::string script = "mkdir new && cd new && git init -q . && echo x > README && git add README && "
                       "git -c user.email=t@t -c user.name=t commit -qm s && printf '" + EvilGitConfig() +
                       "' >> .git/config && cd .. && git add new";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  HostGit(workspace_.path(), {"status"});
  EXPECT_TRUE(Exists(canary_)) << "closed? move this out of the non-claims in SECURITY.md";
}

// A concurrent run renames a directory of the user's back and forth while
// other runs start: a run whose discovery saw the directory gone must not
// take it for a path it will later find "created", or its sweep would move
// the user's directory (and everything in it) into the quarantine.
TEST_F(NestedEscape, ADirectoryRenamedDuringDiscoveryIsNeverTakenOut) {
  const std::string data = RandomToken("DATA");
  workspace_.Write("sub/data", data + "\n");
  Process racer(ProbeArgv("rename_swap", {"sub", "sub2", "3200"}), Defaults({}));
  const auto end = std::chrono::steady_clock::now() + 3000ms;
  int runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    RunIn({}, {"true"});
    ++runs;
  }
  racer.Wait();
  EXPECT_GT(runs, 5);
  bool sub = Exists(workspace_ / "sub/data"), sub2 = Exists(workspace_ / "sub2/data");
  EXPECT_TRUE(sub != sub2) << "the user's directory is gone from the workspace";
  EXPECT_EQ(ReadFile(workspace_ / (sub ? "sub/data" : "sub2/data")).value_or(""), data + "\n");
  for (const auto& file : std::filesystem::recursive_directory_iterator(state_.path())) {
    EXPECT_NE(file.path().filename(), "data") << "moved into the quarantine: " << file.path();
  }
}

TEST_F(NestedEscape, NestedShellAndDirenvFilesAreReadOnly) {
  const std::string original = "original\n";
  workspace_.Write("sub/.zshrc", original);
  workspace_.Write("sub/deeper/.envrc", original);
  EXPECT_PROBE_BLOCKED(Probe("write_file", {"sub/.zshrc", "sub/deeper/.envrc"}));
  EXPECT_EQ(ReadFile(workspace_ / "sub/.zshrc"), original);
  EXPECT_EQ(ReadFile(workspace_ / "sub/deeper/.envrc"), original);
}

// Ordinary work below the top still works: files beside a nested repository
// are written, a directory with nothing protected in it is renamed.
TEST_F(NestedEscape, WorkBesideNestedRepositoriesStillWorks) {
  workspace_.Mkdir("sub");
  MakeRepo(workspace_ / "sub");
  workspace_.Write("other/file", "x\n");
  Outcome outcome = RunIn({}, {"sh", "-c", "echo ok > sub/output && mv other renamed && git -C sub status --short"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(ReadFile(workspace_ / "sub/output"), "ok\n");
  EXPECT_TRUE(Exists(workspace_ / "renamed/file"));
}

}  // namespace
}  // namespace corral_it
