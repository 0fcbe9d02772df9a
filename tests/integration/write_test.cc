// Writing outside the writable grants: every denial is judged on the host
// afterwards (the canary is absent, the protected file's bytes unchanged).
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/unique_fd.h"
#include "harness.h"

namespace corral_it {
namespace {

class WriteEscape : public SandboxTest {
 protected:
  // A directory outside the workspace that the run may read, not write.
  std::vector<std::string> ReadOnlyGrant() {
    outside_.Write("ro/data", original_);
    return {"--allow-read", outside_ / "ro"};
  }

  // A git checkout in the workspace, with `hooks` unless told otherwise.
  void MakeGitDir(bool hooks) {
    workspace_.Write(".git/config", original_);
    workspace_.Write(".git/HEAD", "ref: refs/heads/main\n");
    if (hooks) workspace_.Write(".git/hooks/pre-commit.sample", "#!/bin/sh\n", 0755);
  }

  const std::string original_ = RandomToken("ORIGINAL") + "\n";
};

ino_t Inode(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST_F(WriteEscape, WorkspaceIsWritable) {
  // Control: the probe does write where the policy allows it.
  Outcome outcome = Probe("write_file", {workspace_ / "canary"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
}

TEST_F(WriteEscape, OutsideTheWorkspaceNothingIsCreated) {
  EXPECT_PROBE_BLOCKED(Probe("write_file", {outside_ / "canary"}));
  EXPECT_FALSE(Exists(outside_ / "canary"));
  // Recreating the outside path first only writes into the sandbox's private
  // /tmp, which vanishes with the run.
  Outcome outcome = Probe("write_file", {"-p", outside_ / "sub/canary"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_FALSE(Exists(outside_ / "sub"));
}

TEST_F(WriteEscape, ReadOnlyGrantIsNotWritable) {
  Outcome outcome = Probe("write_file", {outside_ / "ro/data", outside_ / "ro/canary"}, ReadOnlyGrant());
  EXPECT_PROBE_BLOCKED(outcome);
  EXPECT_EQ(ReadFile(outside_ / "ro/data"), original_);
  EXPECT_FALSE(Exists(outside_ / "ro/canary"));
}

TEST_F(WriteEscape, HardlinkCannotCarryAReadOnlyFileIntoTheWorkspace) {
  Outcome outcome = Probe("hardlink", {outside_ / "ro/data", workspace_ / "link"}, ReadOnlyGrant());
  EXPECT_PROBE_BLOCKED(outcome);
  EXPECT_FALSE(Exists(workspace_ / "link"));
  EXPECT_EQ(ReadFile(outside_ / "ro/data"), original_);
}

TEST_F(WriteEscape, SystemTreesAreReadOnly) {
  std::string name = RandomToken("corral-canary");
  std::vector<std::string> targets = {"/usr/" + name, "/usr/bin/" + name, "/etc/" + name, "/" + name};
  Outcome outcome = Probe("write_file", targets);
  EXPECT_PROBE_BLOCKED(outcome);
  for (const std::string& target : targets) {
    EXPECT_FALSE(Exists(target)) << target;
    ::unlink(target.c_str());  // evidence of a failure must not linger on the host
  }
}

TEST_F(WriteEscape, GitHooksAndConfigAreReadOnly) {
  MakeGitDir(/*hooks=*/true);
  Outcome outcome = Probe("write_file", {".git/hooks/pre-commit", ".git/config", ".git/hooks/pre-commit.sample"});
  EXPECT_PROBE_BLOCKED(outcome);
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks/pre-commit"));
  EXPECT_EQ(ReadFile(workspace_ / ".git/config"), original_);
  EXPECT_EQ(ReadFile(workspace_ / ".git/hooks/pre-commit.sample"), "#!/bin/sh\n");
}

TEST_F(WriteEscape, MissingProtectedPathsAreQuarantinedWithoutPlaceholders) {
  MakeGitDir(/*hooks=*/false);
  workspace_.Write("src/main.c", "int main(void) { return 0; }\n");
  std::set<std::string> before = workspace_.Listing();
  Outcome outcome = Probe("write_file", {"-p", ".git/hooks/pre-commit", ".envrc", ".vscode/tasks.json", ".bashrc"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();  // created inside the sandbox
  // Nothing the run created at a protected path is left, and corral left
  // nothing of its own (no placeholder, no mount point) in the tree.
  EXPECT_EQ(workspace_.Listing(), before) << outcome.Describe();
  std::set<std::string> reported;
  for (const nlohmann::json& record : Audit()) {
    if (record["event"] == "protected") reported.insert(record["path"].get<std::string>());
  }
  for (const char* name : {".git/hooks", ".envrc", ".vscode", ".bashrc"}) {
    EXPECT_EQ(reported.count(workspace_ / name), 1u) << name;
  }
}

// Hook managers, package managers, editors and agent tools read these from
// the project and run what they say, outside any sandbox.
TEST_F(WriteEscape, HookManagerPackageManagerAndAgentConfigsAreProtected) {
  workspace_.Write(".npmrc", original_);
  workspace_.Write(".husky/pre-commit", original_);
  std::set<std::string> before = workspace_.Listing();
  EXPECT_PROBE_BLOCKED(Probe("write_file", {".npmrc", ".husky/pre-commit", ".husky/post-checkout"}));
  EXPECT_EQ(ReadFile(workspace_ / ".npmrc"), original_);
  EXPECT_EQ(ReadFile(workspace_ / ".husky/pre-commit"), original_);

  std::vector<std::string> missing = {".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", "lefthook-local.yml",
                                      ".yarnrc.yml", ".yarnrc", ".nvimrc", ".vimrc", ".cursor/mcp.json",
                                      ".gemini/settings.json"};
  std::vector<std::string> args = {"-p"};
  args.insert(args.end(), missing.begin(), missing.end());
  Outcome outcome = Probe("write_file", args);
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();  // created inside the sandbox...
  EXPECT_EQ(workspace_.Listing(), before) << outcome.Describe();     // ...and gone after it
  std::set<std::string> reported;
  for (const nlohmann::json& record : Audit()) {
    if (record["event"] == "protected") reported.insert(record["path"].get<std::string>());
  }
  for (std::string name : missing) {
    name = name.substr(0, name.find('/'));
    EXPECT_EQ(reported.count(workspace_ / name), 1u) << name;
  }
}

TEST_F(WriteEscape, RenamingAFileOutOfTheWorkspaceFails) {
  workspace_.Write("file", original_);
  std::vector<std::string> grants = ReadOnlyGrant();
  Outcome into_grant = Probe("rename_out", {workspace_ / "file", outside_ / "ro/file"}, grants);
  EXPECT_PROBE_BLOCKED(into_grant);
  Outcome into_hidden = Probe("rename_out", {workspace_ / "file", outside_ / "file"});
  EXPECT_PROBE_BLOCKED(into_hidden);
  EXPECT_EQ(ReadFile(workspace_ / "file"), original_);
  EXPECT_FALSE(Exists(outside_ / "ro/file"));
  EXPECT_FALSE(Exists(outside_ / "file"));
}

TEST_F(WriteEscape, RenamingGitAwayFails) {
  MakeGitDir(/*hooks=*/true);
  ino_t git = Inode(workspace_ / ".git");
  ino_t hooks = Inode(workspace_ / ".git/hooks");
  EXPECT_PROBE_BLOCKED(Probe("rename_out", {".git", ".git-moved"}));
  EXPECT_PROBE_BLOCKED(Probe("rename_out", {".git/hooks", ".git/hooks-moved"}));
  EXPECT_PROBE_BLOCKED(Probe("rename_out", {".git/config", "config-moved"}));
  EXPECT_EQ(Inode(workspace_ / ".git"), git);
  EXPECT_EQ(Inode(workspace_ / ".git/hooks"), hooks);
  EXPECT_EQ(ReadFile(workspace_ / ".git/config"), original_);
  EXPECT_FALSE(Exists(workspace_ / ".git-moved"));
  EXPECT_FALSE(Exists(workspace_ / ".git/hooks-moved"));
  EXPECT_FALSE(Exists(workspace_ / "config-moved"));
}

// A file the command leaves behind must not run with its owner's identity
// (for a root caller: root) when someone outside runs it. Judged on the host:
// no file in the workspace carries a set-user-ID or set-group-ID bit.
TEST_F(WriteEscape, NoSetIdFileIsLeftInTheWorkspace) {
  Outcome outcome = Probe("setuid_file", {workspace_.path()});
  EXPECT_PROBE_BLOCKED(outcome);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(workspace_.path())) {
    struct stat st;
    ASSERT_EQ(::lstat(entry.path().c_str(), &st), 0) << entry.path();
    EXPECT_EQ(st.st_mode & (S_ISUID | S_ISGID), 0u) << entry.path() << " mode " << std::oct << st.st_mode;
    ++files;
  }
  EXPECT_GE(files, 5) << outcome.Describe();  // the probe did write its files
}

// The sandbox's device nodes are the host's: a root caller must not be able
// to change their modes (chmod 000 /dev/null would break the host for every
// user). Judged on the host: the node's mode is unchanged.
TEST_F(WriteEscape, HostDeviceNodesKeepTheirModes) {
  struct stat before;
  ASSERT_EQ(::stat("/dev/full", &before), 0);
  Outcome outcome = RunIn({}, {"sh", "-c", "chmod 0667 /dev/full; chmod 0600 /dev/zero; echo x > /dev/null"});
  struct stat after_full, after_zero;
  ASSERT_EQ(::stat("/dev/full", &after_full), 0);
  ASSERT_EQ(::stat("/dev/zero", &after_zero), 0);
  if (after_full.st_mode != before.st_mode) ::chmod("/dev/full", before.st_mode & 07777);  // repair the host
  if ((after_zero.st_mode & 07777) != 0666) ::chmod("/dev/zero", 0666);
  EXPECT_EQ(after_full.st_mode, before.st_mode) << outcome.Describe();
  EXPECT_EQ(after_zero.st_mode & 07777, 0666u) << outcome.Describe();
  EXPECT_EQ(outcome.exit_code, 0) << "writing to /dev/null still works: " << outcome.Describe();
}

// procfs keeps one mode for each of the kernel's own entries (all but the
// process directories), shared by every procfs: a root caller owns them, and
// a chmod of /proc/version inside would be the host's, every container's and
// every later sandbox's. The sandbox's /proc is mounted read-only (Landlock
// has no right for chmod). Judged outside, in a procfs mounted after the run:
// the modes are unchanged. An unprivileged caller is refused by the kernel
// (not the owner); the mount is what this sees for root (proc_writable).
TEST_F(WriteEscape, HostProcEntriesKeepTheirModes) {
  const std::vector<std::string> entries = {"version", "tty/drivers"};
  const std::string before = FreshProcModes(entries);
  ASSERT_EQ(before, "444\n444\n") << "the host's modes are not the kernel's defaults: nothing to judge";
  Outcome outcome = RunIn({}, {"sh", "-c", "chmod 0400 /proc/version /proc/tty/drivers; echo tried"});
  const std::string after = FreshProcModes(entries);
  if (after != before) RestoreProcModes(entries, "0444");  // repair the host
  EXPECT_EQ(after, before) << outcome.Describe();
  EXPECT_NE(outcome.out.find("tried"), std::string::npos) << outcome.Describe();
}

// /dev/null is the commonest stdin of all (the harness gives it to every
// run), and the descriptor is the host's node through the host's own mount:
// a root caller owns it, and `chmod 0600 /proc/self/fd/0` would leave the
// host a /dev/null only root can use. The command gets the view's read-only
// bind of the same device instead (stdio_devices). Judged on the host while
// the command still runs: after it, the put-back of the modes of stdio files
// (stdio_modes) would hide a change.
TEST_F(WriteEscape, TheHostsDevNullOnStdinKeepsItsMode) {
  struct stat before;
  ASSERT_EQ(::stat("/dev/null", &before), 0);
  ASSERT_EQ(before.st_mode & 07777, 0666u);
  Process run(RunArgv({}, {"sh", "-c", "chmod 0600 /proc/self/fd/0 /dev/stdin; cat; echo read; sleep 5"}),
              Defaults({}));
  const bool tried = WaitFor([&] { return run.OutputSoFar().find("read") != std::string::npos; }, 20s);
  struct stat during;
  ASSERT_EQ(::stat("/dev/null", &during), 0);
  if ((during.st_mode & 07777) != 0666) ::chmod("/dev/null", 0666);  // repair the host
  ::kill(run.pid(), SIGINT);
  const Outcome& outcome = run.Wait();
  EXPECT_TRUE(tried) << outcome.Describe();
  EXPECT_EQ(during.st_mode & 07777, 0666u) << outcome.Describe();
  EXPECT_EQ(outcome.out, "read\n") << "stdin still reads as /dev/null: " << outcome.Describe();
}

// Any other file the caller hands the command as stdio (a log file as
// stdout, a file fed to stdin, its terminal) is the caller's own, which the
// command may chmod through the descriptor: its mode is put back when the
// run ends (stdio_modes). Judged on the host after the run.
TEST_F(WriteEscape, TheCallersFilesOnStdioGetTheirModesBack) {
  outside_.Write("input.txt", original_, 0600);
  outside_.Write("log.txt", "", 0600);
  corral::UniqueFd input(::open((outside_ / "input.txt").c_str(), O_RDONLY | O_CLOEXEC));
  corral::UniqueFd log(::open((outside_ / "log.txt").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  ASSERT_TRUE(input.valid());
  ASSERT_TRUE(log.valid());
  SpawnOptions options;
  options.stdin_fd = input.get();
  options.stdout_fd = log.get();
  Outcome outcome = RunIn({}, {"sh", "-c", "chmod 0666 /proc/self/fd/0; chmod 0644 /proc/self/fd/1; cat; "
                                            "stat -L -c %a /proc/self/fd/0 >&2"},
                          options);
  struct stat in, out;
  ASSERT_EQ(::stat((outside_ / "input.txt").c_str(), &in), 0);
  ASSERT_EQ(::stat((outside_ / "log.txt").c_str(), &out), 0);
  EXPECT_EQ(in.st_mode & 07777, 0600u) << outcome.Describe();
  EXPECT_EQ(out.st_mode & 07777, 0600u) << outcome.Describe();
  EXPECT_EQ(ReadFile(outside_ / "log.txt"), original_) << "the command did read and write them";
  EXPECT_NE(outcome.err.find("666"), std::string::npos) << "the chmod held during the run: " << outcome.Describe();
}

// Runs overlap on one log as stderr (or one terminal): the second starts
// after the first one's command made the log world-writable, and outlasts the first.
// Saving the mode it saw, it would put the command's mode back after the
// first run's repair; the runs share the first mode through the state
// directory instead (stdio_records). Judged on the host after each run.
TEST_F(WriteEscape, OverlappingRunsOnOneLogLeaveItsFirstMode) {
  outside_.Write("log.txt", "", 0600);
  corral::UniqueFd log(::open((outside_ / "log.txt").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
  ASSERT_TRUE(log.valid());
  SpawnOptions options = Defaults({});
  options.stderr_fd = log.get();
  const std::string first_go = workspace_ / "first-go", second_go = workspace_ / "second-go";
  auto wait_for = [](const std::string& go) { return "while [ ! -e " + go + " ]; do sleep 0.02; done"; };
  Process first(RunArgv({}, {"sh", "-c", "chmod 0666 /proc/self/fd/2; echo changed; " + wait_for(first_go)}),
                options);
  ASSERT_TRUE(WaitFor([&] { return first.OutputSoFar().find("changed") != std::string::npos; }, 20s));
  Process second(RunArgv({}, {"sh", "-c", "echo started; " + wait_for(second_go)}), options);
  const bool started = WaitFor([&] { return second.OutputSoFar().find("started") != std::string::npos; }, 20s);
  workspace_.Write("first-go", "");
  const Outcome& first_outcome = first.Wait();
  struct stat after_first, after_second;
  ASSERT_EQ(::stat((outside_ / "log.txt").c_str(), &after_first), 0);
  workspace_.Write("second-go", "");
  const Outcome& second_outcome = second.Wait();
  ASSERT_EQ(::stat((outside_ / "log.txt").c_str(), &after_second), 0);
  EXPECT_TRUE(started) << second_outcome.Describe();
  EXPECT_EQ(first_outcome.exit_code, 0) << first_outcome.Describe();
  EXPECT_EQ(second_outcome.exit_code, 0) << second_outcome.Describe();
  EXPECT_EQ(after_first.st_mode & 07777, 0600u) << first_outcome.Describe();
  EXPECT_EQ(after_second.st_mode & 07777, 0600u) << second_outcome.Describe();
}

// A grant that corral's own mounts would cover (/dev/shm, /dev, /proc), or
// that a forbid_read pattern hides, would be listed and do nothing: it is
// refused before anything runs, from a flag and from the config alike.
TEST_F(WriteEscape, GrantsThatWouldDoNothingAreRefused) {
  outside_.Write("hidden/sub/file", original_);
  outside_.Write("globbed/file", original_);
  const std::string ran = workspace_ / "ran";
  const std::vector<std::string> command = {"sh", "-c", "touch \"$1\"", "sh", ran};
  struct Case {
    std::vector<std::string> grants;
    std::string says;
    std::string not_says = "\x01";  // a word of another refusal's message
  };
  const Case cases[] = {
      {{"--allow-write", "/dev/shm"}, "own /dev (", "/proc"},
      {{"--allow-read", "/dev"}, "own /dev (", "/proc"},
      {{"--allow-read", "/proc/sys"}, "own /proc (a fresh one", "/dev/shm"},
      {{"--allow-read", outside_ / "hidden/sub", "--forbid-read", outside_ / "hidden"}, "forbid_read"},
      {{"--allow-read", outside_ / "hidden", "--forbid-read", outside_ / "hidden"}, "forbid_read"},
      {{"--allow-write", outside_ / "globbed", "--forbid-read", outside_ / "glob*"}, "forbid_read"},
  };
  for (const Case& c : cases) {
    Outcome outcome = RunIn(c.grants, command);
    EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_NE(outcome.err.find(c.says), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(ran)) << "the command ran under " << c.grants[1] << " " << outcome.Describe();
  }
  config_.Write("corral/config.toml", "[sandbox]\nallow_write = [\"/dev/shm\"]\n");
  Outcome from_config = RunIn({}, command);
  EXPECT_NE(from_config.err.find("/dev/shm"), std::string::npos) << from_config.Describe();
  EXPECT_FALSE(Exists(ran)) << from_config.Describe();
  config_.Write("corral/config.toml", "[sandbox]\nforbid_read = [\"" + (outside_ / "hidden") + "\"]\n");
  Outcome forbidden_in_config = RunIn({"--allow-read", outside_ / "hidden/sub"}, command);
  EXPECT_NE(forbidden_in_config.err.find("forbid_read"), std::string::npos) << forbidden_in_config.Describe();
  EXPECT_FALSE(Exists(ran)) << forbidden_in_config.Describe();
  // Control: the command does run under an ordinary grant.
  config_.Write("corral/config.toml", "");
  Outcome control = RunIn({"--allow-read", outside_ / "hidden/sub"}, command);
  EXPECT_TRUE(Exists(ran)) << control.Describe();
}

}  // namespace
}  // namespace corral_it
