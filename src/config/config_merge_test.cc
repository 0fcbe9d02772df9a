#include "config/config_merge.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

constexpr char kUserFile[] = "/home/u/.config/corral/config.toml";
constexpr char kProjectFile[] = "/ws/corral.toml";

std::optional<ConfigLayer> Layer(const std::optional<std::string>& text, const char* file, ConfigScope scope) {
  if (!text) return std::nullopt;
  Result<ConfigLayer> layer = ParseConfigText(*text, ParseContext{file, scope, "/home/u"});
  EXPECT_TRUE(layer.ok()) << layer.error().message();
  return layer.ok() ? std::optional<ConfigLayer>(layer.value()) : std::nullopt;
}

Result<Config> Merge(const std::optional<std::string>& user, const std::optional<std::string>& project) {
  return MergeConfigLayers(Layer(user, kUserFile, ConfigScope::kUser),
                           Layer(project, kProjectFile, ConfigScope::kProject), MergeContext{kUserFile, "/ws", std::nullopt});
}

Config Merged(const std::optional<std::string>& user, const std::optional<std::string>& project) {
  Result<Config> config = Merge(user, project);
  EXPECT_TRUE(config.ok()) << config.error().message();
  return config.ok() ? config.value() : Config{};
}

// The refusal's message; also checks it is the narrowing kind.
std::string Refused(const std::optional<std::string>& user, const std::string& project) {
  Result<Config> config = Merge(user, project);
  EXPECT_FALSE(config.ok()) << project;
  if (config.ok()) return "";
  EXPECT_EQ(config.error().kind(), ErrorKind::kConfig);
  EXPECT_EQ(config.error().code(), "config_project_widens") << config.error().message();
  return config.error().message();
}

bool StartsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

TEST(ConfigMerge, NoFilesMeansDefaults) {
  Config config = Merged(std::nullopt, std::nullopt);
  EXPECT_EQ(config, Config{});
  PolicySpec spec;
  config.ApplyTo(spec);
  EXPECT_EQ(spec, PolicySpec{});
}

TEST(ConfigMerge, UserFileAppliesAsGiven) {
  Config config = Merged(
      "[sandbox]\nmode = \"danger-full-access\"\ni_understand_danger_full_access = true\nnetwork = true\n"
      "best_effort = true\nhome = \"real\"\nworkspace_root = \"/ws\"\nallow_write = [\"/tmp/out\"]\n"
      "backend = \"bubblewrap\"\ntimeout = 60\n[approval]\npolicy = \"allow-all\"\npreset = \"danger\"\n",
      std::nullopt);
  EXPECT_EQ(config.mode, Mode::kDangerFullAccess);
  EXPECT_EQ(config.acknowledge_danger, true);
  EXPECT_EQ(config.network, NetworkMode::kAll);
  EXPECT_EQ(config.best_effort, true);
  EXPECT_EQ(config.home, HomeMode::kReal);
  EXPECT_EQ(config.workspace_root, "/ws");
  EXPECT_EQ(config.allow_write, std::vector<std::string>{"/tmp/out"});
  EXPECT_EQ(config.backend, BackendChoice::kBubblewrap);
  EXPECT_EQ(config.timeout, std::chrono::seconds(60));
  EXPECT_EQ(config.approval_policy, ApprovalPolicy::kAllowAll);
  EXPECT_EQ(config.preset, "danger");
  EXPECT_EQ(config.files_read, std::vector<std::string>{kUserFile});
  EXPECT_EQ(config.origins.at("sandbox.mode"), std::string(kUserFile) + ":2:1");
}

TEST(ConfigMerge, ProjectCannotOpenTheNetwork) {
  const std::string project = "[sandbox]\nnetwork = true\n";
  EXPECT_EQ(Refused(std::nullopt, project),
            "/ws/corral.toml:2:1: sandbox.network: the project config cannot open the network: only the user config "
            "(/home/u/.config/corral/config.toml) can set network = true");
  EXPECT_TRUE(StartsWith(Refused("[sandbox]\nnetwork = false\n", project), "/ws/corral.toml:2:1: sandbox.network: "));
  EXPECT_TRUE(StartsWith(Refused("[sandbox]\nnetwork = \"none\"\n", "[sandbox]\nnetwork = \"all\"\n"),
                         "/ws/corral.toml:2:1: sandbox.network: "));
}

