// The policy layer end to end through the `corral` binary: modes,
// forbid_read, config files, danger-full-access, sessions, presets, the
// approval and escalation gates on a terminal, profiles with a Gated
// dimension, and `corral explain`. Every denial is judged from outside: a
// file absent on the host, a secret's bytes absent from the output, a host
// listener that got no connection, no `spawned` record in the audit trail.
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include <filesystem>

#include "harness.h"

namespace corral_it {
namespace {

// The exit codes corral uses for its own refusals (src/base/exit_codes.h).
constexpr int kExitUsage = 64;
constexpr int kExitPolicy = 77;
constexpr int kExitConfig = 78;
constexpr int kExitSandbox = 125;

// The line a read-only denial adds to stderr: the model-facing marker and the
// escalation hint.
constexpr char kReadOnlyDenialLine[] =
    "[sandbox: file access denied under read-only mode] You may retry this call with sandbox_permissions set to "
    "workspace-write or danger-full-access together with a justification saying why it needs that access; a person "
    "will be asked to approve it for that one call.";

// The end of every question the terminal approver asks, as the master shows
// it (the terminal turns LF into CR LF).
constexpr char kPrompt[] = "for the rest of this run\r\n> ";

size_t Count(const std::string& text, const std::string& needle) {
  size_t count = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++count;
  return count;
}

class PolicyLayer : public SandboxTest {
 protected:
  std::string UserConfig() const { return config_ / "corral/config.toml"; }
  void WriteUserConfig(const std::string& toml) const { config_.Write("corral/config.toml", toml); }
  void WriteProjectConfig(const std::string& toml) const { workspace_.Write("corral.toml", toml); }

  // A refusal before anything ran: `code`, a `corral:` line, the canary the
  // command would have made is absent, and the trail has no `spawned` record.
  void ExpectNothingRan(const Outcome& outcome, int code) {
    EXPECT_EQ(outcome.exit_code, code) << outcome.Describe();
    EXPECT_NE(outcome.err.find("corral: "), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(workspace_ / "canary"));
    EXPECT_EQ(AuditEvents("spawned").size(), 0u) << ReadFile(audit_path()).value_or("");
  }

  // A project corral.toml holding `toml` stops the run before anything ran,
  // with an error at `where` ("LINE:COLUMN: KEY: ") in that file.
  void ExpectProjectRefused(const std::string& toml, const std::string& where) {
    WriteProjectConfig(toml);
    Outcome outcome = RunIn({}, {"touch", "canary"});
    ExpectNothingRan(outcome, kExitConfig);
    EXPECT_NE(outcome.err.find("corral: " + workspace_ / "corral.toml:" + where), std::string::npos)
        << outcome.Describe();
  }

  // `cat` of two files: the workspace's .env and sub/.env, each holding a secret.
  Outcome CatEnvFiles(const std::vector<std::string>& grants, std::string* top, std::string* nested) {
    *top = RandomToken("TOPSECRET");
    *nested = RandomToken("NESTEDSECRET");
    workspace_.Write(".env", *top);
    workspace_.Write("sub/.env", *nested);
    workspace_.Write("visible.txt", "visible");
    return RunIn(grants, {"cat", ".env", "sub/.env", "visible.txt"});
  }
  void ExpectEnvHidden(const Outcome& outcome, const std::string& top, const std::string& nested) {
    EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_EQ(outcome.out.find(top), std::string::npos) << outcome.Describe();
    EXPECT_EQ(outcome.out.find(nested), std::string::npos) << outcome.Describe();
    EXPECT_NE(outcome.out.find("visible"), std::string::npos) << outcome.Describe();  // the rest is readable
  }

  // Runs `argv` with `pty` as corral's controlling terminal. When `answer` is
  // given, waits for the question and types the answer; either way, returns
  // once corral has exited, with everything the terminal showed in `pty`.
  Outcome OnTerminal(Pty& pty, const std::vector<std::string>& argv, const std::optional<std::string>& answer) {
    SpawnOptions options = Defaults({});
    options.controlling_tty = pty.slave();
    Process process(argv, options);
    if (answer) {
      bool asked = WaitFor([&] { return pty.Transcript().find(kPrompt) != std::string::npos || !process.Running(); },
                           30s);
      EXPECT_TRUE(asked);
      if (pty.Transcript().find(kPrompt) != std::string::npos) pty.Type(*answer + "\n");
    }
    Outcome outcome = process.Wait();
    pty.Transcript(100ms);
    return outcome;
  }

  // `corral session new --cwd DIR`: the id it printed.
  std::string NewSession(const std::string& cwd) {
    Outcome outcome = Corral({"session", "new", "--cwd", cwd});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_FALSE(outcome.out.empty());
    return outcome.out.substr(0, outcome.out.find('\n'));
  }
  std::string SessionLog(const std::string& id) const { return state_ / ("corral/sessions/" + id + ".jsonl"); }

  // `corral explain --json ARGS -- true`, parsed.
  nlohmann::json ExplainJson(const std::vector<std::string>& args) {
    std::vector<std::string> all = {"explain", "--json"};
    all.insert(all.end(), args.begin(), args.end());
    all.insert(all.end(), {"--", "true"});
    Outcome outcome = Corral(all);
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    return nlohmann::json::parse(outcome.out);
  }

