// Planting code that git runs on the host: each attempt is judged by running
// the real git on the host after the sandbox is gone, and checking that the
// planted command left no canary.
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

}  // namespace
}  // namespace corral_it
