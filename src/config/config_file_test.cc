#include "config/config_file.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

constexpr char kFile[] = "/p/corral.toml";

ConfigLayer Parse(const std::string& text, ConfigScope scope = ConfigScope::kUser) {
  Result<ConfigLayer> layer = ParseConfigText(text, ParseContext{kFile, scope, "/home/u"});
  EXPECT_TRUE(layer.ok()) << layer.error().message();
  return layer.ok() ? layer.value() : ConfigLayer{};
}

Error Refusal(const std::string& text, ConfigScope scope = ConfigScope::kUser) {
  Result<ConfigLayer> layer = ParseConfigText(text, ParseContext{kFile, scope, "/home/u"});
  EXPECT_FALSE(layer.ok()) << text;
  return layer.ok() ? Error(ErrorKind::kInternal, "accepted") : layer.error();
}

std::string Message(const std::string& text, ConfigScope scope = ConfigScope::kUser) {
  Error error = Refusal(text, scope);
  EXPECT_EQ(error.kind(), ErrorKind::kConfig) << error.message();
  return error.message();
}

std::vector<std::string> Values(const std::vector<Sourced<std::string>>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) out.push_back(item.value);
  return out;
}

TEST(ConfigFile, EmptyFileAndEmptyTablesSetNothing) {
  ConfigLayer layer = Parse("");
  EXPECT_FALSE(layer.mode);
  EXPECT_FALSE(layer.network);
  ConfigLayer tables = Parse("[sandbox]\n[approval]\n");
  EXPECT_FALSE(tables.mode);
  EXPECT_TRUE(tables.allow_read.empty());
}

TEST(ConfigFile, Mode) {
  EXPECT_EQ(Parse("[sandbox]\nmode = \"read-only\"\n").mode->value, Mode::kReadOnly);
  EXPECT_EQ(Parse("[sandbox]\nmode = \"workspace-write\"\n").mode->value, Mode::kWorkspaceWrite);
  EXPECT_EQ(Parse("[sandbox]\nmode = \"danger-full-access\"\n").mode->value, Mode::kDangerFullAccess);
  EXPECT_EQ(Message("[sandbox]\nmode = \"full\"\n"),
            "/p/corral.toml:2:1: sandbox.mode: \"full\" is not one of \"read-only\", \"workspace-write\", "
            "\"danger-full-access\"");
  EXPECT_EQ(Message("[sandbox]\nmode = 1\n"), "/p/corral.toml:2:1: sandbox.mode: expected a string, got integer");
}

TEST(ConfigFile, ModePositionIsTheKeys) {
  ConfigLayer layer = Parse("\n[sandbox]\n  mode = \"read-only\"\n");
  EXPECT_EQ(layer.mode->where.ToString(), "/p/corral.toml:3:3");
}

TEST(ConfigFile, BashOffIsDangerFullAccess) {
  ConfigLayer off = Parse("[sandbox]\nbash = \"off\"\n");
  EXPECT_EQ(off.bash->value, BashSetting::kOff);
  ASSERT_TRUE(off.EffectiveMode());
  EXPECT_EQ(off.EffectiveMode()->value, Mode::kDangerFullAccess);
  ConfigLayer enforce = Parse("[sandbox]\nbash = \"enforce\"\n");
  EXPECT_EQ(enforce.bash->value, BashSetting::kEnforce);
  EXPECT_FALSE(enforce.EffectiveMode());
  EXPECT_EQ(Message("[sandbox]\nbash = \"on\"\n"),
            "/p/corral.toml:2:1: sandbox.bash: \"on\" is not one of \"enforce\", \"off\"");
  EXPECT_EQ(Message("[sandbox]\nbash = false\n"), "/p/corral.toml:2:1: sandbox.bash: expected a string, got boolean");
}

TEST(ConfigFile, BashMustAgreeWithModeInOneFile) {
  EXPECT_EQ(Parse("[sandbox]\nbash = \"off\"\nmode = \"danger-full-access\"\n").EffectiveMode()->value,
            Mode::kDangerFullAccess);
  std::string off = Message("[sandbox]\nmode = \"read-only\"\nbash = \"off\"\n");
  EXPECT_EQ(off.rfind("/p/corral.toml:3:1: sandbox.bash: ", 0), 0U) << off;
  EXPECT_NE(off.find("contradicts mode = \"read-only\""), std::string::npos);
  std::string enforce = Message("[sandbox]\nbash = \"enforce\"\nmode = \"danger-full-access\"\n");
  EXPECT_EQ(enforce.rfind("/p/corral.toml:2:1: sandbox.bash: ", 0), 0U) << enforce;
}