  // A [profile] file granting the workspace, with `extra` lines appended.
  std::string WriteProfile(const std::string& extra) const {
    outside_.Write("profile.toml", "[profile]\nworkspace_root = \"" + workspace_.path() +
                                       "\"\nworkspace_read = \"allow\"\nworkspace_write = \"allow\"\n" + extra);
    return outside_ / "profile.toml";
  }
};

// --- Modes -----------------------------------------------------------------

TEST_F(PolicyLayer, ReadOnlyModeDeniesAWorkspaceWriteWithTheMarker) {
  Outcome outcome = RunIn({"--mode", "read-only"}, {"touch", "canary"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));
  EXPECT_EQ(Count(outcome.err, "[sandbox: "), 1u) << outcome.Describe();
  EXPECT_NE(outcome.err.find(std::string("\n") + kReadOnlyDenialLine + "\n"), std::string::npos) << outcome.Describe();
  std::vector<nlohmann::json> exited = AuditEvents("exited");
  ASSERT_EQ(exited.size(), 1u) << ReadFile(audit_path()).value_or("");
  EXPECT_EQ(exited[0]["denied"], "read-only");
  EXPECT_EQ(AuditEvents("spawned").at(0)["mode"], "read-only");
}

TEST_F(PolicyLayer, WorkspaceWriteModeAllowsTheSameWrite) {
  Outcome outcome = RunIn({"--mode", "workspace-write"}, {"touch", "canary"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
  EXPECT_EQ(outcome.err.find("[sandbox: "), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(AuditEvents("exited").at(0).contains("denied"));
}

// --- forbid_read -------------------------------------------------------------

TEST_F(PolicyLayer, ForbidReadFlagHidesDotEnvInsideTheWorkspace) {
  std::string top, nested;
  Outcome outcome = CatEnvFiles({"--forbid-read", "**/.env"}, &top, &nested);
  ExpectEnvHidden(outcome, top, nested);
}

TEST_F(PolicyLayer, ForbidReadInTheProjectConfigHidesDotEnv) {
  WriteProjectConfig("[sandbox]\nforbid_read = [\"**/.env\"]\n");
  std::string top, nested;
  Outcome outcome = CatEnvFiles({}, &top, &nested);
  ExpectEnvHidden(outcome, top, nested);
}

TEST_F(PolicyLayer, ControlWithoutForbidReadDotEnvIsReadable) {
  std::string top, nested;
  Outcome outcome = CatEnvFiles({}, &top, &nested);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_NE(outcome.out.find(top), std::string::npos);
  EXPECT_NE(outcome.out.find(nested), std::string::npos);
}

// --- Config files ------------------------------------------------------------

TEST_F(PolicyLayer, ProjectConfigThatOpensTheNetworkIsRefused) {
  ExpectProjectRefused("[sandbox]\n# the repository asks for more than the user gave\nnetwork = true\n",
                       "3:1: sandbox.network: ");
}

TEST_F(PolicyLayer, UserConfigGivenWithConfigOpensTheNetwork) {
  outside_.Write("user.toml", "[sandbox]\nnetwork = true\n");
  Listener listener = Listener::Tcp();
  Outcome outcome = Probe("tcp_connect", {std::to_string(listener.port())}, {"--config", outside_ / "user.toml"});
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe();
  EXPECT_TRUE(listener.GotSomething());
}

// corral's own state (the user config, sessions, quarantine, compiled
// policies) decides what the next run may do, so no run may write it: a
// writable grant that holds it is refused before anything runs...
TEST_F(PolicyLayer, CorralsOwnStateInsideAWritableGrantIsRefused) {
  SpawnOptions options;
  options.env["XDG_CONFIG_HOME"] = workspace_ / ".config";
  workspace_.Mkdir(".config");
  Outcome outcome = RunIn({}, {"sh", "-c",
                               "touch canary; mkdir -p .config/corral && "
                               "echo 'sandbox.network = true' > .config/corral/config.toml"},
                          options);
  ExpectNothingRan(outcome, kExitPolicy);
  EXPECT_NE(outcome.err.find("corral's own state"), std::string::npos) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / ".config/corral"));
}

// A grant inside corral's own state (the sweep journal, the sessions) would
// be a way in past the masks: refused whatever its access, and nothing runs.
TEST_F(PolicyLayer, AGrantInsideCorralsOwnStateIsRefused) {
  std::string pending = state_.path() + "/corral/pending";
  std::filesystem::create_directories(pending);
  std::filesystem::create_directories(state_.path() + "/corral/sessions");
  for (const std::vector<std::string>& grant :
       {std::vector<std::string>{"--allow-write", pending},
        std::vector<std::string>{"--allow-read", state_.path() + "/corral/sessions"}}) {
    Outcome outcome = RunIn(grant, {"sh", "-c", "touch canary; echo A > " + pending + "/slot-9.json"});
    ExpectNothingRan(outcome, kExitPolicy);
    EXPECT_NE(outcome.err.find("inside corral's own state"), std::string::npos) << outcome.Describe();
    EXPECT_FALSE(Exists(pending + "/slot-9.json"));
  }
}

// A writable file holds no protected names: nothing is swept, the run is clean.
TEST_F(PolicyLayer, AWritableFileGrantSweepsNothing) {
  outside_.Write("notes.txt", "before\n");
  Outcome outcome = RunIn({"--allow-write", outside_ / "notes.txt"}, {"sh", "-c", "echo after > " + outside_ / "notes.txt"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(ReadFile(outside_ / "notes.txt").value_or(""), "after\n");
  EXPECT_EQ(outcome.err.find("protected"), std::string::npos) << outcome.Describe();
}

// ...and a read grant that holds it shows it as "permission denied": a
// session log or a quarantined file is not the command's to read.
TEST_F(PolicyLayer, CorralsOwnStateInsideAReadGrantIsHidden) {
  std::string token = RandomToken("OWNSTATE");
  outside_.Write("state/corral/sessions/s.jsonl", token + "\n");
  SpawnOptions options;
  options.env["XDG_STATE_HOME"] = outside_ / "state";
  Outcome outcome =
      RunIn({"--allow-read", outside_.path()}, {"cat", outside_ / "state/corral/sessions/s.jsonl"}, options);
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out.find(token), std::string::npos) << outcome.Describe();
  // Control: the same file outside corral's state is readable.
  outside_.Write("state/other/s.jsonl", token + "\n");
  Outcome control = RunIn({"--allow-read", outside_.path()}, {"cat", outside_ / "state/other/s.jsonl"}, options);
  EXPECT_NE(control.out.find(token), std::string::npos) << control.Describe();
}

TEST_F(PolicyLayer, NoConfigIgnoresTheUserAndTheProjectFiles) {
  WriteUserConfig("[sandbox]\nnetwork = true\n");
  WriteProjectConfig("[sandbox]\nforbid_read = [\".env\"]\n");
  std::string secret = RandomToken("DOTENV");
  workspace_.Write(".env", secret);
  Listener listener = Listener::Tcp();
  std::string port = std::to_string(listener.port());

  // With both files: the network is open and .env is hidden.
  Outcome with = Probe("tcp_connect", {port});
  EXPECT_EQ(with.exit_code, kProbeEscaped) << with.Describe();
  EXPECT_TRUE(listener.GotSomething());
  with = RunIn({}, {"cat", ".env"});
  EXPECT_EQ(with.out.find(secret), std::string::npos) << with.Describe();

  // --no-config: neither applies.
  EXPECT_PROBE_BLOCKED(Probe("tcp_connect", {port}, {"--no-config"}));
  EXPECT_FALSE(listener.GotSomething());
  Outcome without = RunIn({"--no-config"}, {"cat", ".env"});
  EXPECT_EQ(without.exit_code, 0) << without.Describe();
  EXPECT_EQ(without.out, secret);
}

TEST_F(PolicyLayer, ProjectConfigCannotWidenTheUsersMode) {
  WriteUserConfig("[sandbox]\nmode = \"read-only\"\n");
  ExpectProjectRefused("[sandbox]\nmode = \"workspace-write\"\n", "2:1: sandbox.mode: ");
}

// The user's preset is the user's mode: a project that asks for a wider one
// is refused at its file and line, and nothing runs.
TEST_F(PolicyLayer, ProjectConfigCannotWidenTheUsersPreset) {
  WriteUserConfig("[approval]\npreset = \"safe\"\n");
  ExpectProjectRefused("[sandbox]\nmode = \"workspace-write\"\n", "2:1: sandbox.mode: ");
}

TEST_F(PolicyLayer, ProjectForbidReadIsUnionedWithTheUsers) {
  WriteUserConfig("[sandbox]\nforbid_read = [\"**/.env\"]\n");
  WriteProjectConfig("[sandbox]\nforbid_read = [\"**/*.pem\"]\n");
  std::string env = RandomToken("ENVSECRET"), pem = RandomToken("PEMSECRET");
  workspace_.Write(".env", env);
  workspace_.Write("keys/server.pem", pem);
  workspace_.Write("visible.txt", "visible");
  Outcome outcome = RunIn({}, {"cat", ".env", "keys/server.pem", "visible.txt"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out.find(env), std::string::npos) << outcome.Describe();
  EXPECT_EQ(outcome.out.find(pem), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.out.find("visible"), std::string::npos) << outcome.Describe();
}

// sandbox.backend in the user config: `corral run` is the native runner, so
// it runs under "auto" and "native", fails closed under "unavailable", and
// refuses an argv-building backend instead of quietly running natively.
TEST_F(PolicyLayer, RunFailsUnderAnUnavailableBackendFromTheUserConfig) {
  WriteUserConfig("[sandbox]\nbackend = \"unavailable\"\n");
  Outcome outcome = RunIn({}, {"touch", "canary"});
  ExpectNothingRan(outcome, kExitSandbox);
  EXPECT_NE(outcome.err.find("corral: no usable sandbox backend"), std::string::npos) << outcome.Describe();
  std::vector<nlohmann::json> failed = AuditEvents("failed");
  ASSERT_EQ(failed.size(), 1u) << ReadFile(audit_path()).value_or("");
  EXPECT_EQ(failed[0]["code"], "SANDBOX_UNAVAILABLE");
  EXPECT_EQ(failed[0]["reason"], "unsupported");
  EXPECT_EQ(failed[0]["source"], "corral");
  // Even danger-full-access, which would run unconfined, does not run.
  Outcome danger = RunIn({"--mode", "danger-full-access", "--i-understand-danger-full-access"}, {"touch", "canary"});
  ExpectNothingRan(danger, kExitSandbox);
}

TEST_F(PolicyLayer, RunRefusesAnArgvBackendFromTheUserConfigAndNamesWrap) {
  for (const std::string backend : {"bubblewrap", "seatbelt"}) {
    WriteUserConfig("[sandbox]\nbackend = \"" + backend + "\"\n");
    Outcome outcome = RunIn({}, {"touch", "canary"});
    ExpectNothingRan(outcome, kExitSandbox);
    EXPECT_NE(outcome.err.find("corral wrap --backend " + backend), std::string::npos) << outcome.Describe();
    std::vector<nlohmann::json> failed = AuditEvents("failed");
    ASSERT_EQ(failed.size(), 1u) << ReadFile(audit_path()).value_or("");
    EXPECT_EQ(failed[0]["code"], "backend_not_runnable");
  }
}

TEST_F(PolicyLayer, RunUnderANativeOrAutoBackendFromTheUserConfig) {
  for (const std::string backend : {"native", "auto"}) {
    WriteUserConfig("[sandbox]\nbackend = \"" + backend + "\"\n");
    Outcome outcome = RunIn({}, {"touch", "canary-" + backend});
    EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
    EXPECT_TRUE(Exists(workspace_ / ("canary-" + backend)));
  }
}

// --- danger-full-access ------------------------------------------------------

TEST_F(PolicyLayer, DangerFullAccessWithoutTheAcknowledgementRunsNothing) {
  Outcome outcome = RunIn({"--mode", "danger-full-access"}, {"touch", "canary"});
  ExpectNothingRan(outcome, kExitPolicy);
  EXPECT_NE(outcome.err.find("--i-understand-danger-full-access"), std::string::npos) << outcome.Describe();
}

TEST_F(PolicyLayer, AcknowledgedDangerFullAccessRunsUnconfinedAndIsAudited) {
  std::string secret = RandomToken("OUTSIDE");
  outside_.Write("secret.txt", secret);
  Outcome outcome = RunIn({"--mode", "danger-full-access", "--i-understand-danger-full-access"},
                          {"cat", outside_ / "secret.txt"});
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_EQ(outcome.out, secret);
  std::vector<nlohmann::json> spawned = AuditEvents("spawned");
  ASSERT_EQ(spawned.size(), 1u) << ReadFile(audit_path()).value_or("");
  EXPECT_EQ(spawned[0]["unconfined"], true);
  EXPECT_EQ(spawned[0]["level"], "none");
  EXPECT_EQ(spawned[0]["mode"], "danger-full-access");
  // Who acknowledged it, and through which layer the mode came.
  std::vector<nlohmann::json> acknowledged = AuditEvents("acknowledged");
  ASSERT_EQ(acknowledged.size(), 1u) << ReadFile(audit_path()).value_or("");
  EXPECT_EQ(acknowledged[0]["by"], "flag");
  EXPECT_EQ(acknowledged[0]["mode_layer"], "override");
}

// --- Sessions ----------------------------------------------------------------

TEST_F(PolicyLayer, SessionModeDecidesAndTheFlagOverridesItForOneCall) {
  std::string id = NewSession(workspace_.path());
  EXPECT_TRUE(Exists(SessionLog(id)));
  Outcome recorded = Corral({"session", "mode", id, "read-only"});
  ASSERT_EQ(recorded.exit_code, 0) << recorded.Describe();

  Outcome denied = RunIn({"--session", id}, {"touch", "f"});
  EXPECT_NE(denied.exit_code, 0) << denied.Describe();
  EXPECT_FALSE(Exists(workspace_ / "f"));
  EXPECT_EQ(AuditEvents("spawned").at(0)["mode"], "read-only");

  Outcome overridden = RunIn({"--session", id, "--mode", "workspace-write"}, {"touch", "f"});
  EXPECT_EQ(overridden.exit_code, 0) << overridden.Describe();
  EXPECT_TRUE(Exists(workspace_ / "f"));

  // The override was for that one call: the session is still read-only.
  Outcome again = RunIn({"--session", id}, {"touch", "g"});
  EXPECT_NE(again.exit_code, 0) << again.Describe();
  EXPECT_FALSE(Exists(workspace_ / "g"));
}

TEST_F(PolicyLayer, SessionCwdIsTheWorkspaceFromAnotherDirectory) {
  std::string id = NewSession(workspace_.path());
  SpawnOptions elsewhere;
  elsewhere.cwd = outside_.path();
  Outcome outcome = RunIn({"--session", id}, {"sh", "-c", "touch " + workspace_ / "in; touch " + outside_ / "out"},
                          elsewhere);
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "in"));    // the session's cwd is the writable workspace
  EXPECT_FALSE(Exists(outside_ / "out"));  // the working directory is not
}

TEST_F(PolicyLayer, CorruptInteriorSessionLineIsRefusedWithFileAndLine) {
  std::string id = NewSession(workspace_.path());
  ASSERT_EQ(Corral({"session", "mode", id, "workspace-write"}).exit_code, 0);
  std::string log = ReadFile(SessionLog(id)).value_or("");
  size_t first_end = log.find('\n');
  ASSERT_NE(first_end, std::string::npos);
  WriteFile(SessionLog(id), log.substr(0, first_end + 1) + "{not json\n" + log.substr(first_end + 1), 0600);

  Outcome outcome = RunIn({"--session", id}, {"touch", "canary"});
  ExpectNothingRan(outcome, kExitConfig);
  EXPECT_NE(outcome.err.find(SessionLog(id) + ":2: "), std::string::npos) << outcome.Describe();
}

// Only a last line without its newline is torn; reading drops it and leaves
// the bytes alone, and the next append cuts it. A garbage line that ends in a
// newline is corrupt even when it is the last one.
TEST_F(PolicyLayer, ReadingASessionNeverChangesItsLog) {
  std::string id = NewSession(workspace_.path());
  ASSERT_EQ(Corral({"session", "mode", id, "read-only"}).exit_code, 0);
  std::string complete = ReadFile(SessionLog(id)).value_or("");
  std::string torn = complete + R"({"v":1,"type":"sandbox/mode","ts":"2026)";
  WriteFile(SessionLog(id), torn, 0600);

  Outcome show = Corral({"session", "show", id, "--json"});
  EXPECT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_NE(show.out.find("\"read-only\""), std::string::npos) << show.Describe();
  EXPECT_EQ(ExplainJson({"--session", id})["resolution"]["mode"], "read-only");
  Outcome ran = RunIn({"--session", id}, {"true"});
  EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
  EXPECT_EQ(ReadFile(SessionLog(id)).value_or(""), torn);

  ASSERT_EQ(Corral({"session", "mode", id, "workspace-write"}).exit_code, 0);
  std::string appended = ReadFile(SessionLog(id)).value_or("");
  EXPECT_EQ(appended.substr(0, complete.size()), complete);
  EXPECT_EQ(std::count(appended.begin(), appended.end(), '\n'), 3) << appended;
  EXPECT_EQ(ExplainJson({"--session", id})["resolution"]["mode"], "workspace-write");

  std::string garbage = appended + "garbage\n";
  WriteFile(SessionLog(id), garbage, 0600);
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"session", "show", id}, {"explain", "--session", id, "--", "true"}}) {
    Outcome refused = Corral(args);
    EXPECT_EQ(refused.exit_code, kExitConfig) << refused.Describe();
    EXPECT_NE(refused.err.find(SessionLog(id) + ":4: "), std::string::npos) << refused.Describe();
  }
  EXPECT_EQ(ReadFile(SessionLog(id)).value_or(""), garbage);
}