TEST(ConfigMerge, ProjectMayRepeatOrCloseTheUsersNetwork) {
  EXPECT_EQ(Merged("[sandbox]\nnetwork = true\n", "[sandbox]\nnetwork = true\n").network, NetworkMode::kAll);
  Config closed = Merged("[sandbox]\nnetwork = true\n", "[sandbox]\nnetwork = false\n");
  EXPECT_EQ(closed.network, NetworkMode::kNone);
  EXPECT_EQ(closed.origins.at("sandbox.network"), "/ws/corral.toml:2:1");
}

TEST(ConfigMerge, ProjectCannotWidenTheMode) {
  EXPECT_EQ(Refused("[sandbox]\nmode = \"read-only\"\n", "[sandbox]\nmode = \"workspace-write\"\n"),
            "/ws/corral.toml:2:1: sandbox.mode: the project config cannot widen the mode from read-only (the user config) to "
            "workspace-write: only the user config (/home/u/.config/corral/config.toml) can widen the mode");
  // Without a user file the ceiling is the default, workspace-write.
  EXPECT_TRUE(StartsWith(Refused(std::nullopt, "[sandbox]\nmode = \"danger-full-access\"\n"),
                         "/ws/corral.toml:2:1: sandbox.mode: "));
  EXPECT_EQ(Merged(std::nullopt, "[sandbox]\nmode = \"read-only\"\n").mode, Mode::kReadOnly);
  EXPECT_EQ(Merged(std::nullopt, "[sandbox]\nmode = \"workspace-write\"\n").mode, Mode::kWorkspaceWrite);
  EXPECT_EQ(Merged("[sandbox]\nbash = \"off\"\n", "[sandbox]\nmode = \"read-only\"\n").mode, Mode::kReadOnly);
}

TEST(ConfigMerge, ProjectCannotTurnBashOff) {
  EXPECT_TRUE(StartsWith(Refused(std::nullopt, "[sandbox]\nbash = \"off\"\n"), "/ws/corral.toml:2:1: sandbox.bash: "));
  // Not even when the user already runs unconfined: only the user file says so.
  EXPECT_TRUE(StartsWith(Refused("[sandbox]\nbash = \"off\"\n", "[sandbox]\nbash = \"off\"\n"),
                         "/ws/corral.toml:2:1: sandbox.bash: "));
}

TEST(ConfigMerge, UserBashOffMeansDangerFullAccess) {
  Config config = Merged("[sandbox]\nbash = \"off\"\n", std::nullopt);
  EXPECT_EQ(config.mode, Mode::kDangerFullAccess);
  EXPECT_EQ(config.origins.at("sandbox.bash"), std::string(kUserFile) + ":2:1");
  // ... which, like mode = "danger-full-access", still needs the acknowledgement (BuildPolicy checks it).
  EXPECT_FALSE(config.acknowledge_danger);
}

TEST(ConfigMerge, ProjectBashEnforceKeepsCommandsSandboxed) {
  Config config = Merged("[sandbox]\nbash = \"off\"\ni_understand_danger_full_access = true\n",
                         "[sandbox]\nbash = \"enforce\"\n");
  EXPECT_EQ(config.mode, Mode::kWorkspaceWrite);
  EXPECT_EQ(config.origins.at("sandbox.mode"), "/ws/corral.toml:2:1");
  EXPECT_EQ(Merged("[sandbox]\nmode = \"read-only\"\n", "[sandbox]\nbash = \"enforce\"\n").mode, Mode::kReadOnly);
}