TEST(ConfigFile, WorkspaceRoot) {
  EXPECT_EQ(Parse("[sandbox]\nworkspace_root = \"/src/app/\"\n").workspace_root->value, "/src/app");
  EXPECT_EQ(Parse("[sandbox]\nworkspace_root = \"~/src/app\"\n").workspace_root->value, "/home/u/src/app");
  EXPECT_EQ(Message("[sandbox]\nworkspace_root = [\"/a\"]\n"),
            "/p/corral.toml:2:1: sandbox.workspace_root: expected a string, got array");
  EXPECT_EQ(Message("[sandbox]\nworkspace_root = \"./\"\n"),
            "/p/corral.toml:2:1: sandbox.workspace_root: \"./\": relative paths are not allowed in the user config; "
            "write an absolute path or start it with ~/");
}

TEST(ConfigFile, PathListsExpandTildeAndCanonicalise) {
  ConfigLayer layer = Parse(
      "[sandbox]\nallow_read = [\"~/data\", \"/srv//x/\"]\nallow_write = [\"~\"]\nallow_exec = [\"/opt/tool\"]\n");
  EXPECT_EQ(Values(layer.allow_read), (std::vector<std::string>{"/home/u/data", "/srv/x"}));
  EXPECT_EQ(Values(layer.allow_write), (std::vector<std::string>{"/home/u"}));
  EXPECT_EQ(Values(layer.allow_exec), (std::vector<std::string>{"/opt/tool"}));
  EXPECT_EQ(layer.allow_read[1].where.ToString(), "/p/corral.toml:2:25");
}

TEST(ConfigFile, PathListErrorsNameTheElement) {
  EXPECT_EQ(Message("[sandbox]\nallow_read = [\"/a\", 3]\n"),
            "/p/corral.toml:2:21: sandbox.allow_read[1]: expected a string, got integer");
  EXPECT_EQ(Message("[sandbox]\nallow_write = \"/a\"\n"),
            "/p/corral.toml:2:1: sandbox.allow_write: expected an array of strings, got string");
  EXPECT_EQ(Message("[sandbox]\nallow_exec = [\"/a/../etc\"]\n"),
            "/p/corral.toml:2:15: sandbox.allow_exec[0]: \"/a/../etc\": '.' and '..' components are not allowed; "
            "write the canonical path");
  EXPECT_EQ(Message("[sandbox]\nallow_read = [\"~bob/x\"]\n"),
            "/p/corral.toml:2:15: sandbox.allow_read[0]: \"~bob/x\": \"~user\" paths are not supported; use an "
            "absolute path or ~/");
  EXPECT_EQ(Message("[sandbox]\nallow_read = [\"\"]\n"), "/p/corral.toml:2:15: sandbox.allow_read[0]: \"\": empty path");
}

TEST(ConfigFile, ProjectRelativePathsResolveAgainstTheProjectDirectory) {
  ConfigLayer layer = Parse("[sandbox]\nallow_write = [\"build\", \"./out/./x\", \".\"]\n", ConfigScope::kProject);
  EXPECT_EQ(Values(layer.allow_write), (std::vector<std::string>{"/p/build", "/p/out/x", "/p"}));
  EXPECT_EQ(Refusal("[sandbox]\nallow_read = [\"../elsewhere\"]\n", ConfigScope::kProject).code(),
            "config_bad_value");
  EXPECT_EQ(Refusal("[sandbox]\nallow_read = [\"a/../../x\"]\n", ConfigScope::kProject).code(), "config_bad_value");
}

TEST(ConfigFile, AllowEnv) {
  EXPECT_EQ(Values(Parse("[sandbox]\nallow_env = [\"CARGO_HOME\", \"_X1\"]\n").allow_env),
            (std::vector<std::string>{"CARGO_HOME", "_X1"}));
  EXPECT_EQ(Message("[sandbox]\nallow_env = [\"OK\", \"1BAD\"]\n"),
            "/p/corral.toml:2:20: sandbox.allow_env[1]: \"1BAD\" is not an environment variable name (letters, "
            "digits and _, not starting with a digit)");
  EXPECT_EQ(Message("[sandbox]\nallow_env = [\"A=B\"]\n").substr(0, 43), "/p/corral.toml:2:14: sandbox.allow_env[0]: ");
}