TEST_F(PolicyLayer, WorldWritableSessionLogIsRefused) {
  std::string id = NewSession(workspace_.path());
  ASSERT_EQ(::chmod(SessionLog(id).c_str(), 0666), 0);
  Outcome outcome = RunIn({"--session", id}, {"touch", "canary"});
  ExpectNothingRan(outcome, kExitConfig);
  EXPECT_NE(outcome.err.find(SessionLog(id)), std::string::npos) << outcome.Describe();
  EXPECT_NE(outcome.err.find("chmod 600"), std::string::npos) << outcome.Describe();
}

// --- Presets -----------------------------------------------------------------

TEST_F(PolicyLayer, SafePresetRunsReadOnly) {
  Outcome outcome = RunIn({"--preset", "safe"}, {"touch", "canary"});
  EXPECT_NE(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_FALSE(Exists(workspace_ / "canary"));
  EXPECT_EQ(AuditEvents("spawned").at(0)["mode"], "read-only");
  EXPECT_NE(outcome.err.find(kReadOnlyDenialLine), std::string::npos) << outcome.Describe();
}

TEST_F(PolicyLayer, ExplainReportsThePresetAndItsDerivedCustomState) {
  nlohmann::json review = ExplainJson({"--preset", "review"})["resolution"];
  EXPECT_EQ(review["approval"], "ask-dangerous-tool-edit");
  EXPECT_EQ(review["approval_source"], "preset");
  EXPECT_EQ(review["mode"], "read-only");
  EXPECT_EQ(review["preset"], "review: read-only + ask-dangerous-tool-edit");

  nlohmann::json derived = ExplainJson({"--preset", "review", "--mode", "workspace-write"})["resolution"];
  EXPECT_EQ(derived["mode"], "workspace-write");
  EXPECT_EQ(derived["mode_layer"], "override");
  EXPECT_EQ(derived["approval"], "ask-dangerous-tool-edit");
  EXPECT_TRUE(derived["preset"].get<std::string>().starts_with("custom (derived from review; mode overridden)"))
      << derived;
}

// --- Approval on a terminal ----------------------------------------------------

class TerminalGate : public PolicyLayer {
 protected:
  TerminalGate() { workspace_.Write("x/file", "keep me"); }

  std::vector<std::string> RmArgv() { return RunArgv({"--approval", "ask-dangerous"}, {"rm", "-rf", "x"}); }
  void ExpectApproval(const std::string& outcome) {
    std::vector<nlohmann::json> records = AuditEvents("approval");
    ASSERT_EQ(records.size(), 1u) << ReadFile(audit_path()).value_or("");
    EXPECT_EQ(records[0]["outcome"], outcome);
    EXPECT_EQ(records[0]["policy"], "ask-dangerous");
  }

  Pty pty_;
};

TEST_F(TerminalGate, DangerousCommandRefusedAtThePromptRunsNothing) {
  Outcome outcome = OnTerminal(pty_, RmArgv(), "n");
  EXPECT_EQ(outcome.exit_code, kExitPolicy) << outcome.Describe() << pty_.Transcript();
  EXPECT_NE(pty_.Transcript().find("corral: approve command: rm -rf x?"), std::string::npos) << pty_.Transcript();
  EXPECT_TRUE(Exists(workspace_ / "x/file"));
  EXPECT_EQ(AuditEvents("spawned").size(), 0u);
  ExpectApproval("denied");
}

TEST_F(TerminalGate, DangerousCommandApprovedAtThePromptRuns) {
  Outcome outcome = OnTerminal(pty_, RmArgv(), "y");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe() << pty_.Transcript();
  EXPECT_FALSE(Exists(workspace_ / "x"));
  ExpectApproval("allowed");
}

TEST_F(TerminalGate, WithNoTerminalTheDangerousCommandIsDenied) {
  SpawnOptions options = Defaults({});
  options.new_session = true;  // no controlling terminal: /dev/tty cannot be opened
  Outcome outcome = Execute(RmArgv(), options);
  EXPECT_EQ(outcome.exit_code, kExitPolicy) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "x/file"));
  EXPECT_EQ(AuditEvents("spawned").size(), 0u);
  ExpectApproval("denied");
}