// accept_rung: the user file's names are kept; a project file naming any,
// even one the user accepts, is refused at the element (mutant
// project_accept_rung).
TEST(ConfigMerge, OnlyTheUserConfigAcceptsARung) {
  EXPECT_EQ(Merged("[sandbox]\naccept_rung = [\"masked-proc\"]\n", std::nullopt).accept_rung,
            std::vector<std::string>{"masked-proc"});
  std::string refused = Refused("[sandbox]\naccept_rung = [\"no-userns\"]\n",
                                "[sandbox]\naccept_rung = [\"no-userns\"]\n");
  EXPECT_TRUE(StartsWith(refused, "/ws/corral.toml:2:")) << refused;
  EXPECT_NE(refused.find("sandbox.accept_rung[0]: the project config cannot accept the rung no-userns: only the "
                         "user config (/home/u/.config/corral/config.toml) can set accept_rung"),
            std::string::npos)
      << refused;
}

TEST(ConfigMerge, ProjectCannotSetDangerousSwitches) {
  EXPECT_EQ(Refused(std::nullopt, "[sandbox]\nbest_effort = true\n"),
            "/ws/corral.toml:2:1: sandbox.best_effort: the project config cannot set best_effort: only the user "
            "config (/home/u/.config/corral/config.toml) can set best_effort");
  EXPECT_TRUE(StartsWith(Refused(std::nullopt, "[sandbox]\nhome = \"real\"\n"), "/ws/corral.toml:2:1: sandbox.home: "));
  EXPECT_TRUE(StartsWith(Refused("[sandbox]\nmode = \"danger-full-access\"\n",
                                 "[sandbox]\ni_understand_danger_full_access = true\n"),
                         "/ws/corral.toml:2:1: sandbox.i_understand_danger_full_access: "));
}

TEST(ConfigMerge, ProjectMayTurnDangerousSwitchesOff) {
  Config config = Merged(
      "[sandbox]\nbest_effort = true\nhome = \"real\"\ni_understand_danger_full_access = true\n",
      "[sandbox]\nbest_effort = false\nhome = \"isolated\"\ni_understand_danger_full_access = false\n");
  EXPECT_EQ(config.best_effort, false);
  EXPECT_EQ(config.home, HomeMode::kIsolated);
  EXPECT_EQ(config.acknowledge_danger, false);
}

TEST(ConfigMerge, ProjectCannotSetWorkspaceRootOrBackend) {
  EXPECT_EQ(Refused(std::nullopt, "[sandbox]\nworkspace_root = \"/ws\"\n"),
            "/ws/corral.toml:2:1: sandbox.workspace_root: the project config cannot set the workspace root: only the "
            "user config (/home/u/.config/corral/config.toml) can set the workspace root");
  EXPECT_TRUE(StartsWith(Refused(std::nullopt, "[sandbox]\nbackend = \"unavailable\"\n"),
                         "/ws/corral.toml:2:1: sandbox.backend: "));
}

TEST(ConfigMerge, ProjectGrantsMustStayInsideTheWorkspace) {
  EXPECT_EQ(Refused(std::nullopt, "[sandbox]\nallow_read = [\"/ws/docs\", \"/etc\"]\n"),
            "/ws/corral.toml:2:27: sandbox.allow_read[1]: the project config can grant only paths inside the "
            "workspace (/ws), not \"/etc\": only the user config (/home/u/.config/corral/config.toml) can grant "
            "paths outside it");
  EXPECT_TRUE(StartsWith(Refused(std::nullopt, "[sandbox]\nallow_write = [\"~/.bashrc\"]\n"),
                         "/ws/corral.toml:2:16: sandbox.allow_write[0]: "));
  // A shared prefix is not containment.
  EXPECT_TRUE(StartsWith(Refused(std::nullopt, "[sandbox]\nallow_exec = [\"/ws-other/bin\"]\n"),
                         "/ws/corral.toml:2:15: sandbox.allow_exec[0]: "));
  Config config = Merged(std::nullopt, "[sandbox]\nallow_read = [\"docs\"]\nallow_write = [\"/ws/build\"]\n"
                                       "allow_exec = [\"./bin\"]\n");
  EXPECT_EQ(config.allow_read, std::vector<std::string>{"/ws/docs"});
  EXPECT_EQ(config.allow_write, std::vector<std::string>{"/ws/build"});
  EXPECT_EQ(config.allow_exec, std::vector<std::string>{"/ws/bin"});
}

