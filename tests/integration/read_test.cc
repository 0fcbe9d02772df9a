// Reading secrets: every denial is judged by the secret's bytes being absent
// from everything the run printed.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

namespace corral_it {
namespace {

class ReadEscape : public SandboxTest {
 protected:
  ReadEscape() { outside_.Write("secret.txt", secret_ + "\n"); }

  void ExpectSecretAbsent(const Outcome& outcome, const std::string& secret) {
    EXPECT_EQ(outcome.out.find(secret), std::string::npos) << outcome.Describe();
    EXPECT_EQ(outcome.err.find(secret), std::string::npos) << outcome.Describe();
    // The trail must be there to be judged: a missing file proves nothing.
    std::optional<std::string> trail = ReadFile(audit_path());
    ASSERT_TRUE(trail.has_value()) << "no audit trail at " << audit_path();
    EXPECT_EQ(trail->find(secret), std::string::npos);
  }

  const std::string secret_ = RandomToken("SECRET");
  const std::string secret_path_ = outside_ / "secret.txt";
};

TEST_F(ReadEscape, GrantedWorkspaceFileIsReadable) {
  // Control: the probe does read what the policy grants.
  std::string token = RandomToken("VISIBLE");
  workspace_.Write("visible.txt", token);
  Outcome outcome = Probe("read_file", {workspace_ / "visible.txt"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_NE(outcome.out.find(token), std::string::npos) << outcome.Describe();
}

// A grant of /tmp itself, which holds the directory the sandbox builds its
// root in: the grant shows the host's /tmp (its trees are cloned before the
// new root is mounted there), with corral's own state in it still hidden.
TEST_F(ReadEscape, AReadGrantOfTmpShowsTheHostsTmp) {
  std::string token = RandomToken("INTMP");
  outside_.Write("visible.txt", token + "\n");
  Outcome outcome = RunIn({"--allow-read", "/tmp"}, {"cat", outside_ / "visible.txt"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find(token), std::string::npos) << outcome.Describe();
}

TEST_F(ReadEscape, SecretOutsideTheWorkspaceIsNotReadable) {
  Outcome outcome = Probe("read_file", {secret_path_});
  EXPECT_PROBE_BLOCKED(outcome);
  ExpectSecretAbsent(outcome, secret_);
}

TEST_F(ReadEscape, SymlinkInTheWorkspaceToASecretIsNotFollowedOut) {
  ASSERT_EQ(::symlink(secret_path_.c_str(), (workspace_ / "link").c_str()), 0);
  Outcome outcome = Probe("read_file", {"link", workspace_ / "link"});
  EXPECT_PROBE_BLOCKED(outcome);
  ExpectSecretAbsent(outcome, secret_);
}

TEST_F(ReadEscape, HardlinkToAnOutsideFileCannotBeCreated) {
  Outcome outcome = Probe("hardlink", {secret_path_, workspace_ / "link"});
  EXPECT_PROBE_BLOCKED(outcome);
  EXPECT_FALSE(Exists(workspace_ / "link"));
  struct stat st;
  ASSERT_EQ(::stat(secret_path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_nlink, 1u);
  EXPECT_EQ(ReadFile(secret_path_), secret_ + "\n");
}

TEST_F(ReadEscape, NonClaimHardlinkPlacedInTheWorkspaceByTheHostIsReadable) {
  // A NON-CLAIM, pinned by a test: a hard link inside a granted tree is the
  // file itself, so the host must not place links to secrets in a workspace.
  ASSERT_EQ(::link(secret_path_.c_str(), (workspace_ / "link").c_str()), 0);
  Outcome outcome = Probe("read_file", {workspace_ / "link"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_NE(outcome.out.find(secret_), std::string::npos);
}

TEST_F(ReadEscape, ProcRootOfAHostProcessIsNotReachable) {
  Decoy decoy = Decoy::Sleeper({"PATH=/usr/bin:/bin"});
  Outcome outcome = Probe("proc_root", {std::to_string(decoy.pid()), secret_path_});
  EXPECT_PROBE_BLOCKED(outcome);
  ExpectSecretAbsent(outcome, secret_);
  EXPECT_TRUE(decoy.Alive());
}

TEST_F(ReadEscape, ProcEnvironOfAHostProcessIsNotReadable) {
  std::string token = RandomToken("DECOYENV");
  Decoy decoy = Decoy::Sleeper({"DECOY_SECRET=" + token});
  Outcome outcome = Probe("proc_environ", {std::to_string(decoy.pid())});
  EXPECT_PROBE_BLOCKED(outcome);
  ExpectSecretAbsent(outcome, token);
}

TEST_F(ReadEscape, SandboxInitDoesNotExposeCorralsEnvironment) {
  // The sandbox's PID 1 is corral's own init, a copy of corral that still
  // holds corral's whole environment: the command must not read it through
  // /proc/1 (init is non-dumpable).
  std::string token = RandomToken("INITENV");
  Outcome outcome = Probe("proc_environ", {"1"}, {}, WithEnv({{"SECRET_TOKEN", token}}));
  EXPECT_PROBE_BLOCKED(outcome);
  ExpectSecretAbsent(outcome, token);
}

TEST_F(ReadEscape, InheritedDirectoryDescriptorsAreClosed) {
  int dir_fd = ::open(outside_.path().c_str(), O_RDONLY | O_DIRECTORY);  // no O_CLOEXEC on purpose
  int path_fd = ::open(outside_.path().c_str(), O_PATH | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0);
  ASSERT_GE(path_fd, 0);
  std::vector<std::string> args = {"secret.txt", std::to_string(dir_fd), std::to_string(path_fd)};
  // Control: outside corral the probe does reach the secret through them.
  Outcome bare = Execute({ProbePath("inherited_fd"), args[0], args[1], args[2]});
  EXPECT_NE(bare.out.find(secret_), std::string::npos) << bare.Describe();

  Outcome outcome = Probe("inherited_fd", args);
  ::close(dir_fd);
  ::close(path_fd);
  EXPECT_PROBE_BLOCKED(outcome);
  ExpectSecretAbsent(outcome, secret_);
}

// Descriptors 0-2 pass into the sandbox as they are, so a directory or an
// O_PATH handle there would reach outside the mount view (openat(0, ...)).
// corral refuses to run at all; the canary proves nothing started.
TEST_F(ReadEscape, DirectoryOrPathHandleOnStdioIsRefused) {
  int dir_fd = ::open(outside_.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  int path_fd = ::open(outside_.path().c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir_fd, 0);
  ASSERT_GE(path_fd, 0);
  const std::string canary = workspace_ / "ran";
  for (bool on_stdin : {true, false}) {
    SCOPED_TRACE(on_stdin ? "directory on stdin" : "O_PATH handle on stderr");
    SpawnOptions options;
    (on_stdin ? options.stdin_fd : options.stderr_fd) = on_stdin ? dir_fd : path_fd;
    Outcome outcome = RunIn({}, {"sh", "-c", "touch ran; cat /proc/self/fd/0/secret.txt"}, options);
    EXPECT_EQ(outcome.exit_code, 64) << outcome.Describe();
    EXPECT_FALSE(Exists(canary)) << outcome.Describe();
    ExpectSecretAbsent(outcome, secret_);
  }
  ::close(dir_fd);
  ::close(path_fd);
  // Control: with ordinary stdio the same command runs.
  EXPECT_EQ(RunIn({}, {"sh", "-c", "touch ran"}).exit_code, 0);
  EXPECT_TRUE(Exists(canary));
}

// --home real shows the home read-only, but never its credentials.
TEST_F(ReadEscape, RealHomeKeepsItsCredentialsHidden) {
  std::string token = RandomToken("HOMECRED");
  outside_.Write("home/.ssh/id_ed25519", token + "\n");
  outside_.Write("home/.aws/credentials", token + "\n");
  outside_.Write("home/.m2/settings.xml", "<password>" + token + "</password>\n");
  outside_.Write("home/.gradle/gradle.properties", "signing.password=" + token + "\n");
  outside_.Write("home/.config/containers/auth.json", "{\"auth\": \"" + token + "\"}\n");
  outside_.Write("home/.mozilla/firefox/p.default/logins.json", token + "\n");
  outside_.Write("home/notes.txt", "notes\n");
  outside_.Write("home/.m2/repository/readme.txt", "cached\n");
  SpawnOptions options = WithEnv({{"HOME", outside_ / "home"}});
  Outcome outcome =
      RunIn({"--home", "real"},
            {"sh", "-c",
             "cd \"$HOME\"; cat notes.txt .m2/repository/readme.txt .ssh/id_ed25519 .aws/credentials "
             ".m2/settings.xml .gradle/gradle.properties .config/containers/auth.json "
             ".mozilla/firefox/p.default/logins.json; grep -r . .mozilla .m2; echo x > \"$HOME/planted\""},
            options);
  // The allowlisted cache is shown (the control), what the allowlist does
  // not name is not, and the home's writes stay in the sandbox.
  EXPECT_NE(outcome.out.find("cached"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("notes"), std::string::npos) << outcome.Describe();
  ExpectSecretAbsent(outcome, token);
  EXPECT_FALSE(Exists(outside_ / "home/planted"));
}

TEST_F(ReadEscape, EnvironmentSecretsAreScrubbed) {
  std::string token = RandomToken("ENVSECRET");
  SpawnOptions options = WithEnv({{"SECRET_TOKEN", token}, {"AWS_SECRET_ACCESS_KEY", token}});
  Outcome outcome = RunIn({}, {"env"}, options);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find("PATH="), std::string::npos) << outcome.Describe();
  ExpectSecretAbsent(outcome, token);
  // Control: --allow-env passes exactly the named variable.
  Outcome allowed = RunIn({"--allow-env", "SECRET_TOKEN"}, {"env"}, options);
  EXPECT_NE(allowed.out.find("SECRET_TOKEN=" + token), std::string::npos) << allowed.Describe();
  EXPECT_EQ(allowed.out.find("AWS_SECRET_ACCESS_KEY"), std::string::npos) << allowed.Describe();
}

// Root owns /proc's 0400 files (slabinfo, timer_list, ...) even without
// capabilities: corral masks them for a root caller, as an unprivileged one
// cannot read them anyway. Judged by their known first bytes in the output.
TEST_F(ReadEscape, RootOnlyProcFilesStayUnreadable) {
  Outcome outcome = RunIn({}, {"sh", "-c", "cat /proc/slabinfo /proc/timer_list; cat /proc/meminfo"});
  EXPECT_EQ(outcome.out.find("slabinfo - version"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find("Timer List Version"), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.out.find("MemTotal"), std::string::npos) << "control: /proc is there " << outcome.Describe();
}

// The /proc entries the host's procfs hides from others, below the top
// level too (tty/driver), as CollectHiddenFromOthers finds them outside:
// every process directory, symlink and the sysctl tree left out, as the
// sandbox's own listing leaves them.
void CollectHiddenFromOthers(const std::string& dir, int depth, std::vector<std::string>* files,
                             std::vector<std::string>* dirs) {
  DIR* listing = ::opendir(dir.c_str());
  if (listing == nullptr) return;
  while (const struct dirent* entry = ::readdir(listing)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    if (depth == 0 && ((name[0] >= '0' && name[0] <= '9') || name == "sys" || name == "kmsg")) continue;
    std::string path = dir + "/" + name;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || S_ISLNK(st.st_mode)) continue;
    if (S_ISDIR(st.st_mode) && (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH)) {
      dirs->push_back(path);
    } else if (S_ISREG(st.st_mode) && (st.st_mode & S_IROTH) == 0) {
      files->push_back(path);
    } else if (S_ISDIR(st.st_mode) && depth < 5) {
      CollectHiddenFromOthers(path, depth + 1, files, dirs);
    }
  }
  ::closedir(listing);
}

// Every /proc entry the host hides from others, not just the two above: the
// sandbox lists its own procfs for them when it mounts it, so an entry that
// listing missed would show here. Each file is read inside (at most 4 KiB;
// kmsg left out: reading it takes messages from the host's log), each
// directory listed, and nothing of any comes out; the control reads a
// world-readable file. For an unprivileged caller the kernel refuses them by
// itself; the masks are what this sees for root (the proc_masks mutant).
TEST_F(ReadEscape, EveryRootOnlyProcEntryOfTheHostIsMaskedInside) {
  std::vector<std::string> files, dirs;
  CollectHiddenFromOthers("/proc", 0, &files, &dirs);
  ASSERT_FALSE(files.empty()) << "the host's /proc hides nothing from others: nothing to judge";
  std::string script;
  for (const std::string& path : files) script += "head -c 4096 " + path + " | od -An -c | head -3; ";
  for (const std::string& path : dirs) script += "ls -A " + path + " 2>/dev/null; ";
  script += "head -c 200 /proc/version";
  Outcome outcome = RunIn({}, {"sh", "-c", script});
  // od prints nothing for an empty or unreadable file; any byte read shows as a line.
  std::string version = ReadFile("/proc/version").value_or("");
  ASSERT_FALSE(version.empty());
  EXPECT_EQ(outcome.out, version.substr(0, std::min<size_t>(200, version.size())))
      << "something of a root-only /proc entry came out: " << outcome.Describe();
}

}  // namespace
}  // namespace corral_it
