#include "config/config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"
#include "policy/policy.h"

namespace corral {
namespace {

using corral::testing::TestTree;

// Writes `text` to `path` with exactly `mode` (a fresh file: truncating one in
// place is slow on some filesystems).
void WriteWithMode(const TestTree& tree, const std::string& relative, const std::string& text, mode_t mode) {
  std::error_code ignored;
  std::filesystem::remove(tree.Join(relative), ignored);
  ASSERT_EQ(::chmod(tree.File(relative, text).c_str(), mode), 0);
}

struct Files {
  TestTree dir;
  std::string home = dir.Dir("home");
  std::string workspace = dir.Dir("ws");
  std::string user_path = home + "/.config/corral/config.toml";
  std::string project_path = workspace + "/corral.toml";

  LoadOptions Options() const {
    LoadOptions options;
    options.user_path = user_path;
    options.project_path = project_path;
    options.home = home;
    options.workspace_root = workspace;
    options.uid = ::geteuid();
    return options;
  }
  void User(const std::string& text, mode_t mode = 0600) const {
    WriteWithMode(dir, "home/.config/corral/config.toml", text, mode);
  }
  void Project(const std::string& text, mode_t mode = 0644) const { WriteWithMode(dir, "ws/corral.toml", text, mode); }
};

Error LoadError(const LoadOptions& options) {
  Result<Config> config = LoadConfig(options);
  EXPECT_FALSE(config.ok());
  return config.ok() ? Error(ErrorKind::kInternal, "loaded") : config.error();
}

TEST(ConfigLoad, MissingFilesGiveDefaults) {
  Files files;
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config.value(), Config{});
  EXPECT_TRUE(config->files_read.empty());
  LoadOptions none;
  EXPECT_TRUE(LoadConfig(none).ok());
}

TEST(ConfigLoad, ReadsBothFilesUserFirst) {
  Files files;
  files.User("[sandbox]\ntimeout = 60\n");
  files.Project("[sandbox]\ntimeout = 20\n");
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->timeout, std::chrono::seconds(20));
  EXPECT_EQ(config->files_read, (std::vector<std::string>{files.user_path, files.project_path}));
  EXPECT_EQ(config->origins.at("sandbox.timeout"), files.project_path + ":2:1");
}

TEST(ConfigLoad, OnlyAProjectFile) {
  Files files;
  files.Project("[sandbox]\nmode = \"read-only\"\n");
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->mode, Mode::kReadOnly);
  EXPECT_EQ(config->files_read, std::vector<std::string>{files.project_path});
}

TEST(ConfigLoad, ErrorsNameTheRealFile) {
  Files files;
  files.Project("[sandbox]\nnetwrk = true\n");
  EXPECT_EQ(LoadError(files.Options()).message(), files.project_path + ":2:1: sandbox.netwrk: unknown key");
  files.Project("[sandbox]\nnetwork = true\n");
  Error widen = LoadError(files.Options());
  EXPECT_EQ(widen.code(), "config_project_widens");
  EXPECT_NE(widen.message().find("only the user config (" + files.user_path + ")"), std::string::npos)
      << widen.message();
}

TEST(ConfigLoad, AProjectFileMayRepeatTheUsersHostRulesAndAddDenials) {
  Files files;
  files.User("[sandbox]\nallow_host = [\"registry.npmjs.org\"]\n");
  files.Project("[sandbox]\nallow_host = [\"registry.npmjs.org\"]\ndeny_host = [\"*.evil.test\"]\n");
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();
  files.Project("[sandbox]\nallow_host = [\"exfil.test\"]\n");
  Error widen = LoadError(files.Options());
  EXPECT_EQ(widen.code(), "config_project_widens");
  EXPECT_NE(widen.message().find("sandbox.allow_host[0]: the project config cannot let the command reach exfil.test"),
            std::string::npos)
      << widen.message();
  files.Project("[sandbox]\nallow_private = [\"10.0.0.0/8\"]\n");
  EXPECT_EQ(LoadError(files.Options()).code(), "config_project_widens");
}

TEST(ConfigLoad, NothingRunsWithAHalfReadConfig) {
  Files files;
  files.User("[sandbox]\nnetwork = true\ntimeout = 5\n");
  files.Project("[sandbox]\ntimeout = 1\nbogus = 1\n");
  Error error = LoadError(files.Options());
  EXPECT_EQ(error.kind(), ErrorKind::kConfig);
  EXPECT_EQ(error.message(), files.project_path + ":3:1: sandbox.bogus: unknown key");
  files.User("[sandbox]\ntimeout = \n");
  files.Project("");
  EXPECT_EQ(LoadError(files.Options()).code(), "config_syntax");
}

TEST(ConfigLoad, AnExistingUnreadableFileIsAnError) {
  Files files;
  files.dir.Dir("home/.config/corral/config.toml");  // a directory where the file should be
  Error error = LoadError(files.Options());
  EXPECT_EQ(error.code(), "config_unreadable");
  EXPECT_EQ(error.message(), files.user_path + ": not a regular file");
}