// A policy file `corral wrap` wrote for a command the gate let through
// admits that command only: the dangerous one the gate refuses cannot ride
// on it by being put after the file's `--`. Judged from outside: x/file is
// still there, and the wrapped command itself (the control) runs.
TEST_F(TerminalGate, APolicyFileRunsOnlyTheCommandItWasWrappedFor) {
  SpawnOptions options;
  options.new_session = true;  // no terminal: the gate cannot ask, so it denies
  Outcome wrapped = Corral({"wrap", "--json", "--backend", "native", "--approval", "ask-dangerous", "--", "ls"},
                           options);
  ASSERT_EQ(wrapped.exit_code, 0) << wrapped.Describe();
  std::vector<std::string> argv = nlohmann::json::parse(wrapped.out)["argv"];
  auto separator = std::find(argv.begin(), argv.end(), "--");
  ASSERT_NE(separator, argv.end());
  std::vector<std::string> other(argv.begin(), separator + 1);
  other.insert(other.end(), {"rm", "-rf", "x"});
  Outcome refused = Execute(other, Defaults(options));
  EXPECT_EQ(refused.exit_code, kExitPolicy) << refused.Describe();
  EXPECT_NE(refused.err.find("compiled for another command"), std::string::npos) << refused.Describe();
  EXPECT_TRUE(Exists(workspace_ / "x/file"));
  Outcome control = Execute(argv, Defaults(options));
  EXPECT_EQ(control.exit_code, 0) << control.Describe();
  EXPECT_TRUE(Exists(workspace_ / "x/file"));
}