TEST(ConfigMerge, ProjectGrantsMustAlsoLieInTheUsersWorkspaceRoot) {
  std::string message = Refused("[sandbox]\nworkspace_root = \"/ws/sub\"\n", "[sandbox]\nallow_read = [\"/ws/x\"]\n");
  EXPECT_NE(message.find("(/ws and /ws/sub)"), std::string::npos) << message;
  EXPECT_EQ(Merged("[sandbox]\nworkspace_root = \"/ws/sub\"\n", "[sandbox]\nallow_read = [\"/ws/sub/x\"]\n").allow_read,
            std::vector<std::string>{"/ws/sub/x"});
}

TEST(ConfigMerge, ProjectGrantsUnionWithTheUsers) {
  Config config = Merged("[sandbox]\nallow_read = [\"/data\"]\n", "[sandbox]\nallow_read = [\"/ws/docs\", \"/ws/docs\"]\n");
  EXPECT_EQ(config.allow_read, (std::vector<std::string>{"/data", "/ws/docs"}));
}

TEST(ConfigMerge, ProjectCannotAddEnvironmentNames) {
  EXPECT_EQ(Refused("[sandbox]\nallow_env = [\"CARGO_HOME\"]\n", "[sandbox]\nallow_env = [\"CARGO_HOME\", \"AWS_SECRET\"]\n"),
            "/ws/corral.toml:2:28: sandbox.allow_env[1]: the project config cannot pass AWS_SECRET through: the user "
            "config does not allow it, and only the user config (/home/u/.config/corral/config.toml) can add names "
            "to allow_env");
  Config config = Merged("[sandbox]\nallow_env = [\"CARGO_HOME\"]\n", "[sandbox]\nallow_env = [\"CARGO_HOME\", \"PATH\"]\n");
  EXPECT_EQ(config.allow_env, (std::vector<std::string>{"CARGO_HOME", "PATH"}));
}

TEST(ConfigMerge, ProjectMayLowerButNotRaiseTheTimeout) {
  EXPECT_EQ(Merged("[sandbox]\ntimeout = 60\n", "[sandbox]\ntimeout = 10\n").timeout, std::chrono::seconds(10));
  EXPECT_EQ(Merged("[sandbox]\ntimeout = 60\n", "[sandbox]\ntimeout = 60\n").timeout, std::chrono::seconds(60));
  EXPECT_EQ(Refused("[sandbox]\ntimeout = 60\n", "[sandbox]\ntimeout = 61\n"),
            "/ws/corral.toml:2:1: sandbox.timeout: the project config may lower the timeout (60 seconds in the user "
            "config) but not raise it to 61");
  // No user timeout means no limit: any project timeout lowers it.
  EXPECT_EQ(Merged(std::nullopt, "[sandbox]\ntimeout = 3600\n").timeout, std::chrono::seconds(3600));
}

TEST(ConfigMerge, ForbidReadIsTheUnion) {
  Config config = Merged("[sandbox]\nforbid_read = [\"**/.env\", \"~/.ssh\"]\n",
                         "[sandbox]\nforbid_read = [\"secrets\", \"**/.env\"]\n");
  EXPECT_EQ(config.forbid_read, (std::vector<std::string>{"**/.env", "/home/u/.ssh", "secrets"}));
  EXPECT_EQ(Merged(std::nullopt, "[sandbox]\nforbid_read = [\"/etc/hosts\"]\n").forbid_read,
            std::vector<std::string>{"/etc/hosts"});
}

