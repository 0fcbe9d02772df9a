#include "cli/policy_flags.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>

#include "base/stream_write.h"
#include "base/terminal.h"

namespace corral::cli {
namespace {

void Repeatable(CLI::Option* option, const std::string& type) {
  option->type_name(type)->expected(1)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// One scalar setting's flag (policy/spec_fields.h): a switch is a flag, a
// choice an option checked against its names, seconds a number, a size text.
template <typename E>
void AddSettingFlag(CLI::App& app, const Switch<E>& setting, bool& to) {
  app.add_flag(std::string(setting.flag), to, std::string(setting.flag_help));
}
template <typename E>
  requires std::is_enum_v<E>
void AddSettingFlag(CLI::App& app, const Setting<E>& setting, std::optional<std::string>& to) {
  app.add_option(std::string(setting.flag), to, std::string(setting.flag_help))
      ->type_name(std::string(setting.flag_value))
      ->check(CLI::IsMember(std::vector<std::string>(setting.choices.begin(), setting.choices.end())));
}
template <typename T, typename SpecType, typename Arg, typename Text>
void AddSettingFlag(CLI::App& app, const Setting<T, SpecType, Arg>& setting, std::optional<Text>& to) {
  app.add_option(std::string(setting.flag), to, std::string(setting.flag_help))
      ->type_name(std::string(setting.flag_value));
}

// The typed text into the override, or a usage error naming the flag.
template <typename E>
Status FromFlag(const Switch<E>&, bool given, bool& out) {
  out = given;
  return Ok();
}
template <typename E>
  requires std::is_enum_v<E>
Status FromFlag(const Setting<E>& setting, const std::optional<std::string>& given, std::optional<E>& out) {
  if (given) out = ParseChoice(setting, *given).value_or(static_cast<E>(0));
  return Ok();
}
Status FromFlag(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting,
                const std::optional<long long>& given, std::optional<std::chrono::seconds>& out) {
  if (!given) return Ok();
  if (*given < setting.minimum.count() || *given > setting.maximum.count()) {
    return Error(ErrorKind::kUsage, std::string(setting.flag) + ": must be between " +
                                        std::to_string(setting.minimum.count()) + " and " +
                                        std::to_string(setting.maximum.count()) + " seconds (" +
                                        std::string(setting.maximum_text) + ")");
  }
  out = std::chrono::seconds(*given);
  return Ok();
}
Status FromFlag(const Setting<uint64_t>& setting, const std::optional<std::string>& given,
                std::optional<uint64_t>& out) {
  if (!given) return Ok();
  Result<uint64_t> bytes = ParseTmpfsSize(*given);
  if (!bytes.ok()) return Error(ErrorKind::kUsage, std::string(setting.flag) + ": " + bytes.error().message());
  out = *bytes;
  return Ok();
}

Status FromFlag(const LimitSetting& setting, const std::optional<std::string>& given, std::optional<uint64_t>& out) {
  if (!given) return Ok();
  Result<uint64_t> value = ParseLimit(setting, *given);
  if (!value.ok()) return Error(ErrorKind::kUsage, std::string(setting.flag) + ": " + value.error().message());
  out = *value;
  return Ok();
}

bool IsGiven(bool given) { return given; }
bool IsGiven(const auto& given) { return given.has_value(); }

}  // namespace

void PolicyFlags::Register(CLI::App& app) {
#define CORRAL_ADD_LIST_FLAG(member, Adder, setting)                                                            \
  Repeatable(app.add_option(std::string(setting.flag), member, std::string(setting.flag_help)), \
             std::string(ListFlagValue(setting)));
  CORRAL_SANDBOX_LISTS(CORRAL_ADD_LIST_FLAG)
#undef CORRAL_ADD_LIST_FLAG
#define CORRAL_ADD_SETTING_FLAG(member, Setter, setting) AddSettingFlag(app, setting, member);
  CORRAL_SANDBOX_SETTINGS(CORRAL_ADD_SETTING_FLAG)
#undef CORRAL_ADD_SETTING_FLAG
  app.add_option("--workspace", workspace, "the project tree: read, write and exec (default: the working directory)")
      ->type_name("DIR");
  app.add_flag("--no-workspace", no_workspace, "grant no workspace; only the explicit grants");
  app.add_option("--pin-sha256", pin_sha256, "refuse to run unless the program hashes to HEX (see `corral hash`)")
      ->type_name("HEX");
  app.add_option("--mode", mode, "read-only, workspace-write (default) or danger-full-access")
      ->type_name("MODE")
      ->check(CLI::IsMember({"read-only", "workspace-write", "danger-full-access"}));
  app.add_flag("--i-understand-danger-full-access", acknowledge_danger,
               "accept that --mode danger-full-access runs the command with no sandbox at all");
  app.add_option("--config", config, "read the user config from FILE (default: ~/.config/corral/config.toml)")
      ->type_name("FILE");
  app.add_flag("--no-config", no_config, "read no config file (neither the user's nor the project's)");
  app.add_option("--preset", preset, "safe, review, custom or danger: a default mode and approval policy")
      ->type_name("NAME")
      ->check(CLI::IsMember({"safe", "review", "custom", "danger"}));
  app.add_option("--approval", approval, "allow-all, deny-all, ask-dangerous or ask-dangerous-tool-edit")
      ->type_name("POLICY")
      ->check(CLI::IsMember({"allow-all", "deny-all", "ask-dangerous", "ask-dangerous-tool-edit"}));
  app.add_option("--session", session, "resolve the mode and workspace from session ID (see `corral session`)")
      ->type_name("ID");
  app.add_option("--profile", profile, "take the whole authority from a [profile] TOML file")->type_name("FILE");
  app.add_option("--profile-ceiling", profile_ceiling, "narrow --profile by this profile (component-wise)")
      ->type_name("FILE");
}

bool PolicyFlags::Any() const {
  bool setting = false;
#define CORRAL_SETTING_GIVEN(member, Setter, s) setting = setting || IsGiven(member);
  CORRAL_SANDBOX_SETTINGS(CORRAL_SETTING_GIVEN)
#undef CORRAL_SETTING_GIVEN
#define CORRAL_LIST_GIVEN(member, Adder, s) setting = setting || !member.empty();
  CORRAL_SANDBOX_LISTS(CORRAL_LIST_GIVEN)
#undef CORRAL_LIST_GIVEN
  return setting || workspace || no_workspace || pin_sha256 || mode || acknowledge_danger || config || no_config ||
         preset || approval || session || profile || profile_ceiling;
}

Result<RunRequest> PolicyFlags::ToRequest() const {
  RunRequest request;
  SpecOverrides& o = request.overrides;
#define CORRAL_LIST_FROM_FLAG(member, Adder, setting) o.member = member;
  CORRAL_SANDBOX_LISTS(CORRAL_LIST_FROM_FLAG)
#undef CORRAL_LIST_FROM_FLAG
  // The settings first: a bad --timeout or --tmpfs-size is the error reported.
#define CORRAL_SETTING_FROM_FLAG(member, Setter, setting) CORRAL_TRY(FromFlag(setting, member, o.member));
  CORRAL_SANDBOX_SETTINGS(CORRAL_SETTING_FROM_FLAG)
#undef CORRAL_SETTING_FROM_FLAG
  o.workspace = workspace;
  o.no_workspace = no_workspace;
  if (workspace && no_workspace) return Error(ErrorKind::kUsage, "--workspace and --no-workspace cannot be combined");
  o.pin_sha256 = pin_sha256;
  if (mode) o.mode = ParseMode(*mode);
  o.acknowledge_danger = acknowledge_danger;
  request.no_config = no_config;
  request.user_config = config;
  if (config && no_config) return Error(ErrorKind::kUsage, "--config and --no-config cannot be combined");
  request.preset = preset;
  if (approval) request.approval = ParseApprovalPolicy(*approval);
  request.session_id = session;
  request.profile = profile;
  request.profile_ceiling = profile_ceiling;
  if (profile_ceiling && !profile) return Error(ErrorKind::kUsage, "--profile-ceiling needs --profile");
  return request;
}

Result<ResolvedRequest> PolicyFlags::Resolve(const HostContext& host) const {
  CORRAL_ASSIGN_OR_RETURN(RunRequest request, ToRequest());
  return ResolveRequest(request, host);
}

Result<Policy> PolicyFlags::Build(const HostContext& host) const {
  CORRAL_ASSIGN_OR_RETURN(ResolvedRequest resolved, Resolve(host));
  if (!resolved.gated.empty()) {
    return Error(ErrorKind::kDenied, "the profile gates " + std::string(DimensionName(resolved.gated.front())) +
                                         ", which needs a single-use grant from an approver: use `corral run`, "
                                         "which asks on the terminal");
  }
  return BuildPolicy(host, resolved.spec);
}

bool SplitAtSeparator(int argc, char** argv, std::vector<std::string>* before, std::vector<std::string>* command) {
  bool found = false;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    if (!found && arg == "--") {
      found = true;
      continue;
    }
    (found ? command : before)->push_back(std::move(arg));
  }
  return found;
}

void PrintError(const std::string& message) {
  // Messages quote paths and values from files a repository controls: a
  // terminal escape in them (C0 or C1) is shown, never sent.
  // A stderr whose reader stopped draining it holds corral only until the
  // user stops it (base/stream_write.h).
  (void)WriteToStream(STDERR_FILENO, "corral: " + EscapeControls(message) + "\n");
}

}  // namespace corral::cli