TEST(ConfigFile, HostRulesAreReadAsTheirFlagsReadThem) {
  ConfigLayer layer = Parse(
      "[sandbox]\nallow_host = [\"registry.npmjs.org\", \"*.pythonhosted.org:443\"]\ndeny_host = [\"*.evil.test\"]\n"
      "allow_private = [\"10.1.0.0/16\"]\n");
  EXPECT_EQ(Values(layer.allow_host), (std::vector<std::string>{"registry.npmjs.org", "*.pythonhosted.org:443"}));
  EXPECT_EQ(Values(layer.deny_host), std::vector<std::string>{"*.evil.test"});
  EXPECT_EQ(Values(layer.allow_private), std::vector<std::string>{"10.1.0.0/16"});
  EXPECT_EQ(Message("[sandbox]\nallow_host = [\"ok.test\", \"*.com\"]\n").substr(0, 51),
            "/p/corral.toml:2:26: sandbox.allow_host[1]: --allow");
  EXPECT_EQ(Refusal("[sandbox]\nallow_private = [\"8.8.8.0/24\"]\n").code(), "config_bad_value");
  EXPECT_EQ(Refusal("[sandbox]\ndeny_host = [\"a.test:443\"]\n").code(), "config_bad_value");
}

// Ports are numbers: allow_port and allow_local take TOML integers as well
// as strings, and refuse anything else naming the element and its line.
TEST(ConfigFile, PortListsTakeIntegersAndStrings) {
  ConfigLayer layer = Parse("[sandbox]\nallow_port = [443, \"8443\", 65535]\nallow_local = [5432]\n");
  EXPECT_EQ(Values(layer.allow_port), (std::vector<std::string>{"443", "8443", "65535"}));
  EXPECT_EQ(Values(layer.allow_local), std::vector<std::string>{"5432"});
  EXPECT_EQ(Message("[sandbox]\nallow_port = [443, 0]\n"),
            "/p/corral.toml:2:20: sandbox.allow_port[1]: 0 is not a port (1-65535)");
  EXPECT_EQ(Message("[sandbox]\nallow_port = [70000]\n"),
            "/p/corral.toml:2:15: sandbox.allow_port[0]: 70000 is not a port (1-65535)");
  EXPECT_EQ(Message("[sandbox]\nallow_port = [-1]\n"),
            "/p/corral.toml:2:15: sandbox.allow_port[0]: -1 is not a port (1-65535)");
  EXPECT_EQ(Message("[sandbox]\nallow_local = [\n  5432,\n  54.32,\n]\n"),
            "/p/corral.toml:4:3: sandbox.allow_local[1]: expected a port (an integer 1-65535, or a string), got float");
  EXPECT_EQ(Message("[sandbox]\nallow_port = [true]\n"),
            "/p/corral.toml:2:15: sandbox.allow_port[0]: expected a port (an integer 1-65535, or a string), got "
            "boolean");
  EXPECT_EQ(Message("[sandbox]\nallow_port = 443\n"),
            "/p/corral.toml:2:1: sandbox.allow_port: expected an array of ports, got integer");
  EXPECT_EQ(Refusal("[sandbox]\nallow_port = [\"http\"]\n").code(), "config_bad_value");
  EXPECT_EQ(Refusal("[sandbox]\nallow_local = [3128]\n").code(), "config_bad_value");
  // Host rules stay strings: a port there is part of the rule's text.
  EXPECT_EQ(Refusal("[sandbox]\nallow_host = [443]\n").code(), "config_wrong_type");
}