TEST_F(TerminalGate, ASafeCommandIsNotAskedAbout) {
  Outcome outcome = OnTerminal(pty_, RunArgv({"--approval", "ask-dangerous"}, {"touch", "canary"}), std::nullopt);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
  EXPECT_EQ(pty_.Transcript(), "");
  ExpectApproval("allowed");
}

// --- Escalation on a terminal --------------------------------------------------

class Escalation : public TerminalGate {
 protected:
  std::vector<std::string> EscalateArgv(const std::vector<std::string>& flags) {
    std::vector<std::string> grants = {"--mode", "read-only"};
    grants.insert(grants.end(), flags.begin(), flags.end());
    return RunArgv(grants, {"touch", "canary"});
  }
  std::vector<std::string> Justified() {
    return EscalateArgv({"--sandbox-permissions", "workspace-write", "--justification", "needs to write"});
  }
  void ExpectEscalation(const std::string& outcome) {
    std::vector<nlohmann::json> records = AuditEvents("escalation");
    ASSERT_EQ(records.size(), 1u) << ReadFile(audit_path()).value_or("");
    EXPECT_EQ(records[0]["outcome"], outcome);
    EXPECT_EQ(records[0]["from"], "read-only");
  }
};

TEST_F(Escalation, ApprovedRunsThisCallUnderTheWiderMode) {
  Outcome outcome = OnTerminal(pty_, Justified(), "y");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.Describe() << pty_.Transcript();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
  EXPECT_NE(pty_.Transcript().find("needs to write"), std::string::npos) << pty_.Transcript();
  ExpectEscalation("allowed-once");
  EXPECT_EQ(AuditEvents("spawned").at(0)["mode"], "workspace-write");
}