TEST(ConfigMerge, ProjectCanOnlyTightenApproval) {
  EXPECT_EQ(Merged("[approval]\npolicy = \"ask-dangerous\"\n", "[approval]\npolicy = \"deny-all\"\n").approval_policy,
            ApprovalPolicy::kDenyAll);
  EXPECT_EQ(Merged(std::nullopt, "[approval]\npolicy = \"ask-dangerous-tool-edit\"\n").approval_policy,
            ApprovalPolicy::kAskDangerousToolEdit);
  EXPECT_TRUE(StartsWith(Refused("[approval]\npolicy = \"ask-dangerous-tool-edit\"\n",
                                 "[approval]\npolicy = \"ask-dangerous\"\n"),
                         "/ws/corral.toml:2:1: approval.policy: "));
  EXPECT_TRUE(
      StartsWith(Refused(std::nullopt, "[approval]\npolicy = \"allow-all\"\n"), "/ws/corral.toml:2:1: approval.policy: "));
  EXPECT_EQ(Merged("[approval]\npolicy = \"allow-all\"\n", "[approval]\npolicy = \"allow-all\"\n").approval_policy,
            ApprovalPolicy::kAllowAll);
}

TEST(ConfigMerge, ProjectPresetMayNotImplyMoreThanTheUserAllows) {
  EXPECT_TRUE(StartsWith(Refused(std::nullopt, "[approval]\npreset = \"danger\"\n"), "/ws/corral.toml:2:1: approval.preset: "));
  std::string mode = Refused("[sandbox]\nmode = \"read-only\"\n", "[approval]\npreset = \"custom\"\n");
  EXPECT_NE(mode.find("its mode workspace-write is wider than read-only"), std::string::npos) << mode;
  std::string preset = Refused("[approval]\npreset = \"safe\"\n", "[approval]\npreset = \"custom\"\n");
  EXPECT_NE(preset.find("wider than the user's preset \"safe\""), std::string::npos) << preset;
  std::string approval = Refused("[approval]\npolicy = \"deny-all\"\n", "[approval]\npreset = \"review\"\n");
  EXPECT_NE(approval.find("looser than the user's"), std::string::npos) << approval;
  EXPECT_EQ(Merged("[approval]\npreset = \"safe\"\n", "[approval]\npreset = \"review\"\n").preset, "review");
  EXPECT_EQ(Merged(std::nullopt, "[approval]\npreset = \"custom\"\n").preset, "custom");
}

TEST(ConfigMerge, ProjectNarrowsTheUserAcrossTheBoard) {
  Config config = Merged(
      "[sandbox]\nmode = \"workspace-write\"\nnetwork = true\ntimeout = 600\nallow_read = [\"/data\"]\n"
      "forbid_read = [\"~/.aws\"]\n",
      "[sandbox]\nmode = \"read-only\"\nnetwork = false\ntimeout = 30\nforbid_read = [\".env\"]\n");
  EXPECT_EQ(config.mode, Mode::kReadOnly);
  EXPECT_EQ(config.network, NetworkMode::kNone);
  EXPECT_EQ(config.timeout, std::chrono::seconds(30));
  EXPECT_EQ(config.allow_read, std::vector<std::string>{"/data"});
  EXPECT_EQ(config.forbid_read, (std::vector<std::string>{"/home/u/.aws", ".env"}));
  EXPECT_EQ(config.files_read, (std::vector<std::string>{kUserFile, kProjectFile}));
}