TEST(ConfigFile, ForbidRead) {
  ConfigLayer layer = Parse(
      "[sandbox]\nforbid_read = [\"**/.env\", \"~/.ssh\", \"/etc//hosts\", \"secrets/*.pem\", \"./.env\", \"conf/./k/\"]\n");
  EXPECT_EQ(Values(layer.forbid_read), (std::vector<std::string>{"**/.env", "/home/u/.ssh", "/etc/hosts", "secrets/*.pem",
                                                                  ".env", "conf/k"}));
  EXPECT_EQ(Message("[sandbox]\nforbid_read = [\"./\"]\n"),
            "/p/corral.toml:2:16: sandbox.forbid_read[0]: \"./\": an empty pattern, one with '..' segments or one "
            "that names no path");
  EXPECT_EQ(Message("[sandbox]\nforbid_read = [\"../up\"]\n"),
            "/p/corral.toml:2:16: sandbox.forbid_read[0]: \"../up\": an empty pattern, one with '..' segments or one that names no path");
  EXPECT_EQ(Message("[sandbox]\nforbid_read = [\"\"]\n"),
            "/p/corral.toml:2:16: sandbox.forbid_read[0]: \"\": an empty pattern, one with '..' segments or one that names no path");
  EXPECT_EQ(Message("[sandbox]\nforbid_read = \"**/.env\"\n"),
            "/p/corral.toml:2:1: sandbox.forbid_read: expected an array of strings, got string");
}

TEST(ConfigFile, NetworkTakesBooleansAndNames) {
  EXPECT_EQ(Parse("[sandbox]\nnetwork = false\n").network->value, NetworkMode::kNone);
  EXPECT_EQ(Parse("[sandbox]\nnetwork = true\n").network->value, NetworkMode::kAll);
  EXPECT_EQ(Parse("[sandbox]\nnetwork = \"none\"\n").network->value, NetworkMode::kNone);
  EXPECT_EQ(Parse("[sandbox]\nnetwork = \"all\"\n").network->value, NetworkMode::kAll);
  EXPECT_EQ(Message("[sandbox]\nnetwork = \"some\"\n"),
            "/p/corral.toml:2:1: sandbox.network: \"some\" is not one of \"none\", \"all\"");
  EXPECT_EQ(Message("[sandbox]\nnetwork = 1\n"),
            "/p/corral.toml:2:1: sandbox.network: expected a boolean or \"none\" / \"all\", got integer");
}

TEST(ConfigFile, Timeout) {
  EXPECT_EQ(Parse("[sandbox]\ntimeout = 30\n").timeout->value, std::chrono::seconds(30));
  EXPECT_EQ(Message("[sandbox]\ntimeout = 0\n"),
            "/p/corral.toml:2:1: sandbox.timeout: 0 is not a positive number of seconds");
  EXPECT_EQ(Message("[sandbox]\ntimeout = -5\n"),
            "/p/corral.toml:2:1: sandbox.timeout: -5 is not a positive number of seconds");
  EXPECT_EQ(Message("[sandbox]\ntimeout = 1.5\n"),
            "/p/corral.toml:2:1: sandbox.timeout: expected a positive integer (seconds), got float");
  EXPECT_EQ(Message("[sandbox]\ntimeout = \"30s\"\n"),
            "/p/corral.toml:2:1: sandbox.timeout: expected a positive integer (seconds), got string");
  EXPECT_NE(Message("[sandbox]\ntimeout = 9223372036854775807\n").find("more than the limit"), std::string::npos);
}

TEST(ConfigFile, Booleans) {
  ConfigLayer layer =
      Parse("[sandbox]\nbest_effort = true\ni_understand_danger_full_access = true\n");
  EXPECT_TRUE(layer.best_effort->value);
  EXPECT_TRUE(layer.acknowledge_danger->value);
  EXPECT_FALSE(Parse("[sandbox]\nbest_effort = false\n").best_effort->value);
  EXPECT_EQ(Message("[sandbox]\nbest_effort = \"yes\"\n"),
            "/p/corral.toml:2:1: sandbox.best_effort: expected a boolean (true or false), got string");
  EXPECT_EQ(Message("[sandbox]\ni_understand_danger_full_access = 1\n"),
            "/p/corral.toml:2:1: sandbox.i_understand_danger_full_access: expected a boolean (true or false), got "
            "integer");
}

TEST(ConfigFile, Home) {
  EXPECT_EQ(Parse("[sandbox]\nhome = \"real\"\n").home->value, HomeMode::kReal);
  EXPECT_EQ(Parse("[sandbox]\nhome = \"isolated\"\n").home->value, HomeMode::kIsolated);
  EXPECT_EQ(Message("[sandbox]\nhome = \"shared\"\n"),
            "/p/corral.toml:2:1: sandbox.home: \"shared\" is not one of \"isolated\", \"real\"");
}

