// The scalar sandbox settings, each described once.
//
// A setting is one `Setting<T>` below: its key (the PolicySpec member, the
// JSON key and the [sandbox] key of a config file), its flag, its default, the
// doc line of docs/config.md, and how a project file may narrow it. The list
// CORRAL_SANDBOX_SETTINGS names each one with its PolicySpec member and its
// PolicyBuilder setter. Everything else is expanded from that list, not
// written again:
//
//   the members of PolicySpec, Config, ConfigLayer, SpecOverrides, PolicyFlags
//   the PolicyBuilder setters                          (policy/policy.cc)
//   the JSON of a spec                                 (policy/spec_json.cc)
//   the TOML keys and their parsing                    (config/config_file.cc)
//   the user file's values and the project's narrowing (config/config_merge.cc)
//   Config::ApplyTo and the explicit overrides         (config/config.cc, resolve/request.cc)
//   the CLI flags                                      (cli/policy_flags.cc)
//   docs/config.md's rows          (rendered by RenderDocRow; spec_fields_test.cc
//                                   fails when the document says otherwise)
//
// Adding a setting: a Setting<T> here, one line in the list, and its rows in
// docs/config.md (the test prints them). The handling of each kind exists
// already for T = bool, a choice enum, std::chrono::seconds or a byte size
// (uint64_t, read with ParseTmpfsSize); a new enum type also needs its
// RenderDocRow / RenderNarrowingRow overload (one line each in
// spec_fields.cc). For example:
//
//   inline constexpr Setting<bool> kExampleSetting{.key = "example", .flag = "--example", ...};
//   #define CORRAL_SANDBOX_SETTINGS(X) ... X(example, Example, kExampleSetting)
//
// The kinds:
//
//   bool      a switch. The flag only turns it on; an explicit override is a
//             plain bool (false: not given). `true` is the wide value.
//   enum      a choice among `choices`; the enum's values are the names'
//             indexes, and the last name is the widest.
//   seconds   a positive number of seconds, at most `maximum` in a file and
//             on the command line; unset in the spec means no limit.
//   uint64_t  a byte size, written as "512m" or a number of bytes, between
//             `minimum` and `maximum`.
//
// Security: `project` says how far the repository's corral.toml may move a
// setting. A wrong rule lets an untrusted repository widen the sandbox, so a
// setting that opens or weakens anything must name the rule that keeps the
// wide value the user's alone.
//
// What is NOT here yet and still written out by hand in each place: mode
// (bash, presets and sessions decide it too), acknowledge_danger (audited by
// who gave it), workspace / no_workspace, the path and name lists, pin_sha256,
// the internal system_roots / own_files, and sandbox.backend and [approval].
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "policy/tmpfs_size.h"

namespace corral {

enum class NetworkMode {
  kNone,  // an empty network namespace with only lo, and no INET sockets
  kAll,   // the host's network namespace
};

// What $HOME shows inside the sandbox.
enum class HomeMode {
  kIsolated,  // an empty tmpfs (the default)
  kReal,      // the isolated home plus the real home's toolchains and caches, read-only (home_view.h)
};

// How the project file (<workspace>/corral.toml) may set a setting. Each
// refusal is a config_project_widens error at the project file's key.
enum class ProjectRule {
  kNarrowValueOnly,     // only the narrow value; the wide one is the user's alone, whatever the user file says
  kWideIfUserIsWide,    // the wide value only when the user file chose it too
  kLowerOnly,           // at most the user file's value, else the default (no default: no bound)
};

// What an explicit override of the setting does next to --profile.
enum class ProfileRule {
  kCombines,  // applies on top of the profile
  kIsAGrant,  // a grant-shaped setting: a profile is the whole authority, so the two conflict
};

// How a choice may be spelled in a config file.
enum class TomlSpelling {
  kNames,           // one of the names, as a string
  kNamesOrBoolean,  // or a boolean: false is the first name, true the last
};

template <typename T, typename SpecType_ = T>
struct Setting {
  using Value = T;            // what a file or flag sets
  using SpecType = SpecType_;  // the PolicySpec member: T, or std::optional<T> when unset means no limit