TEST(ConfigMerge, ApplyToFillsThePolicySpec) {
  Config config = Merged(
      "[sandbox]\nmode = \"read-only\"\nworkspace_root = \"/ws\"\nnetwork = \"all\"\ntimeout = 5\nbest_effort = true\n"
      "home = \"real\"\nallow_read = [\"/a\"]\nallow_write = [\"/b\"]\nallow_exec = [\"/c\"]\nallow_env = [\"E\"]\n"
      "forbid_read = [\"x\"]\ni_understand_danger_full_access = true\n",
      std::nullopt);
  PolicySpec spec;
  spec.no_workspace = true;
  spec.allow_read = {"/from-caller"};
  config.ApplyTo(spec);
  EXPECT_EQ(spec.mode, Mode::kReadOnly);
  EXPECT_EQ(spec.workspace, "/ws");
  EXPECT_FALSE(spec.no_workspace);
  EXPECT_EQ(spec.network, NetworkMode::kAll);
  EXPECT_EQ(spec.timeout, std::chrono::seconds(5));
  EXPECT_TRUE(spec.best_effort);
  EXPECT_EQ(spec.home, HomeMode::kReal);
  EXPECT_EQ(spec.allow_read, (std::vector<std::string>{"/from-caller", "/a"}));
  EXPECT_EQ(spec.allow_write, std::vector<std::string>{"/b"});
  EXPECT_EQ(spec.allow_exec, std::vector<std::string>{"/c"});
  EXPECT_EQ(spec.allow_env, std::vector<std::string>{"E"});
  EXPECT_EQ(spec.forbid_read, std::vector<std::string>{"x"});
  EXPECT_TRUE(spec.acknowledge_danger);
  EXPECT_EQ(spec.pin_sha256, std::nullopt);  // not a config key
}

}  // namespace
}  // namespace corral

namespace corral {
namespace {

// A project may lower a limit the user set, or set one the user did not,
// never raise it.
TEST(ConfigMergeLimits, ProjectMayLowerButNotRaiseALimit) {
  EXPECT_EQ(Merged("[sandbox]\nmax_procs = 64\n", "[sandbox]\nmax_procs = 16\n").max_procs, std::optional<uint64_t>(16));
  EXPECT_EQ(Refused("[sandbox]\nmax_procs = 64\n", "[sandbox]\nmax_procs = 65\n"),
            "/ws/corral.toml:2:1: sandbox.max_procs: the project config may lower the process limit (64 in the user "
            "config) but not raise it to 65");
  EXPECT_EQ(Refused("[sandbox]\nmax_memory = \"1g\"\n", "[sandbox]\nmax_memory = \"2g\"\n"),
            "/ws/corral.toml:2:1: sandbox.max_memory: the project config may lower the memory limit (1g in the user "
            "config) but not raise it to 2g");
  EXPECT_EQ(Refused("[sandbox]\nmax_cpu_seconds = 10\n", "[sandbox]\nmax_cpu_seconds = 11\n"),
            "/ws/corral.toml:2:1: sandbox.max_cpu_seconds: the project config may lower the CPU time limit (10 "
            "seconds in the user config) but not raise it to 11");
  // No user limit is no bound: a project's limit narrows.
  EXPECT_EQ(Merged(std::nullopt, "[sandbox]\nmax_open_files = 100\n").max_open_files, std::optional<uint64_t>(100));
  EXPECT_EQ(Merged("[sandbox]\nmax_file_size = \"1g\"\n", std::nullopt).max_file_size,
            std::optional<uint64_t>(1024ull * 1024 * 1024));
}

// The CPU share is a limit like the others: a project may lower the user's
// (0.5 below 2), never raise it, in whichever spelling (mutant project_cpus).
TEST(ConfigMergeLimits, ProjectMayLowerButNotRaiseTheCpuShare) {
  EXPECT_EQ(Merged("[sandbox]\nmax_cpus = 2\n", "[sandbox]\nmax_cpus = 0.5\n").max_cpus, std::optional<uint64_t>(500));
  EXPECT_EQ(Refused("[sandbox]\nmax_cpus = 0.5\n", "[sandbox]\nmax_cpus = 1\n"),
            "/ws/corral.toml:2:1: sandbox.max_cpus: the project config may lower the CPU share limit (0.5 in the user "
            "config) but not raise it to 1");
  EXPECT_EQ(Refused("[sandbox]\nmax_cpus = 1.5\n", "[sandbox]\nmax_cpus = \"1.501\"\n"),
            "/ws/corral.toml:2:1: sandbox.max_cpus: the project config may lower the CPU share limit (1.5 in the user "
            "config) but not raise it to 1.501");
  EXPECT_EQ(Merged(std::nullopt, "[sandbox]\nmax_cpus = 4\n").max_cpus, std::optional<uint64_t>(4000));
}

}  // namespace
}  // namespace corral