TEST(ConfigFile, Backend) {
  for (const char* name : {"auto", "native", "bubblewrap", "seatbelt", "unavailable"}) {
    ConfigLayer layer = Parse(std::string("[sandbox]\nbackend = \"") + name + "\"\n");
    EXPECT_EQ(BackendChoiceName(layer.backend->value), name);
  }
  EXPECT_EQ(Message("[sandbox]\nbackend = \"docker\"\n"),
            "/p/corral.toml:2:1: sandbox.backend: \"docker\" is not one of \"auto\", \"native\", \"bubblewrap\", "
            "\"seatbelt\", \"unavailable\"");
}

TEST(ConfigFile, Approval) {
  for (ApprovalPolicy policy : kApprovalStrictestFirst) {
    std::string name(ApprovalPolicyName(policy));
    EXPECT_EQ(Parse("[approval]\npolicy = \"" + name + "\"\n").approval_policy->value, policy);
  }
  for (const Preset& preset : AllPresets()) {
    EXPECT_EQ(Parse("[approval]\npreset = \"" + std::string(preset.name) + "\"\n").preset->value.name, preset.name);
  }
  EXPECT_EQ(Message("[approval]\npolicy = \"ask\"\n"),
            "/p/corral.toml:2:1: approval.policy: \"ask\" is not one of \"deny-all\", \"ask-dangerous-tool-edit\", "
            "\"ask-dangerous\", \"allow-all\"");
  EXPECT_EQ(Message("[approval]\npreset = \"yolo\"\n"),
            "/p/corral.toml:2:1: approval.preset: \"yolo\" is not one of \"safe\", \"review\", \"custom\", \"danger\"");
  EXPECT_EQ(Message("[approval]\nmode = \"x\"\n"), "/p/corral.toml:2:1: approval.mode: unknown key");
}

TEST(ConfigFile, EveryKeyRejectsAWrongType) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"[sandbox]\nmode = true\n", "sandbox.mode: expected a string, got boolean"},
      {"[sandbox]\nbash = 0\n", "sandbox.bash: expected a string, got integer"},
      {"[sandbox]\nworkspace_root = 1\n", "sandbox.workspace_root: expected a string, got integer"},
      {"[sandbox]\nallow_read = {}\n", "sandbox.allow_read: expected an array of strings, got table"},
      {"[sandbox]\nallow_write = true\n", "sandbox.allow_write: expected an array of strings, got boolean"},
      {"[sandbox]\nallow_exec = \"/bin\"\n", "sandbox.allow_exec: expected an array of strings, got string"},
      {"[sandbox]\nallow_env = \"HOME\"\n", "sandbox.allow_env: expected an array of strings, got string"},
      {"[sandbox]\nforbid_read = 1\n", "sandbox.forbid_read: expected an array of strings, got integer"},
      {"[sandbox]\nnetwork = 1.0\n", "sandbox.network: expected a boolean or \"none\" / \"all\", got float"},
      {"[sandbox]\ntimeout = [1]\n", "sandbox.timeout: expected a positive integer (seconds), got array"},
      {"[sandbox]\nbest_effort = 1\n", "sandbox.best_effort: expected a boolean (true or false), got integer"},
      {"[sandbox]\nhome = false\n", "sandbox.home: expected a string, got boolean"},
      {"[sandbox]\ni_understand_danger_full_access = \"yes\"\n",
       "sandbox.i_understand_danger_full_access: expected a boolean (true or false), got string"},
      {"[sandbox]\nbackend = 1979-05-27\n", "sandbox.backend: expected a string, got date"},
      {"[approval]\npolicy = 1\n", "approval.policy: expected a string, got integer"},
      {"[approval]\npreset = []\n", "approval.preset: expected a string, got array"},
      {"approval = 1\n", "approval: expected a table, got integer"},
  };
  for (const Case& c : cases) {
    Error error = Refusal(c.text);
    std::string line = std::string(c.text).starts_with("[") ? "2" : "1";
    EXPECT_EQ(error.message(), "/p/corral.toml:" + line + ":1: " + c.message) << c.text;
    EXPECT_EQ(error.code(), "config_wrong_type") << c.text;
  }
}

