// Config files: the user's ~/.config/corral/config.toml and the project's
// <workspace>/corral.toml, merged into one Config that feeds PolicySpec.
//
//   LoadOptions options = DefaultLoadOptions(host.home, workspace);
//   CORRAL_ASSIGN_OR_RETURN(Config config, LoadConfig(options));
//   PolicySpec spec;
//   config.ApplyTo(spec);   // then the CLI flags, which the user typed last
//   CORRAL_ASSIGN_OR_RETURN(Policy policy, BuildPolicy(host, spec));
//
// The user file may say anything the CLI can. The project file comes from the
// repository, which is not necessarily trusted, so it can only NARROW what the
// user file (or, when there is none, the defaults) allows: it cannot open the
// network, widen the mode, turn bash off, set best_effort, home = "real" or the
// danger acknowledgement, grant a path outside the workspace, pass an
// environment variable the user did not allow, raise the timeout, or set
// workspace_root or backend. Its forbid_read is added to the user's. Each
// refusal is an error naming the project file, line, column and key (code
// "config_project_widens"); nothing is silently dropped.
//
// Loading is all or nothing: LoadConfig returns a complete Config or an
// Error, never a partly read one. Every key, type and value rule, and the
// error format, is in docs/config.md.
//
// Security: a config file writable by group or others is refused (anyone who
// can write it can open the sandbox); so is a user config owned by someone
// other than the caller or root.
#pragma once

#include <sys/types.h>

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "policy/approval_policy.h"
#include "policy/preset.h"
#include "policy/mode.h"
#include "policy/spec.h"

namespace corral {

// sandbox.backend: which confinement backend to use.
enum class BackendChoice { kAuto, kNative, kBubblewrap, kSeatbelt, kUnavailable };
std::string_view BackendChoiceName(BackendChoice backend);  // "auto", "native", ...
std::optional<BackendChoice> ParseBackendChoice(std::string_view text);

// approval.policy values from the strictest to the loosest: the project file
// may only move towards the front.
inline constexpr std::array<ApprovalPolicy, 4> kApprovalStrictestFirst = {
    ApprovalPolicy::kDenyAll, ApprovalPolicy::kAskDangerousToolEdit, ApprovalPolicy::kAskDangerous,
    ApprovalPolicy::kAllowAll};
// Position in kApprovalStrictestFirst.
size_t ApprovalLooseness(ApprovalPolicy policy);

// The merged result. An unset optional means no file set it, and ApplyTo
// leaves the PolicySpec default (or whatever the caller already put there).
struct Config {
  std::optional<Mode> mode;  // sandbox.mode, or danger-full-access for bash = "off"
  std::optional<bool> acknowledge_danger;
  std::optional<std::string> workspace_root;  // absolute, canonical text
  // The lists that are config keys (policy/spec_fields.h): paths absolute,
  // canonical text; patterns with "~/" expanded, relative ones kept; each
  // element once, the user's first.
#define CORRAL_CONFIG_LIST(member, Adder, setting) std::vector<std::string> member;
  CORRAL_CONFIG_LISTS(CORRAL_CONFIG_LIST)
#undef CORRAL_CONFIG_LIST
  // The scalar sandbox settings (policy/spec_fields.h): network, timeout,
  // tmpfs_size (bytes), best_effort, home.
#define CORRAL_CONFIG_MEMBER(member, Setter, setting) std::optional<SettingValue<setting>> member;
  CORRAL_SANDBOX_SETTINGS(CORRAL_CONFIG_MEMBER)
#undef CORRAL_CONFIG_MEMBER
  BackendChoice backend = BackendChoice::kAuto;
  std::optional<ApprovalPolicy> approval_policy;  // approval.policy
  std::optional<std::string> preset;              // approval.preset: a name ResolvePreset (policy/preset.h) knows
  std::optional<std::string> audit_trail;         // audit.trail (user config only): "-" or an absolute path

  // The files that existed and were read, user file first.
  std::vector<std::string> files_read;
  // Where each effective value came from: dotted key -> "file:line:column".
  std::map<std::string, std::string> origins;
  // Where each path grant was written: path -> "file:line:column: key".
  std::map<std::string, std::string> path_origins;
  // The path grants only the project file wrote; the others in path_origins
  // are the user file's. ApplyTo passes both on (PolicySpec's
  // user_config_grants and project_config_grants).
  std::vector<std::string> project_paths;
  // Each path grant and the workspace root exists and is reached without a
  // symlink; otherwise an error naming the file, line, column and key (code
  // "config_bad_value"), instead of one naming a flag nobody typed.
  Status CheckPaths() const;

  // Sets every field a file set; list fields are appended.
  void ApplyTo(PolicySpec& spec) const;
  bool operator==(const Config&) const = default;
};

// Whether the user file must exist.
enum class UserFileRule {
  kMayBeMissing,  // the default path: no file means defaults
  kMustExist,     // a file the user named (--config): a missing one is an error
};

struct ConfigLayer;  // config_file.h

struct LoadOptions {
  std::optional<std::string> user_path;     // unset: no user file
  // The user file as LoadUserLayer already read it, or the error it gave:
  // used instead of reading user_path again (a run consults that file up to
  // three times; read once, it cannot say one thing to the first reader and
  // another to the next, nor fail for one and succeed for the next).
  const Result<std::optional<ConfigLayer>>* user_layer = nullptr;
  UserFileRule user_file_rule = UserFileRule::kMayBeMissing;
  std::optional<std::string> project_path;  // unset: no project file
  std::string home;                         // for "~" expansion
  std::string workspace_root;               // absolute; the project file's grants must lie inside it
  uid_t uid = 0;                            // the caller; the user file must be its or root's
  // The preset the caller chose outside the files (--preset). With the user
  // file's own approval.preset, it is part of what the project file may only
  // narrow: a project mode or approval policy wider than the preset's is refused.
  std::optional<Preset> preset;
};

// $XDG_CONFIG_HOME/corral/config.toml when XDG_CONFIG_HOME is set and
// absolute, else <home>/.config/corral/config.toml.
std::string UserConfigPath(std::string_view home, const char* xdg_config_home);
// <workspace>/corral.toml
std::string ProjectConfigPath(std::string_view workspace_root);
// Both default paths (reading $XDG_CONFIG_HOME) and the caller's uid.
LoadOptions DefaultLoadOptions(const std::string& home, const std::string& workspace_root);

// Reads, validates and merges both files. Missing files are fine (defaults),
// except a user file under UserFileRule::kMustExist (code "config_missing");
// an existing file that cannot be read, or is writable by others, is an error.
Result<Config> LoadConfig(const LoadOptions& options);
// The user file alone, read and parsed under the same rules (nullopt: there
// is none, or options.user_path is unset), for LoadOptions::user_layer.
Result<std::optional<ConfigLayer>> LoadUserLayer(const LoadOptions& options);

}  // namespace corral