TEST(ConfigLoad, ADanglingSymlinkIsAnErrorNotAMissingFile) {
  Files files;
  ASSERT_EQ(::symlink("/nonexistent/corral.toml", files.project_path.c_str()), 0);
  Error error = LoadError(files.Options());
  EXPECT_EQ(error.code(), "config_unreadable");
  EXPECT_EQ(error.message().rfind(files.project_path + ": ", 0), 0U) << error.message();
}

TEST(ConfigLoad, AFifoIsRefusedWithoutHanging) {
  Files files;
  ASSERT_EQ(::mkfifo(files.project_path.c_str(), 0600), 0);
  EXPECT_EQ(LoadError(files.Options()).message(), files.project_path + ": not a regular file");
}

TEST(ConfigLoad, ASymlinkToAPrivateFileIsFollowed) {
  Files files;
  WriteWithMode(files.dir, "dotfiles/corral.toml", "[sandbox]\ntimeout = 7\n", 0600);
  std::string real = files.dir.Join("dotfiles/corral.toml");
  files.dir.Dir("home/.config/corral");
  ASSERT_EQ(::symlink(real.c_str(), files.user_path.c_str()), 0);
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->timeout, std::chrono::seconds(7));
}

TEST(ConfigLoad, AFileWritableByOthersIsRefusedWithTheFix) {
  Files files;
  files.User("[sandbox]\n", 0620);
  Error group = LoadError(files.Options());
  EXPECT_EQ(group.code(), "config_insecure");
  EXPECT_EQ(group.message(), files.user_path +
                                 ": writable by its group (mode 0620), so anyone who can write it could open the "
                                 "sandbox; run `chmod go-w " +
                                 files.user_path + "`");
  files.User("[sandbox]\n", 0602);
  Error other = LoadError(files.Options());
  EXPECT_EQ(other.code(), "config_insecure");
  EXPECT_NE(other.message().find("writable by other users (mode 0602)"), std::string::npos) << other.message();
  EXPECT_NE(other.message().find("chmod go-w " + files.user_path), std::string::npos);
  files.User("[sandbox]\n", 0600);
  EXPECT_TRUE(LoadConfig(files.Options()).ok());
}

// The project file can only narrow, and whoever can write the workspace can
// replace it whatever its mode: a group-writable one (umask 002) is read, and
// still cannot widen.
TEST(ConfigLoad, AGroupWritableProjectFileIsReadAndStillOnlyNarrows) {
  Files files;
  files.User("[sandbox]\n", 0600);
  for (mode_t mode : {0664, 0666}) {
    files.Project("[sandbox]\nmode = \"read-only\"\n", mode);
    Result<Config> config = LoadConfig(files.Options());
    ASSERT_TRUE(config.ok()) << config.error().message();
    EXPECT_EQ(config->mode, Mode::kReadOnly);
    files.Project("[sandbox]\nnetwork = true\n", mode);
    EXPECT_EQ(LoadError(files.Options()).code(), "config_project_widens");
  }
}

TEST(ConfigLoad, AUserFileOwnedBySomeoneElseIsRefused) {
  Files files;
  files.User("[sandbox]\n");
  LoadOptions options = files.Options();
  if (::geteuid() == 0) {
    // root may own it; hand it to nobody instead.
    ASSERT_EQ(::chown(files.user_path.c_str(), 65534, 65534), 0);
  } else {
    options.uid = ::geteuid() + 1;
  }
  Error error = LoadError(options);
  EXPECT_EQ(error.code(), "config_insecure");
  EXPECT_NE(error.message().find("owned by uid"), std::string::npos) << error.message();
}

TEST(ConfigLoad, ProjectFileOwnershipDoesNotMatter) {
  Files files;
  files.Project("[sandbox]\nmode = \"read-only\"\n");
  LoadOptions options = files.Options();
  options.uid = ::geteuid() + 1;  // the project file can only narrow
  options.user_path.reset();
  EXPECT_TRUE(LoadConfig(options).ok());
}

TEST(ConfigLoad, UserConfigPathHonoursXdgConfigHome) {
  EXPECT_EQ(UserConfigPath("/home/u", nullptr), "/home/u/.config/corral/config.toml");
  EXPECT_EQ(UserConfigPath("/home/u", "/xdg"), "/xdg/corral/config.toml");
  EXPECT_EQ(UserConfigPath("/home/u", ""), "/home/u/.config/corral/config.toml");
  EXPECT_EQ(UserConfigPath("/home/u", "relative"), "/home/u/.config/corral/config.toml");
  EXPECT_EQ(ProjectConfigPath("/ws"), "/ws/corral.toml");
}