TEST(ConfigFile, UnknownKeysAndTables) {
  EXPECT_EQ(Message("[sandbox]\nmode = \"read-only\"\nnetwrk = true\n"),
            "/p/corral.toml:3:1: sandbox.netwrk: unknown key");
  EXPECT_EQ(Message("[sandbx]\nmode = \"read-only\"\n"), "/p/corral.toml:1:2: sandbx: unknown table");
  EXPECT_EQ(Message("mode = \"read-only\"\n"),
            "/p/corral.toml:1:1: mode: unknown key (settings belong in [sandbox] or [approval])");
  EXPECT_EQ(Message("[sandbox.extra]\nx = 1\n"), "/p/corral.toml:1:10: sandbox.extra: unknown table");
  EXPECT_EQ(Message("sandbox = 3\n"), "/p/corral.toml:1:1: sandbox: expected a table, got integer");
  Error error = Refusal("[sandbox]\nnetwrk = true\n");
  EXPECT_EQ(error.code(), "config_unknown_key");
}

TEST(ConfigFile, DottedKeysAreTheSameTable) {
  EXPECT_EQ(Parse("sandbox.mode = \"read-only\"\n").mode->value, Mode::kReadOnly);
}

TEST(ConfigFile, TheFirstProblemInTheDocumentIsReported) {
  // toml++ keeps keys sorted; the walk follows the document instead.
  EXPECT_EQ(Message("[sandbox]\nzzz = 1\naaa = 2\n"), "/p/corral.toml:2:1: sandbox.zzz: unknown key");
}

TEST(ConfigFile, SyntaxErrorsNameFileLineAndColumn) {
  Error error = Refusal("[sandbox]\nmode = \"read-only\n");
  EXPECT_EQ(error.code(), "config_syntax");
  EXPECT_EQ(error.message().rfind("/p/corral.toml:2:", 0), 0U) << error.message();
  EXPECT_NE(error.message().find("syntax error"), std::string::npos);
  // Duplicate keys are a syntax error too.
  Error duplicate = Refusal("[sandbox]\nmode = \"read-only\"\nmode = \"read-only\"\n");
  EXPECT_EQ(duplicate.message().rfind("/p/corral.toml:3:", 0), 0U) << duplicate.message();
}

TEST(ConfigFile, ErrorCodesDistinguishTheProblem) {
  EXPECT_EQ(Refusal("[sandbox]\nmode = 1\n").code(), "config_wrong_type");
  EXPECT_EQ(Refusal("[sandbox]\nmode = \"x\"\n").code(), "config_bad_value");
  EXPECT_EQ(Refusal("[sandbox]\nx = 1\n").code(), "config_unknown_key");
  EXPECT_EQ(Refusal("[sandbox\n").code(), "config_syntax");
}

TEST(ConfigFile, HostileTextIsEscapedInMessages) {
  std::string message = Message("[sandbox]\nmode = \"\\u001b[31mred\"\n");
  EXPECT_EQ(message.find('\x1b'), std::string::npos) << message;
  EXPECT_NE(message.find("\\x1b[31mred"), std::string::npos) << message;
  std::string key = Message("[sandbox]\n\"\\u001b]0;title\\u0007\" = 1\n");
  EXPECT_EQ(key.find('\x1b'), std::string::npos) << key;
  EXPECT_EQ(key.find('\x07'), std::string::npos) << key;
}

}  // namespace
TEST(ConfigFile, AcceptRungNamesAreChecked) {
  EXPECT_EQ(Parse("[sandbox]\naccept_rung = [\"no-userns\", \"masked-proc\"]\n").accept_rung.size(), 2u);
  EXPECT_NE(Message("[sandbox]\naccept_rung = [\"full\"]\n")
                .find("sandbox.accept_rung[0]: \"full\" is not a rung that can be accepted; the names are no-userns, "
                      "no-landlock, masked-proc"),
            std::string::npos);
}

}  // namespace corral

