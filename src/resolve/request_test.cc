#include "resolve/request.h"

#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/test_scratch_dir.h"

namespace corral {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ResolveRequest with real files: a user config (given by path, so the
// caller's own is never read), project corral.toml files in candidate
// workspaces, a private session directory, and a hand-built HostContext.
class RequestTest : public ::testing::Test {
 protected:
  RequestTest() {
    host_.cwd = tree_.Dir("cwd");
    host_.home = tree_.Dir("home");
    host_.uid = ::geteuid();
    host_.gid = ::getegid();
    request_.user_config = tree_.Join("user.toml");  // empty until a test writes it
    request_.session_dir = tree_.Join("sessions");
    User("");  // --config names a file that must exist
  }

  // Writes `relative` with mode 0600 (a config file others can write is refused).
  std::string Write(const std::string& relative, const std::string& text) const {
    std::string path = tree_.File(relative, text);
    EXPECT_EQ(::chmod(path.c_str(), 0600), 0);
    return path;
  }
  void User(const std::string& toml) const { Write("user.toml", toml); }
  // A project corral.toml in `dir` whose forbid_read names `dir`'s last
  // component, so a test can tell which project file was read.
  std::string Project(const std::string& dir, const std::string& extra = "") const {
    std::string name = dir.substr(dir.rfind('/') + 1);
    return Write(dir.substr(tree_.path().size() + 1) + "/corral.toml",
                 "[sandbox]\nforbid_read = [\"from-" + name + "\"]\n" + extra);
  }

  // A new session in `cwd`, with `mode` recorded when given; its id.
  std::string NewSession(const std::string& cwd, std::optional<Mode> mode = std::nullopt) {
    std::string id = "s" + std::to_string(++sessions_);
    Result<SessionStore> store = SessionStore::Open(*request_.session_dir);
    EXPECT_TRUE(store.ok()) << store.error().ToString();
    Result<Session> session = store->Create(id, cwd);
    EXPECT_TRUE(session.ok()) << session.error().ToString();
    if (mode) {
      EXPECT_TRUE(session->RecordMode(*mode, ModeSource::kUser).ok());
    }
    return id;
  }

  ResolvedRequest Resolve(const RunRequest& request) const {
    Result<ResolvedRequest> resolved = ResolveRequest(request, host_);
    EXPECT_TRUE(resolved.ok()) << resolved.error().ToString();
    return resolved.ok() ? std::move(resolved).value() : ResolvedRequest{};
  }
  Error Refusal(const RunRequest& request) const {
    Result<ResolvedRequest> resolved = ResolveRequest(request, host_);
    EXPECT_FALSE(resolved.ok());
    return resolved.ok() ? Error(ErrorKind::kInternal, "resolved") : resolved.error();
  }

  // A [profile] file granting workspace `root`, plus `extra` lines.
  std::string Profile(const std::string& root, const std::string& extra) const {
    return Write("profile-" + std::to_string(++profiles_) + ".toml",
                 "[profile]\nworkspace_root = \"" + root +
                     "\"\nworkspace_read = \"allow\"\nworkspace_write = \"allow\"\ncommand = \"allow\"\n" + extra);
  }

  corral::testing::TestTree tree_;
  HostContext host_;
  RunRequest request_;
  int sessions_ = 0;
  mutable int profiles_ = 0;
};

// mode = --mode > the session's last sandbox/mode > config (or preset) > built-in.
TEST_F(RequestTest, ModePrecedenceTable) {
  struct Row {
    std::optional<Mode> flag;
    std::optional<Mode> session;  // recorded in a session when set
    const char* config;           // user config text
    std::optional<std::string> preset;
    Mode want;
    ModeLayer layer;
  };
  const Row rows[] = {
      {std::nullopt, std::nullopt, "", std::nullopt, Mode::kWorkspaceWrite, ModeLayer::kDefault},
      {std::nullopt, std::nullopt, "[sandbox]\nmode = \"read-only\"\n", std::nullopt, Mode::kReadOnly,
       ModeLayer::kDefault},
      {std::nullopt, std::nullopt, "", "safe", Mode::kReadOnly, ModeLayer::kDefault},
      // The config's own mode beats the preset's.
      {std::nullopt, std::nullopt, "[sandbox]\nmode = \"workspace-write\"\n", "safe", Mode::kWorkspaceWrite,
       ModeLayer::kDefault},
      {std::nullopt, Mode::kReadOnly, "[sandbox]\nmode = \"workspace-write\"\n", "custom", Mode::kReadOnly,
       ModeLayer::kSession},
      {std::nullopt, Mode::kWorkspaceWrite, "[sandbox]\nmode = \"read-only\"\n", std::nullopt,
       Mode::kWorkspaceWrite, ModeLayer::kSession},
      {Mode::kWorkspaceWrite, Mode::kReadOnly, "[sandbox]\nmode = \"read-only\"\n", "safe", Mode::kWorkspaceWrite,
       ModeLayer::kOverride},
      {Mode::kReadOnly, std::nullopt, "", std::nullopt, Mode::kReadOnly, ModeLayer::kOverride},
  };
  for (size_t i = 0; i < std::size(rows); ++i) {
    const Row& row = rows[i];
    User(row.config);
    RunRequest request = request_;
    request.overrides.mode = row.flag;
    request.preset = row.preset;
    if (row.session) request.session_id = NewSession(host_.cwd, row.session);
    ResolvedRequest resolved = Resolve(request);
    EXPECT_EQ(resolved.spec.mode, row.want) << "row " << i;
    EXPECT_EQ(resolved.resolution.policy.mode, row.want) << "row " << i;
    EXPECT_EQ(resolved.resolution.mode_layer, row.layer) << "row " << i;
  }
}

// workspace = --workspace > the session's cwd > the user's workspace_root >
// the working directory; the project file read is the winner's corral.toml.
TEST_F(RequestTest, WorkspacePrecedenceTable) {
  std::string flag = tree_.Dir("flag"), session_cwd = tree_.Dir("session"), root = tree_.Dir("root");
  for (const std::string& dir : {flag, session_cwd, root, host_.cwd}) Project(dir);
  std::string session = NewSession(session_cwd);
  struct Row {
    bool flag, session, root;
    std::optional<std::string> want;  // spec.workspace; nullopt: BuildPolicy takes the cwd
    std::string project;              // the directory whose corral.toml was read
    RootLayer layer;                  // what the resolution reports
  };
  const Row rows[] = {
      {false, false, false, std::nullopt, host_.cwd, RootLayer::kCwd},
      {false, false, true, root, root, RootLayer::kFallback},
      {false, true, true, session_cwd, session_cwd, RootLayer::kSession},
      {true, true, true, flag, flag, RootLayer::kOverride},
      {true, false, false, flag, flag, RootLayer::kOverride},
  };
  for (size_t i = 0; i < std::size(rows); ++i) {
    const Row& row = rows[i];
    User(row.root ? "[sandbox]\nworkspace_root = \"" + root + "\"\n" : "");
    RunRequest request = request_;
    if (row.flag) request.overrides.workspace = flag;
    if (row.session) request.session_id = session;
    ResolvedRequest resolved = Resolve(request);
    EXPECT_EQ(resolved.spec.workspace, row.want) << "row " << i;
    EXPECT_EQ(resolved.resolution.root_layer, row.layer) << "row " << i;
    EXPECT_EQ(resolved.resolution.policy.workspace_root, row.want.value_or(host_.cwd)) << "row " << i;
    std::vector<std::string> files = {*request_.user_config, row.project + "/corral.toml"};
    EXPECT_EQ(resolved.config_files, files) << "row " << i;
    std::string from = "from-" + row.project.substr(row.project.rfind('/') + 1);
    EXPECT_THAT(resolved.spec.forbid_read, ElementsAre(from)) << "row " << i;
    EXPECT_THAT(resolved.spec.own_files, ElementsAre(*request_.user_config)) << "row " << i;  // hidden
  }
}

TEST_F(RequestTest, NoWorkspaceGrantsNoneAndReadsNoProjectFile) {
  Project(host_.cwd);
  std::string root = tree_.Dir("root");
  User("[sandbox]\nworkspace_root = \"" + root + "\"\n");
  RunRequest request = request_;
  request.overrides.no_workspace = true;
  request.session_id = NewSession(tree_.Dir("session"));
  ResolvedRequest resolved = Resolve(request);
  EXPECT_TRUE(resolved.spec.no_workspace);
  EXPECT_EQ(resolved.spec.workspace, std::nullopt);
  // The report agrees: no workspace, though the session has a cwd.
  EXPECT_EQ(resolved.resolution.root_layer, RootLayer::kNone);
  EXPECT_EQ(resolved.resolution.policy.workspace_root, std::nullopt);
  EXPECT_THAT(resolved.config_files, ElementsAre(*request_.user_config));
  EXPECT_THAT(resolved.spec.forbid_read, IsEmpty());
}

TEST_F(RequestTest, NoConfigReadsNeitherFile) {
  User("[sandbox]\nmode = \"read-only\"\n");
  Project(host_.cwd, "network = true\n");  // would be refused if read
  RunRequest request = request_;
  request.no_config = true;
  ResolvedRequest resolved = Resolve(request);
  EXPECT_THAT(resolved.config_files, IsEmpty());
  EXPECT_EQ(resolved.spec.mode, Mode::kWorkspaceWrite);
  EXPECT_THAT(resolved.spec.forbid_read, IsEmpty());
}

// The user file is read once a run: the trail, the workspace root and the
// merge all take what ReadUserConfigOnce read, even if the file changes after.
TEST_F(RequestTest, TheUserConfigIsReadOnceForTheTrailAndThePolicy) {
  std::string trail = tree_.Join("trail.jsonl");
  std::string root = tree_.Dir("root");
  User("[sandbox]\nmode = \"read-only\"\nworkspace_root = \"" + root + "\"\n[audit]\ntrail = \"" + trail + "\"\n");
  RunRequest request = request_;
  ASSERT_TRUE(ReadUserConfigOnce(request, host_).ok());
  ASSERT_NE(request.user_layer, nullptr);
  User("[sandbox]\nmode = \"workspace-write\"\n");  // read again, this would change the run
  Result<std::optional<std::string>> configured = ConfiguredAuditTrail(request, host_);
  ASSERT_TRUE(configured.ok()) << configured.error().ToString();
  EXPECT_EQ(*configured, std::optional<std::string>(trail));
  ResolvedRequest resolved = Resolve(request);
  EXPECT_EQ(resolved.spec.mode, Mode::kReadOnly);
  EXPECT_EQ(resolved.spec.workspace, std::optional<std::string>(root));
  EXPECT_THAT(resolved.config_files, ElementsAre(*request_.user_config));
  // Without it each reader reads the file as it is now.
  EXPECT_EQ(Resolve(request_).spec.mode, Mode::kWorkspaceWrite);
}

// A user file that cannot be read is kept as its error: the resolution
// refuses with it, even once the file has been mended, and does not read
// the file again (the trail took the default on that same error).
TEST_F(RequestTest, AnUnreadableUserConfigIsKeptAsItsError) {
  User("[sandbox]\nno_such_key = 1\n");
  RunRequest request = request_;
  Status read = ReadUserConfigOnce(request, host_);
  ASSERT_FALSE(read.ok());
  ASSERT_NE(request.user_layer, nullptr);
  User("[sandbox]\nmode = \"read-only\"\n");  // mended after the first read
  EXPECT_FALSE(ConfiguredAuditTrail(request, host_).ok());
  Error error = Refusal(request);
  EXPECT_EQ(error.kind(), ErrorKind::kConfig);
  EXPECT_EQ(error.ToString(), read.error().ToString());
  // Read afresh, the mended file resolves.
  EXPECT_EQ(Resolve(request_).spec.mode, Mode::kReadOnly);
}

TEST_F(RequestTest, ARefusedConfigFileRefusesTheRequest) {
  Project(host_.cwd, "network = true\n");
  Error error = Refusal(request_);
  EXPECT_EQ(error.kind(), ErrorKind::kConfig);
  EXPECT_EQ(error.code(), "config_project_widens");
  EXPECT_THAT(error.message(), HasSubstr(host_.cwd + "/corral.toml:3:1: sandbox.network"));
}

// approval = --approval > approval.policy > the preset's > allow-all.
TEST_F(RequestTest, ApprovalPrecedenceTable) {
  struct Row {
    std::optional<ApprovalPolicy> flag;
    const char* config;
    std::optional<std::string> preset;
    ApprovalPolicy want;
    const char* source;
  };
  const Row rows[] = {
      {std::nullopt, "", std::nullopt, ApprovalPolicy::kAllowAll, "default"},
      {std::nullopt, "", "review", ApprovalPolicy::kAskDangerousToolEdit, "preset"},
      {std::nullopt, "[approval]\npolicy = \"deny-all\"\n", "review", ApprovalPolicy::kDenyAll, "config"},
      {ApprovalPolicy::kAskDangerous, "[approval]\npolicy = \"deny-all\"\n", "review", ApprovalPolicy::kAskDangerous,
       "flag"},
      {ApprovalPolicy::kAllowAll, "", std::nullopt, ApprovalPolicy::kAllowAll, "flag"},
      // A preset named in the config file counts as the preset.
      {std::nullopt, "[approval]\npreset = \"safe\"\n", std::nullopt, ApprovalPolicy::kAskDangerous, "preset"},
  };
  for (size_t i = 0; i < std::size(rows); ++i) {
    User(rows[i].config);
    RunRequest request = request_;
    request.approval = rows[i].flag;
    request.preset = rows[i].preset;
    ResolvedRequest resolved = Resolve(request);
    EXPECT_EQ(resolved.approval, rows[i].want) << "row " << i;
    EXPECT_EQ(resolved.approval_source, rows[i].source) << "row " << i;
  }
}

TEST_F(RequestTest, APresetWithAnOverrideIsDerivedCustom) {
  RunRequest request = request_;
  request.preset = "safe";
  ResolvedRequest plain = Resolve(request);
  ASSERT_TRUE(plain.preset.has_value());
  EXPECT_EQ(plain.preset->name, "safe");
  EXPECT_FALSE(plain.preset->derived);

  request.overrides.mode = Mode::kWorkspaceWrite;
  ResolvedRequest mode = Resolve(request);
  ASSERT_TRUE(mode.preset.has_value());
  EXPECT_EQ(mode.preset->name, "custom");
  EXPECT_EQ(mode.preset->base_preset, "safe");
  EXPECT_TRUE(mode.preset->derived);
  EXPECT_THAT(mode.preset->overridden, ElementsAre("mode"));
  EXPECT_EQ(mode.spec.mode, Mode::kWorkspaceWrite);

  request.overrides.mode.reset();
  request.approval = ApprovalPolicy::kDenyAll;
  ResolvedRequest approval = Resolve(request);
  ASSERT_TRUE(approval.preset.has_value());
  EXPECT_EQ(approval.preset->name, "custom");
  EXPECT_THAT(approval.preset->overridden, ElementsAre("approval"));

  // The config's mode overrides the preset as well.
  User("[sandbox]\nmode = \"workspace-write\"\n");
  request.approval.reset();
  ResolvedRequest config = Resolve(request);
  ASSERT_TRUE(config.preset.has_value());
  EXPECT_EQ(config.preset->name, "custom");
  EXPECT_THAT(config.preset->overridden, ElementsAre("mode"));

  EXPECT_EQ(Resolve(request_).preset, std::nullopt);  // no preset, no state
}

TEST_F(RequestTest, AProfileConflictsWithEveryGrantFlag) {
  std::string profile = Profile(tree_.Dir("ws"), "");
  std::string dir = tree_.Dir("data");
  const std::function<void(SpecOverrides&)> grants[] = {
      [&](SpecOverrides& o) { o.allow_read = {dir}; },
      [&](SpecOverrides& o) { o.allow_write = {dir}; },
      [&](SpecOverrides& o) { o.allow_exec = {dir}; },
      [&](SpecOverrides& o) { o.allow_env = {"TOKEN"}; },
      [&](SpecOverrides& o) { o.forbid_read = {"**/.env"}; },
      [&](SpecOverrides& o) { o.workspace = dir; },
      [&](SpecOverrides& o) { o.no_workspace = true; },
      [&](SpecOverrides& o) { o.network = NetworkMode::kAll; },
      [&](SpecOverrides& o) { o.home = HomeMode::kReal; },
  };
  for (size_t i = 0; i < std::size(grants); ++i) {
    RunRequest request = request_;
    request.profile = profile;
    grants[i](request.overrides);
    Error error = Refusal(request);
    EXPECT_EQ(error.kind(), ErrorKind::kUsage) << "grant " << i;
    EXPECT_THAT(error.message(), HasSubstr("--profile")) << "grant " << i;
  }
  RunRequest plain = request_;
  plain.profile = profile;
  EXPECT_TRUE(ResolveRequest(plain, host_).ok());
}

TEST_F(RequestTest, AGatedProfileDimensionIsListedAndMappedLikeAllow) {
  std::string ws = tree_.Dir("ws");
  RunRequest request = request_;
  request.profile = Profile(ws, "network = \"gated\"\n");
  ResolvedRequest resolved = Resolve(request);
  EXPECT_THAT(resolved.gated, ElementsAre(Dimension::kNetwork));
  EXPECT_EQ(resolved.spec.network, NetworkMode::kAll);
  EXPECT_EQ(resolved.spec.workspace, ws);
  EXPECT_EQ(resolved.spec.mode, Mode::kWorkspaceWrite);
  ASSERT_TRUE(resolved.profile_fingerprint.has_value());
  EXPECT_EQ(resolved.profile_fingerprint->size(), 64u);

  // A ceiling that denies the network removes the dimension altogether.
  request.profile_ceiling = Profile(ws, "network = \"deny\"\n");
  ResolvedRequest narrowed = Resolve(request);
  EXPECT_THAT(narrowed.gated, IsEmpty());
  EXPECT_EQ(narrowed.spec.network, NetworkMode::kNone);
  EXPECT_NE(narrowed.profile_fingerprint, resolved.profile_fingerprint);
}

TEST_F(RequestTest, AProfilesWorkspaceIsNotReplacedByTheConfigsWorkspaceRoot) {
  // The profile replaces the config files' grants, workspace_root included.
  std::string ws = tree_.Dir("ws");
  User("[sandbox]\nworkspace_root = \"" + tree_.Dir("root") + "\"\n");
  RunRequest request = request_;
  request.profile = Profile(ws, "");
  EXPECT_EQ(Resolve(request).spec.workspace, ws);

  // A profile that denies the workspace gets none from the config either.
  request.profile = Write("denied.toml", "[profile]\ncommand = \"allow\"\n");
  ResolvedRequest denied = Resolve(request);
  EXPECT_TRUE(denied.spec.no_workspace);
  EXPECT_EQ(denied.spec.workspace, std::nullopt);
}

// A profile's mode is a ceiling: --mode and the session may narrow it, never widen it.
TEST_F(RequestTest, NeitherTheModeFlagNorTheSessionWidensAProfile) {
  std::string ws = tree_.Dir("ws");
  std::string read_only = Write("ro.toml", "[profile]\nworkspace_root = \"" + ws +
                                               "\"\nworkspace_read = \"allow\"\ncommand = \"allow\"\n");
  RunRequest request = request_;
  request.profile = read_only;
  request.profile_ceiling = read_only;
  ResolvedRequest plain = Resolve(request);
  EXPECT_EQ(plain.spec.mode, Mode::kReadOnly);
  EXPECT_EQ(plain.mode_ceiling, Mode::kReadOnly);

  for (Mode wider : {Mode::kWorkspaceWrite, Mode::kDangerFullAccess}) {
    RunRequest flag = request;
    flag.overrides.mode = wider;
    flag.overrides.acknowledge_danger = true;
    Error error = Refusal(flag);
    EXPECT_EQ(error.code(), "profile_widened") << ModeName(wider);
    EXPECT_THAT(error.message(), HasSubstr("--mode " + std::string(ModeName(wider))));

    RunRequest session = request;
    session.session_id = NewSession(ws, wider);
    EXPECT_EQ(Refusal(session).code(), "profile_widened") << ModeName(wider);
  }

  // Narrowing a writable profile is fine.
  RunRequest narrow = request_;
  narrow.profile = Profile(ws, "");
  narrow.overrides.mode = Mode::kReadOnly;
  EXPECT_EQ(Resolve(narrow).spec.mode, Mode::kReadOnly);
}

// A preset (the flag or the user file's) is the user's default: the project
// file may narrow its mode and approval, never widen them.
TEST_F(RequestTest, AProjectFileCannotWidenThePreset) {
  std::string ws = tree_.Dir("ws");
  RunRequest request = request_;
  request.overrides.workspace = ws;
  request.preset = "safe";
  Project(ws, "mode = \"workspace-write\"\n");
  Error mode = Refusal(request);
  EXPECT_EQ(mode.code(), "config_project_widens");
  EXPECT_THAT(mode.message(), HasSubstr("the preset \"safe\""));

  request.preset.reset();
  User("[approval]\npreset = \"review\"\n");
  Project(ws, "[approval]\npolicy = \"ask-dangerous\"\n");
  Error approval = Refusal(request);
  EXPECT_EQ(approval.code(), "config_project_widens");
  EXPECT_THAT(approval.message(), HasSubstr("the preset \"review\""));

  // Narrower than the preset is fine.
  Project(ws, "[approval]\npolicy = \"deny-all\"\n");
  EXPECT_EQ(Resolve(request).approval, ApprovalPolicy::kDenyAll);
}

// A config file's bad path is reported at its file, line and key, not as a
// flag the user never typed.
TEST_F(RequestTest, ABadPathInAConfigFileNamesTheFileLineAndKey) {
  std::string missing = tree_.Join("missing");
  User("[sandbox]\nallow_read = [\"" + missing + "\"]\n");
  Error error = Refusal(request_);
  EXPECT_EQ(error.kind(), ErrorKind::kConfig);
  EXPECT_EQ(error.code(), "config_bad_value");
  EXPECT_THAT(error.message(), HasSubstr(*request_.user_config + ":2:"));
  EXPECT_THAT(error.message(), HasSubstr("sandbox.allow_read"));
  EXPECT_THAT(error.message(), HasSubstr("no such file"));

  std::string real = tree_.Dir("real");
  std::string link = tree_.Join("link");
  ASSERT_EQ(::symlink(real.c_str(), link.c_str()), 0);
  User("[sandbox]\nworkspace_root = \"" + link + "\"\n");
  Error through = Refusal(request_);
  EXPECT_EQ(through.code(), "config_bad_value");
  EXPECT_THAT(through.message(), HasSubstr("sandbox.workspace_root"));
  EXPECT_THAT(through.message(), HasSubstr("symlink"));
}

// Each config file's path grants are passed on as its own, so the policy can
// say where a grant came from; a path a flag names too is the flag's.
TEST_F(RequestTest, TheConfigFilesGrantsAreRecordedAsTheirs) {
  std::string workspace = tree_.Dir("ws");
  std::string data = tree_.Dir("data");
  std::string tools = tree_.Dir("tools");
  std::string build = tree_.Dir("ws/build");
  User("[sandbox]\nallow_read = [\"" + data + "\"]\nallow_exec = [\"" + tools + "\"]\n");
  Project(workspace, "allow_write = [\"build\"]\n");
  RunRequest request = request_;
  request.overrides.workspace = workspace;
  request.overrides.allow_read = {tools};
  ResolvedRequest resolved = Resolve(request);
  EXPECT_THAT(resolved.spec.user_config_grants, ElementsAre(data));
  EXPECT_THAT(resolved.spec.project_config_grants, ElementsAre(build));
  EXPECT_THAT(resolved.spec.allow_read, ElementsAre(data, tools));
}

// A grant flag's leading "~" is the home, as a config file's is; "~user" is
// refused; the same flag on the same path twice is a usage error, on two
// flags it is not.
TEST_F(RequestTest, GrantFlagsExpandTheHomeAndNameAPathOncePerFlag) {
  RunRequest request = request_;
  request.overrides.allow_exec = {"~/.nvm", "~"};
  request.overrides.forbid_read = {"~/.env"};  // a pattern: BuildPolicy expands it
  ResolvedRequest resolved = Resolve(request);
  EXPECT_THAT(resolved.spec.allow_exec, ElementsAre(host_.home + "/.nvm", host_.home));
  EXPECT_THAT(resolved.spec.forbid_read, ElementsAre("~/.env"));

  request.overrides.allow_exec = {"~bob/.nvm"};
  Error other = Refusal(request);
  EXPECT_EQ(other.kind(), ErrorKind::kUsage);
  EXPECT_EQ(other.message(), "--allow-exec ~bob/.nvm: \"~user\" paths are not supported; use an absolute path or ~/");

  request.overrides.allow_exec = {"/opt/tool", "/opt//tool/"};
  Error twice = Refusal(request);
  EXPECT_EQ(twice.kind(), ErrorKind::kUsage);
  EXPECT_EQ(twice.message(), "--allow-exec /opt//tool/: given twice; write a flag once per path");

  request.overrides.allow_exec = {"/opt/tool"};
  request.overrides.allow_write = {"/opt/tool"};
  EXPECT_TRUE(ResolveRequest(request, host_).ok());
}

TEST_F(RequestTest, AnUnknownSessionIsAnError) {
  RunRequest request = request_;
  request.session_id = "no-such-session";
  EXPECT_FALSE(ResolveRequest(request, host_).ok());
}

}  // namespace
}  // namespace corral