TEST(ConfigLoad, DefaultLoadOptionsReadTheEnvironment) {
  const char* saved = ::getenv("XDG_CONFIG_HOME");
  std::string previous = saved != nullptr ? saved : "";
  ::setenv("XDG_CONFIG_HOME", "/xdg-test", 1);
  LoadOptions options = DefaultLoadOptions("/home/u", "/ws");
  if (saved != nullptr) ::setenv("XDG_CONFIG_HOME", previous.c_str(), 1);
  else ::unsetenv("XDG_CONFIG_HOME");
  EXPECT_EQ(options.user_path, "/xdg-test/corral/config.toml");
  EXPECT_EQ(options.project_path, "/ws/corral.toml");
  EXPECT_EQ(options.uid, ::geteuid());
}

TEST(ConfigLoad, TildeExpandsToTheGivenHome) {
  Files files;
  files.User("[sandbox]\nallow_read = [\"~/data\"]\nforbid_read = [\"~/.ssh\"]\nworkspace_root = \"~\"\n");
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();
  EXPECT_EQ(config->allow_read, std::vector<std::string>{files.home + "/data"});
  EXPECT_EQ(config->forbid_read, std::vector<std::string>{files.home + "/.ssh"});
  EXPECT_EQ(config->workspace_root, files.home);
}

TEST(ConfigLoad, ARelativeWorkspaceRootOptionIsAUsageError) {
  Files files;
  LoadOptions options = files.Options();
  options.workspace_root = "ws";
  EXPECT_EQ(LoadError(options).kind(), ErrorKind::kUsage);
}

// The loaded config, fed to BuildPolicy, gives the policy both files asked for.
TEST(ConfigLoad, EndToEndBuildsTheExpectedPolicy) {
  Files files;
  files.dir.File("home/data/file", "x");
  files.dir.File("ws/.env", "SECRET=1");
  files.dir.File("ws/sub/.env", "SECRET=2");
  files.dir.File("ws/secret.txt", "s");
  files.dir.File("ws/src/main.c", "int main;");
  files.dir.Dir("ws/out");
  files.User("[sandbox]\nworkspace_root = \"" + files.workspace +
             "\"\nallow_read = [\"~/data\"]\nforbid_read = [\"**/.env\"]\nallow_env = [\"FOO\"]\ntimeout = 60\n"
             "network = false\n");
  files.Project("[sandbox]\nmode = \"read-only\"\ntimeout = 10\nforbid_read = [\"secret.txt\"]\n"
                "allow_write = [\"out\"]\n");
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();

  PolicySpec spec;
  config->ApplyTo(spec);
  HostContext host{files.workspace, files.home, ::getuid(), ::getgid(), {}, {}, {}};
  Result<Policy> policy = BuildPolicy(host, spec);
  ASSERT_TRUE(policy.ok()) << policy.error().message();

  EXPECT_EQ(policy->mode(), Mode::kReadOnly);
  ASSERT_TRUE(policy->workspace());
  EXPECT_EQ(policy->workspace()->path, files.workspace);
  EXPECT_EQ(policy->network(), NetworkMode::kNone);
  EXPECT_EQ(policy->timeout(), std::chrono::seconds(10));
  EXPECT_EQ(policy->env_allow(), std::vector<std::string>{"FOO"});
  const PathGrant* data = policy->GrantFor(files.home + "/data/file");
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(data->path.path, files.home + "/data");
  EXPECT_EQ(data->access, Access::kRead);
  // read-only mode (from the project) narrows the project's own write grant.
  const PathGrant* out = policy->GrantFor(files.workspace + "/out");
  ASSERT_NE(out, nullptr);
  EXPECT_FALSE(Has(out->access, Access::kWrite));
  EXPECT_TRUE(policy->WritableRoots().empty());
  std::vector<std::string> masked;
  for (const MaskedPath& mask : policy->masks()) masked.push_back(mask.path);
  for (const std::string& hidden : {files.workspace + "/.env", files.workspace + "/sub/.env",
                                    files.workspace + "/secret.txt"}) {
    EXPECT_NE(std::find(masked.begin(), masked.end(), hidden), masked.end()) << hidden;
  }
  EXPECT_EQ(std::find(masked.begin(), masked.end(), files.workspace + "/src/main.c"), masked.end());
}

TEST(ConfigLoad, EndToEndBashOffNeedsTheAcknowledgement) {
  Files files;
  files.User("[sandbox]\nbash = \"off\"\n");
  Result<Config> config = LoadConfig(files.Options());
  ASSERT_TRUE(config.ok()) << config.error().message();
  PolicySpec spec;
  config->ApplyTo(spec);
  HostContext host{files.workspace, files.home, ::getuid(), ::getgid(), {}, {}, {}};
  Result<Policy> refused = BuildPolicy(host, spec);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message().find("i_understand_danger_full_access"), std::string::npos);
  files.User("[sandbox]\nbash = \"off\"\ni_understand_danger_full_access = true\n");
  Result<Config> acknowledged = LoadConfig(files.Options());
  ASSERT_TRUE(acknowledged.ok());
  PolicySpec danger;
  acknowledged->ApplyTo(danger);
  Result<Policy> policy = BuildPolicy(host, danger);
  ASSERT_TRUE(policy.ok()) << policy.error().message();
  EXPECT_TRUE(policy->unconfined());
}

}  // namespace
}  // namespace corral