namespace corral {
namespace {

// The resource limits: counts are integers, sizes as tmpfs_size; zero,
// negative, overflowing and mistyped values are one error at the key.
TEST(ConfigFileLimits, CountsAndSizesAreRead) {
  ConfigLayer layer = Parse(
      "[sandbox]\nmax_procs = 64\nmax_memory = \"512m\"\nmax_cpu_seconds = 30\nmax_file_size = 4096\n"
      "max_open_files = 256\n");
  EXPECT_EQ(layer.max_procs->value, 64u);
  EXPECT_EQ(layer.max_memory->value, 512ull * 1024 * 1024);
  EXPECT_EQ(layer.max_cpu_seconds->value, std::chrono::seconds(30));
  EXPECT_EQ(layer.max_file_size->value, 4096u);
  EXPECT_EQ(layer.max_open_files->value, 256u);
}

// CPUs: a number, a whole one, or its text, with at most three decimals.
TEST(ConfigFileLimits, TheCpuShareIsANumberOfCpus) {
  EXPECT_EQ(Parse("[sandbox]\nmax_cpus = 0.5\n").max_cpus->value, 500u);
  EXPECT_EQ(Parse("[sandbox]\nmax_cpus = 2\n").max_cpus->value, 2000u);
  EXPECT_EQ(Parse("[sandbox]\nmax_cpus = \"1.25\"\n").max_cpus->value, 1250u);
  EXPECT_EQ(Message("[sandbox]\nmax_cpus = 0\n"),
            "/p/corral.toml:2:1: sandbox.max_cpus: max_cpus \"0\": must be between 0.01 and 1024");
  EXPECT_EQ(Message("[sandbox]\nmax_cpus = 2048\n"),
            "/p/corral.toml:2:1: sandbox.max_cpus: max_cpus \"2048\": must be between 0.01 and 1024");
  EXPECT_NE(Message("[sandbox]\nmax_cpus = 0.0005\n").find("at most three decimals"), std::string::npos);
  EXPECT_NE(Message("[sandbox]\nmax_cpus = -1.0\n").find("at most three decimals"), std::string::npos);
  EXPECT_NE(Message("[sandbox]\nmax_cpus = \"half\"\n").find("expected a number of CPUs"), std::string::npos);
  EXPECT_NE(Message("[sandbox]\nmax_cpus = true\n").find("a number of CPUs such as 0.5 or 2"), std::string::npos);
}

TEST(ConfigFileLimits, BadValuesAreOneErrorAtTheKey) {
  EXPECT_EQ(Message("[sandbox]\nmax_procs = 0\n"),
            "/p/corral.toml:2:1: sandbox.max_procs: max_procs \"0\": must be between 1 and 4194304");
  EXPECT_EQ(Message("[sandbox]\nmax_procs = -4\n"),
            "/p/corral.toml:2:1: sandbox.max_procs: max_procs \"-4\": expected a whole number");
  EXPECT_NE(Message("[sandbox]\nmax_procs = 9223372036854775807\n").find("must be between 1 and 4194304"),
            std::string::npos);
  EXPECT_EQ(Message("[sandbox]\nmax_procs = \"64\"\n"),
            "/p/corral.toml:2:1: sandbox.max_procs: expected a positive integer, got string");
  EXPECT_EQ(Message("[sandbox]\nmax_open_files = 3\n"),
            "/p/corral.toml:2:1: sandbox.max_open_files: max_open_files \"3\": must be between 4 and 1048576");
  EXPECT_EQ(Message("[sandbox]\nmax_memory = \"1m\"\n"),
            "/p/corral.toml:2:1: sandbox.max_memory: max_memory \"1m\": must be between 16m and 16t");
  EXPECT_EQ(Message("[sandbox]\nmax_memory = \"99999999999t\"\n"),
            "/p/corral.toml:2:1: sandbox.max_memory: max_memory \"99999999999t\": must be between 16m and 16t");
  EXPECT_EQ(Message("[sandbox]\nmax_file_size = 0\n"),
            "/p/corral.toml:2:1: sandbox.max_file_size: max_file_size \"0\": must be between 1k and 16t");
  EXPECT_EQ(Message("[sandbox]\nmax_file_size = true\n"),
            "/p/corral.toml:2:1: sandbox.max_file_size: expected a size such as \"1g\" or \"512m\", or a number of "
            "bytes, got boolean");
  EXPECT_EQ(Message("[sandbox]\nmax_cpu_seconds = 0\n"),
            "/p/corral.toml:2:1: sandbox.max_cpu_seconds: 0 is not a positive number of seconds");
}

}  // namespace
}  // namespace corral