  std::string_view key{};        // the PolicySpec member, JSON key and [sandbox] key
  SpecType spec_default{};     // the PolicySpec default
  std::string_view flag{};       // "--network"
  std::string_view flag_value{}; // the flag's value in --help ("MODE"); empty for a switch
  std::string_view flag_help{};
  ProjectRule project = ProjectRule::kNarrowValueOnly;
  // kNarrowValueOnly and kWideIfUserIsWide: "the project config cannot <refusal>:
  // only the user config (<file>) can <user_action>". kLowerOnly: "the project
  // config may lower the <refusal> (...) but not raise it to ...".
  std::string_view refusal{};
  std::string_view user_action{};
  ProfileRule profile = ProfileRule::kCombines;
  std::span<const std::string_view> choices{};  // an enum's names, narrowest first
  TomlSpelling spelling = TomlSpelling::kNames;
  T minimum{};       // seconds and sizes: the smallest value a file or flag may give
  T maximum{};       // the largest value a file or flag may give (JSON: a size's largest)
  std::string_view maximum_text{};  // seconds: the maximum in words ("one year")
  // docs/config.md: the row's type and default columns (derived for all
  // but a size, so they cannot drift from `choices` or the limits), and its
  // notes.
  std::string_view doc_type{};
  std::string_view doc_default{};
  std::string_view doc{};
};

inline constexpr std::string_view kNetworkNames[] = {"none", "all"};
inline constexpr std::string_view kHomeNames[] = {"isolated", "real"};

inline constexpr Setting<bool> kBestEffortSetting{
    .key = "best_effort",
    .spec_default = false,
    .flag = "--best-effort",
    .flag_help = "DANGEROUS: run even when the host cannot enforce every mechanism; the report and audit "
                 "trail say what was dropped",
    .project = ProjectRule::kNarrowValueOnly,
    .refusal = "set best_effort",
    .user_action = "set best_effort",
    .doc = "**Dangerous**: run even when the host cannot enforce every mechanism; the report says what was "
           "dropped. It also lets `corral wrap` use a partial backend (bubblewrap, seatbelt), listing its gaps.",
};

inline constexpr Setting<HomeMode> kHomeSetting{
    .key = "home",
    .spec_default = HomeMode::kIsolated,
    .flag = "--home",
    .flag_value = "MODE",
    .flag_help = "isolated (default: an empty $HOME) or real (the empty $HOME plus your toolchains and caches, "
                 "read-only)",
    .project = ProjectRule::kNarrowValueOnly,
    .refusal = "show the real home",
    .user_action = "set home = \"real\"",
    .profile = ProfileRule::kIsAGrant,
    .choices = kHomeNames,
    .doc = "`isolated`: an empty private `$HOME`. `real`: that private home plus, read-only, the real home's "
           "toolchains (run) and caches (read) that exist; the list is `HomeAllowlist` in "
           "`src/policy/home_view.cc`. Everything else in the home is hidden unless granted.",
};

inline constexpr Setting<NetworkMode> kNetworkSetting{
    .key = "network",
    .spec_default = NetworkMode::kNone,
    .flag = "--network",
    .flag_value = "MODE",
    .flag_help = "none (default) or all",
    .project = ProjectRule::kWideIfUserIsWide,
    .refusal = "open the network",
    .user_action = "set network = true",
    .profile = ProfileRule::kIsAGrant,
    .choices = kNetworkNames,
    .spelling = TomlSpelling::kNamesOrBoolean,
    .doc = "`true` = `\"all\"`: the host's network. `false` = `\"none\"`: only loopback, no INET sockets.",
};

inline constexpr Setting<std::chrono::seconds, std::optional<std::chrono::seconds>> kTimeoutSetting{
    .key = "timeout",
    .spec_default = std::nullopt,
    .flag = "--timeout",
    .flag_value = "SECONDS",
    .flag_help = "kill the whole process tree after SECONDS",
    .project = ProjectRule::kLowerOnly,
    .refusal = "timeout",
    .minimum = std::chrono::seconds(1),
    .maximum = std::chrono::seconds(365LL * 24 * 3600),
    .maximum_text = "one year",
    .doc_default = "no limit",
    .doc = "Kills the whole process tree when it expires.",
};

inline constexpr Setting<uint64_t> kTmpfsSizeSetting{
    .key = "tmpfs_size",
    .spec_default = kDefaultTmpfsSize,
    .flag = "--tmpfs-size",
    .flag_value = "SIZE",
    .flag_help = "cap /tmp and $HOME at SIZE each, /dev/shm at a quarter of it (host memory; default 1g)",
    .project = ProjectRule::kLowerOnly,
    .refusal = "tmpfs size",
    .minimum = kMinTmpfsSize,
    .maximum = kMaxTmpfsSize,
    .doc_type = "string: a whole number with `k`, `m`, `g` or `t` (binary units, e.g. `\"512m\"`), or an integer "
                "(bytes); 4m to 1t",
    .doc_default = "`\"1g\"`",
    .doc = "The private `/tmp` and the isolated `$HOME` are each a tmpfs of this size, with one inode per 8 KiB "
           "(131072 files for 1g); `/dev/shm` gets a quarter of it. They hold host memory, so a run holds at most "
           "2.25 GiB there by default; a write past the cap fails with \"No space left on device\" inside. "
           "`corral explain` shows it; `corral wrap` passes it on (the native backend's policy file; bubblewrap "
           "gets `--size` for `/tmp` and `$HOME`).",
};

// X(member, Setter, setting): the PolicySpec member, the PolicyBuilder
// setter, the description. The order is the order of the project file's
// checks (the first refusal is the one reported).
#define CORRAL_SANDBOX_SETTINGS(X)               \
  X(best_effort, BestEffort, kBestEffortSetting) \
  X(home, Home, kHomeSetting)                    \
  X(network, Network, kNetworkSetting)           \
  X(timeout, Timeout, kTimeoutSetting)           \
  X(tmpfs_size, TmpfsSize, kTmpfsSizeSetting)

// The types each place stores a setting in.
template <const auto& S>
using SettingValue = typename std::remove_cvref_t<decltype(S)>::Value;
template <const auto& S>
using SettingSpecType = typename std::remove_cvref_t<decltype(S)>::SpecType;
// An explicit override (SpecOverrides): a switch can only be turned on.
template <const auto& S>
using SettingOverride =
    std::conditional_t<std::is_same_v<SettingValue<S>, bool>, bool, std::optional<SettingValue<S>>>;

// A choice's name, and the value a name stands for.
template <typename E>
  requires std::is_enum_v<E>
std::string_view ChoiceName(const Setting<E>& setting, E value) {
  return setting.choices[static_cast<size_t>(value)];
}
template <typename E>
  requires std::is_enum_v<E>
std::optional<E> ParseChoice(const Setting<E>& setting, std::string_view name) {
  for (size_t i = 0; i < setting.choices.size(); ++i) {
    if (setting.choices[i] == name) return static_cast<E>(i);
  }
  return std::nullopt;
}

std::string_view NetworkModeName(NetworkMode mode);  // "none", "all"
std::string_view HomeModeName(HomeMode mode);        // "isolated", "real"

// The setting's row of docs/config.md's [sandbox] table (spec_fields_test.cc
// compares the document with these):
// | `key` | type | default | `key` | `--flag` | doc |
std::string RenderDocRow(const Setting<bool>& setting);
std::string RenderDocRow(const Setting<HomeMode>& setting);
std::string RenderDocRow(const Setting<NetworkMode>& setting);
std::string RenderDocRow(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting);
std::string RenderDocRow(const Setting<uint64_t>& setting);
// Its row of docs/config.md's project-narrowing table, from `project`:
// | `key` | the project config may | it may not |
std::string RenderNarrowingRow(const Setting<bool>& setting);
std::string RenderNarrowingRow(const Setting<HomeMode>& setting);
std::string RenderNarrowingRow(const Setting<NetworkMode>& setting);
std::string RenderNarrowingRow(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting);
std::string RenderNarrowingRow(const Setting<uint64_t>& setting);

}  // namespace corral