TEST_F(Escalation, RejectedRunsNothing) {
  Outcome outcome = OnTerminal(pty_, Justified(), "n");
  ExpectNothingRan(outcome, kExitPolicy);
  ExpectEscalation("rejected");
}

TEST_F(Escalation, WithNoTerminalItIsUnavailable) {
  SpawnOptions options = Defaults({});
  options.new_session = true;
  Outcome outcome = Execute(Justified(), options);
  ExpectNothingRan(outcome, kExitPolicy);
  ExpectEscalation("unavailable");
}

TEST_F(Escalation, WithoutAJustificationItIsAUsageErrorBeforeAnyoneIsAsked) {
  Outcome outcome = OnTerminal(pty_, EscalateArgv({"--sandbox-permissions", "workspace-write"}), std::nullopt);
  ExpectNothingRan(outcome, kExitUsage);
  EXPECT_EQ(pty_.Transcript(), "");
}

TEST_F(Escalation, ANarrowerTargetIsRefusedBeforeAnyoneIsAsked) {
  std::vector<std::string> argv = RunArgv(
      {"--mode", "workspace-write", "--sandbox-permissions", "read-only", "--justification", "why not"},
      {"touch", "canary"});
  Outcome outcome = OnTerminal(pty_, argv, std::nullopt);
  ExpectNothingRan(outcome, kExitPolicy);
  EXPECT_NE(outcome.err.find("not wider"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(pty_.Transcript(), "");
}

// --- Profiles with a Gated dimension -------------------------------------------

class GatedProfile : public TerminalGate {
 protected:
  GatedProfile() {
    // A copy of the probe inside the workspace: a profile takes no --allow-exec.
    workspace_.Write("tcp_connect", ReadFile(ProbePath("tcp_connect")).value_or(""), 0755);
  }
  void ExpectGrant(const std::string& outcome) {
    std::vector<nlohmann::json> records = AuditEvents("grant");
    ASSERT_EQ(records.size(), 1u) << ReadFile(audit_path()).value_or("");
    EXPECT_EQ(records[0]["dimension"], "network");
    EXPECT_EQ(records[0]["outcome"], outcome);
  }
};

TEST_F(GatedProfile, GrantedAtThePromptTheRunHasTheNetwork) {
  Listener listener = Listener::Tcp();
  std::string profile = WriteProfile("network = \"gated\"\ncommand = \"allow\"\n");
  Outcome outcome = OnTerminal(
      pty_, RunArgv({"--profile", profile}, {workspace_ / "tcp_connect", std::to_string(listener.port())}), "y");
  EXPECT_EQ(outcome.exit_code, kProbeEscaped) << outcome.Describe() << pty_.Transcript();
  EXPECT_TRUE(listener.GotSomething());
  EXPECT_NE(pty_.Transcript().find("grant network"), std::string::npos) << pty_.Transcript();
  ExpectGrant("issued");
  EXPECT_EQ(AuditEvents("spawned").at(0)["network"], "all");
}

TEST_F(GatedProfile, RefusedAtThePromptNothingRuns) {
  Listener listener = Listener::Tcp();
  std::string profile = WriteProfile("network = \"gated\"\ncommand = \"allow\"\n");
  Outcome outcome = OnTerminal(
      pty_,
      RunArgv({"--profile", profile},
              {"sh", "-c", "touch canary; " + workspace_ / "tcp_connect " + std::to_string(listener.port())}),
      "n");
  ExpectNothingRan(outcome, kExitPolicy);
  EXPECT_FALSE(listener.GotSomething());
  ExpectGrant("refused");
}

TEST_F(GatedProfile, CommandDenyRunsNothing) {
  std::string profile = WriteProfile("command = \"deny\"\n");
  Outcome outcome = OnTerminal(pty_, RunArgv({"--profile", profile}, {"touch", "canary"}), std::nullopt);
  ExpectNothingRan(outcome, kExitPolicy);
  EXPECT_NE(outcome.err.find("command = deny"), std::string::npos) << outcome.Describe();
  EXPECT_EQ(pty_.Transcript(), "");
}

TEST_F(GatedProfile, AProfileWithAGrantFlagIsAUsageError) {
  std::string profile = WriteProfile("command = \"allow\"\n");
  Outcome outcome = RunIn({"--profile", profile, "--allow-read", outside_.path()}, {"touch", "canary"});
  ExpectNothingRan(outcome, kExitUsage);
  EXPECT_NE(outcome.err.find("--profile"), std::string::npos) << outcome.Describe();
}

// --- corral explain ----------------------------------------------------------

TEST_F(PolicyLayer, ExplainJsonCarriesPolicyResolutionAndPlan) {
  std::string id = NewSession(workspace_.path());
  ASSERT_EQ(Corral({"session", "mode", id, "read-only"}).exit_code, 0);
  outside_.Write("user.toml", "[sandbox]\nforbid_read = [\"**/.env\"]\n[approval]\npolicy = \"ask-dangerous\"\n");
  nlohmann::json out = ExplainJson({"--session", id, "--config", outside_ / "user.toml"});

  EXPECT_EQ(out["command"], nlohmann::json::array({"true"}));
  const nlohmann::json& policy = out["policy"];
  EXPECT_EQ(policy["mode"], "read-only");
  EXPECT_EQ(policy["workspace"], workspace_.path());
  EXPECT_EQ(policy["network"], "none");
  EXPECT_EQ(policy["fingerprint"].get<std::string>().size(), 64u);
  EXPECT_NE(std::find(policy["forbid_read"].begin(), policy["forbid_read"].end(), "**/.env"),
            policy["forbid_read"].end())
      << policy["forbid_read"];

  const nlohmann::json& resolution = out["resolution"];
  EXPECT_EQ(resolution["mode"], "read-only");
  EXPECT_EQ(resolution["mode_layer"], "session");
  EXPECT_EQ(resolution["workspace_layer"], "session");
  EXPECT_EQ(resolution["session"], id);
  EXPECT_EQ(resolution["approval"], "ask-dangerous");
  EXPECT_EQ(resolution["approval_source"], "config");
  EXPECT_EQ(resolution["config_files"], nlohmann::json::array({outside_ / "user.toml"}));

  const nlohmann::json& plan = out["plan"];
  EXPECT_EQ(plan["level"], "full");
  for (const char* guarantee : {"process_boundary", "write_boundary", "read_boundary", "env_scrub", "network_boundary"}) {
    EXPECT_NE(std::find(plan["provided"].begin(), plan["provided"].end(), guarantee), plan["provided"].end())
        << guarantee;
  }
  ASSERT_FALSE(plan["report"].empty());
  for (const nlohmann::json& feature : plan["report"]) {
    EXPECT_TRUE(feature.contains("feature") && feature.contains("status") && feature.contains("detail")) << feature;
  }
  EXPECT_TRUE(out["refused"].is_null());
}

TEST_F(PolicyLayer, ExplainShowsTheBackendRunWouldUse) {
  EXPECT_EQ(ExplainJson({})["resolution"]["backend"], "auto");
  WriteUserConfig("[sandbox]\nbackend = \"native\"\n");
  EXPECT_EQ(ExplainJson({})["resolution"]["backend"], "native");

  // Under "unavailable", explain says `corral run` would refuse, and exits as it would.
  WriteUserConfig("[sandbox]\nbackend = \"unavailable\"\n");
  Outcome outcome = Corral({"explain", "--json", "--", "true"});
  EXPECT_EQ(outcome.exit_code, kExitSandbox) << outcome.Describe();
  nlohmann::json out = nlohmann::json::parse(outcome.out);
  EXPECT_EQ(out["resolution"]["backend"], "unavailable");
  EXPECT_TRUE(out["plan"].is_null());
  EXPECT_NE(out["refused"].get<std::string>().find("no usable sandbox backend"), std::string::npos) << out["refused"];
  Outcome text = Corral({"explain", "--", "true"});
  EXPECT_NE(text.out.find("\nbackend      unavailable"), std::string::npos) << text.Describe();
}

// A request refused before there is a policy: explain --json prints the same
// {"error": {...}} object as wrap --json, besides the stderr line.
TEST_F(PolicyLayer, ExplainJsonPrintsTheErrorWhenTheRequestIsRefused) {
  auto expect_error = [&](const std::vector<std::string>& flags, int code, const std::string& kind,
                          const std::string& needle) {
    std::vector<std::string> args = {"explain", "--json"};
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", "true"});
    Outcome outcome = Corral(args);
    EXPECT_EQ(outcome.exit_code, code) << outcome.Describe();
    EXPECT_NE(outcome.err.find("corral: "), std::string::npos) << outcome.Describe();
    nlohmann::json out = nlohmann::json::parse(outcome.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(out.is_object() && out["error"].is_object()) << outcome.Describe();
    EXPECT_EQ(out.size(), 1u) << out;
    EXPECT_EQ(out["error"]["kind"], kind) << out;
    EXPECT_TRUE(out["error"]["code"].is_string()) << out;
    EXPECT_NE(out["error"].value("message", "").find(needle), std::string::npos) << out;
    // The same shape `corral wrap --json` prints for the same request.
    std::vector<std::string> wrap_args = args;
    wrap_args[0] = "wrap";
    Outcome wrapped = Corral(wrap_args);
    EXPECT_EQ(wrapped.exit_code, code) << wrapped.Describe();
    EXPECT_EQ(nlohmann::json::parse(wrapped.out, nullptr, false), out) << wrapped.Describe();
  };
  expect_error({"--mode", "danger-full-access"}, kExitPolicy, "policy", "--i-understand-danger-full-access");

  outside_.Write("bad.toml", "[sandbox]\nnetwrk = true\n");
  expect_error({"--config", outside_ / "bad.toml"}, kExitConfig, "config", "sandbox.netwrk: unknown key");

  std::string id = NewSession(workspace_.path());
  ASSERT_EQ(Corral({"session", "mode", id, "read-only"}).exit_code, 0);
  std::string log = ReadFile(SessionLog(id)).value_or("");
  WriteFile(SessionLog(id), log.substr(0, log.find('\n') + 1) + "{not json\n" + log.substr(log.find('\n') + 1), 0600);
  expect_error({"--session", id}, kExitConfig, "config", SessionLog(id) + ":2: ");
}

TEST_F(PolicyLayer, ExplainTextSaysTheSame) {
  std::string id = NewSession(workspace_.path());
  ASSERT_EQ(Corral({"session", "mode", id, "read-only"}).exit_code, 0);
  outside_.Write("user.toml", "[approval]\npolicy = \"ask-dangerous\"\n");
  Outcome outcome = Corral({"explain", "--session", id, "--config", outside_ / "user.toml", "--", "true"});
  ASSERT_EQ(outcome.exit_code, 0) << outcome.Describe();
  nlohmann::json json = ExplainJson({"--session", id, "--config", outside_ / "user.toml"});
  for (const std::string& line : std::vector<std::string>{
           "policy       " + json["policy"]["fingerprint"].get<std::string>(),
        "mode         read-only (from the session " + id + ")", "approval     ask-dangerous (from config)",
        "config       " + outside_ / "user.toml", "workspace    " + workspace_.path(), "network      none",
        "level        full"}) {
    EXPECT_NE(outcome.out.find("\n" + line + "\n"), std::string::npos) << line << "\n" << outcome.out;
  }
  EXPECT_NE(outcome.out.find("\nguarantees   process_boundary, write_boundary"), std::string::npos) << outcome.out;
  for (const nlohmann::json& feature : json["plan"]["report"]) {
    EXPECT_NE(outcome.out.find(feature["detail"].get<std::string>()), std::string::npos) << feature;
  }
}

// --- Grant flags and where each grant came from -------------------------------

// The grant of `path` in explain --json's policy, or null.
nlohmann::json GrantOf(const nlohmann::json& explained, const std::string& path) {
  for (const nlohmann::json& grant : explained["policy"]["grants"]) {
    if (grant["path"] == path) return grant;
  }
  return nullptr;
}

// A grant a --config file wrote is the user config's, in the JSON and in the
// text; a flag naming the same path makes it the flag's.
TEST_F(PolicyLayer, ExplainNamesTheUserConfigAsTheOriginOfItsGrants) {
  outside_.Mkdir("data");
  outside_.Mkdir("tools");
  outside_.Write("user.toml", "[sandbox]\nallow_read = [\"" + outside_ / "data" + "\"]\nallow_exec = [\"" +
                                  outside_ / "tools" + "\"]\n");
  nlohmann::json out = ExplainJson({"--config", outside_ / "user.toml", "--allow-write", outside_ / "tools"});
  EXPECT_EQ(GrantOf(out, outside_ / "data"), nlohmann::json({{"path", outside_ / "data"}, {"access", "r"},
                                                             {"origin", "user-config"}, {"type", "directory"}}))
      << out["policy"]["grants"];
  EXPECT_EQ(GrantOf(out, outside_ / "tools")["origin"], "flag") << out["policy"]["grants"];
  EXPECT_EQ(GrantOf(out, outside_ / "tools")["access"], "rwx") << out["policy"]["grants"];
  EXPECT_EQ(GrantOf(out, workspace_.path())["origin"], "workspace") << out["policy"]["grants"];

  Outcome text = Corral({"explain", "--config", outside_ / "user.toml", "--", "true"});
  ASSERT_EQ(text.exit_code, 0) << text.Describe();
  // The grants section's line: "  ACCESS PATH ORIGIN".
  const std::string start = "\n  r    " + outside_ / "data";
  ASSERT_NE(text.out.find(start), std::string::npos) << text.out;
  std::string line = text.out.substr(text.out.find(start) + 1);
  line = line.substr(0, line.find('\n'));
  EXPECT_TRUE(line.ends_with(" user-config")) << line;
}

// The same flag naming the same path twice is a usage error naming both, and
// nothing runs; two flags on one path, or a flag repeating a config entry,
// combine.
TEST_F(PolicyLayer, TheSameGrantFlagTwiceOnOnePathIsAUsageError) {
  outside_.Mkdir("data");
  Outcome twice = RunIn({"--allow-read", outside_ / "data", "--allow-read", outside_ / "data/"}, {"touch", "canary"});
  ExpectNothingRan(twice, kExitUsage);
  EXPECT_NE(twice.err.find("corral: --allow-read " + outside_ / "data/" + ": given twice; write a flag once per path"),
            std::string::npos)
      << twice.Describe();

  nlohmann::json both = ExplainJson({"--allow-write", outside_ / "data", "--allow-exec", outside_ / "data"});
  EXPECT_EQ(GrantOf(both, outside_ / "data")["access"], "rwx") << both["policy"]["grants"];

  outside_.Write("user.toml", "[sandbox]\nallow_read = [\"" + outside_ / "data" + "\"]\n");
  nlohmann::json repeated = ExplainJson({"--config", outside_ / "user.toml", "--allow-read", outside_ / "data"});
  EXPECT_EQ(GrantOf(repeated, outside_ / "data")["origin"], "flag") << repeated["policy"]["grants"];
  Outcome ran = RunIn({"--config", outside_ / "user.toml", "--allow-read", outside_ / "data"}, {"touch", "canary"});
  EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
  EXPECT_TRUE(Exists(workspace_ / "canary"));
}

// A leading "~" in a grant flag is $HOME, as in a config file: the program
// in ~/tools runs; "~user" is refused and nothing runs.
TEST_F(PolicyLayer, ALeadingTildeInAGrantFlagIsTheHome) {
  TempDir home("corral-home");
  home.Write("tools/hello", "#!/bin/sh\necho hello from the home\n", 0755);
  SpawnOptions with_home;
  with_home.env["HOME"] = home.path();
  Outcome explained = Corral({"explain", "--json", "--allow-exec", "~/tools", "--allow-read", "~", "--", "true"},
                             with_home);
  ASSERT_EQ(explained.exit_code, 0) << explained.Describe();
  nlohmann::json out = nlohmann::json::parse(explained.out);
  EXPECT_EQ(GrantOf(out, home / "tools")["access"], "rx") << out["policy"]["grants"];
  EXPECT_EQ(GrantOf(out, home / "tools")["origin"], "flag") << out["policy"]["grants"];
  EXPECT_EQ(GrantOf(out, home.path())["access"], "r") << out["policy"]["grants"];

  std::vector<std::string> argv = RunArgv({"--allow-exec", "~/tools"}, {home / "tools/hello"});
  Outcome ran = Execute(argv, Defaults(with_home));
  EXPECT_EQ(ran.exit_code, 0) << ran.Describe();
  EXPECT_EQ(ran.out, "hello from the home\n") << ran.Describe();

  Outcome other = Execute(RunArgv({"--allow-exec", "~nobody/tools"}, {"touch", "canary"}), Defaults(with_home));
  ExpectNothingRan(other, kExitUsage);
  EXPECT_NE(other.err.find("corral: --allow-exec ~nobody/tools: \"~user\" paths are not supported"),
            std::string::npos)
      << other.Describe();
}

}  // namespace
}  // namespace corral_it
