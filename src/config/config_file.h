// One config file's [sandbox], [approval] and [audit] tables, parsed strictly.
//
// ParseConfigText is the single parser path: LoadConfig, the fuzz harness and
// the tests all go through it. It checks every key, type and value and the
// rules that concern one file alone (bash against mode); the rules that
// relate the two files are in config_merge.h.
//
// Paths are normalised here: "~" expands to the home directory; a relative
// path is refused in the user file and resolved against the project file's
// directory in the project file; "." and ".." components are refused (they
// would defeat the "inside the workspace" check).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "config/config.h"
#include "config/toml_reader.h"
#include "policy/preset.h"
#include "policy/mode.h"
#include "policy/spec.h"

namespace corral {

enum class ConfigScope {
  kUser,     // ~/.config/corral/config.toml
  kProject,  // <workspace>/corral.toml
  kProfile,  // a profile file (profile_file.h): paths as in the user config
};
std::string_view ConfigScopeName(ConfigScope scope);  // "user config", "project config", "profile"

// sandbox.bash
enum class BashSetting {
  kEnforce,  // shell commands run in the sandbox (the default)
  kOff,      // shell commands run unconfined: the same as mode = "danger-full-access"
};

// What one file says, each value with where it was written.
struct ConfigLayer {
  std::string file;
  ConfigScope scope = ConfigScope::kUser;
  std::optional<Sourced<Mode>> mode;
  std::optional<Sourced<BashSetting>> bash;
  std::optional<Sourced<std::string>> workspace_root;
  // The lists that are config keys (policy/spec_fields.h), each element
  // normalised as its ListElement says.
#define CORRAL_LAYER_LIST(member, Adder, setting) std::vector<Sourced<std::string>> member;
  CORRAL_CONFIG_LISTS(CORRAL_LAYER_LIST)
#undef CORRAL_LAYER_LIST
  // The scalar sandbox settings (policy/spec_fields.h).
#define CORRAL_LAYER_MEMBER(member, Setter, setting) std::optional<Sourced<SettingValue<setting>>> member;
  CORRAL_SANDBOX_SETTINGS(CORRAL_LAYER_MEMBER)
#undef CORRAL_LAYER_MEMBER
  std::optional<Sourced<bool>> acknowledge_danger;
  std::optional<Sourced<BackendChoice>> backend;
  std::optional<Sourced<ApprovalPolicy>> approval_policy;
  std::optional<Sourced<Preset>> preset;
  // audit.trail: "-" (stderr) or an absolute path; only the user config may set it.
  std::optional<Sourced<std::string>> audit_trail;

  // The mode this file asks for: sandbox.mode, or danger-full-access when
  // bash = "off"; unset when it says neither.
  std::optional<Sourced<Mode>> EffectiveMode() const;
};

struct ParseContext {
  std::string file;  // for messages, and the base of relative project paths
  ConfigScope scope = ConfigScope::kUser;
  std::string home;  // for "~"
};

// A path value: "~" expanded, the scope's relative-path rule applied (refused
// for kUser and kProfile; resolved against the file's directory for
// kProject), and the
// lexical canonical form; a bad one is a config_bad_value error at `field`.
Result<std::string> ResolveConfigPath(const TomlField& field, const std::string& given, const ParseContext& context);

Result<ConfigLayer> ParseConfigText(std::string_view text, const ParseContext& context);

}  // namespace corral
