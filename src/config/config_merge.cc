#include "config/config_merge.h"

#include <algorithm>

#include "base/mutant.h"
#include "policy/path.h"
#include "policy/policy.h"

namespace corral {
namespace {

template <typename T>
void Set(std::optional<T>& field, const std::optional<Sourced<T>>& value, std::string_view key, Config& config) {
  if (!value) return;
  field = value->value;
  config.origins[std::string(key)] = value->where.ToString();
}

// "sandbox.<key>": the dotted key of a setting, in messages and origins.
template <typename S>
std::string SandboxKey(const S& setting) {
  return "sandbox." + std::string(setting.key);
}

void Append(std::vector<std::string>& to, const std::vector<Sourced<std::string>>& items) {
  for (const Sourced<std::string>& item : items) {
    if (std::find(to.begin(), to.end(), item.value) == to.end()) to.push_back(item.value);
  }
}

// A path grant also records where it was written, for errors found later,
// and whether only the project file wrote it.
void AppendPaths(std::vector<std::string>& to, const std::vector<Sourced<std::string>>& items, std::string_view key,
                 ConfigScope scope, Config& config) {
  Append(to, items);
  for (const Sourced<std::string>& item : items) {
    bool first = config.path_origins.try_emplace(item.value, item.where.ToString() + ": " + std::string(key)).second;
    if (first && scope == ConfigScope::kProject) config.project_paths.push_back(item.value);
  }
}

// One list's elements into the Config: a path grant with where it was
// written.
void AppendList(const ListSetting& setting, std::vector<std::string>& to,
                const std::vector<Sourced<std::string>>& items, ConfigScope scope, Config& config) {
  if (setting.element == ListElement::kPath) {
    AppendPaths(to, items, SandboxKey(setting), scope, config);
  } else {
    Append(to, items);
  }
}

void ApplyUser(const ConfigLayer& user, Config& config) {
  std::optional<Sourced<Mode>> mode = user.EffectiveMode();
  if (mode) {
    config.mode = mode->value;
    config.origins[user.mode ? "sandbox.mode" : "sandbox.bash"] = mode->where.ToString();
  }
  Set(config.acknowledge_danger, user.acknowledge_danger, "sandbox.i_understand_danger_full_access", config);
  Set(config.workspace_root, user.workspace_root, "sandbox.workspace_root", config);
#define CORRAL_SET_SETTING(member, Setter, setting) Set(config.member, user.member, SandboxKey(setting), config);
  CORRAL_SANDBOX_SETTINGS(CORRAL_SET_SETTING)
#undef CORRAL_SET_SETTING
  Set(config.approval_policy, user.approval_policy, "approval.policy", config);
  if (user.preset) {
    config.preset = std::string(user.preset->value.name);
    config.origins["approval.preset"] = user.preset->where.ToString();
  }
  Set(config.audit_trail, user.audit_trail, "audit.trail", config);
  if (user.backend) {
    config.backend = user.backend->value;
    config.origins["sandbox.backend"] = user.backend->where.ToString();
  }
#define CORRAL_APPEND_USER_LIST(member, Adder, setting) AppendList(setting, config.member, user.member, ConfigScope::kUser, config);
  CORRAL_CONFIG_LISTS(CORRAL_APPEND_USER_LIST)
#undef CORRAL_APPEND_USER_LIST
  config.files_read.push_back(user.file);
}

class ProjectMerge {
 public:
  ProjectMerge(const ConfigLayer& project, const MergeContext& context, Config& config)
      : project_(project), context_(context), config_(config) {}

  Status Apply() {
    // Decided against what the user (or the defaults) allow, before the
    // project narrows anything.
    // The user's own settings, else the user's preset (the --preset flag,
    // then the user file's approval.preset), else the defaults.
    std::optional<Preset> preset = context_.preset;
    if (!preset && config_.preset) {
      Result<Preset> named = ResolvePreset(*config_.preset);
      if (named.ok()) preset = *named;
    }
    const bool ceiling = !MutantActive(Mutant::kPresetCeiling);  // the mutant: the preset is no ceiling
    const Mode mode_ceiling = config_.mode ? *config_.mode : preset && ceiling ? preset->mode : Mode::kWorkspaceWrite;
    const std::optional<ApprovalPolicy> approval_ceiling =
        config_.approval_policy ? config_.approval_policy
                                : preset && ceiling ? std::optional<ApprovalPolicy>(preset->approval) : std::nullopt;
    const std::string from_preset = preset ? "the preset \"" + std::string(preset->name) + "\"" : std::string();
    mode_source_ = config_.mode || !preset ? "the user config" : from_preset;
    approval_source_ = config_.approval_policy || !preset ? "the user config" : from_preset;
    CORRAL_TRY(OnlyUser(project_.workspace_root, "sandbox.workspace_root", "set the workspace root"));
    CORRAL_TRY(OnlyUser(project_.backend, "sandbox.backend", "choose the backend"));
    // A repository must not be able to send the trail elsewhere, or to stderr where it is lost.
    if (MutantActive(Mutant::kProjectAuditTrail)) {  // the mutant: the project's trail is taken
      Set(config_.audit_trail, project_.audit_trail, "audit.trail", config_);
    } else {
      CORRAL_TRY(OnlyUser(project_.audit_trail, "audit.trail", "redirect the audit trail"));
    }
    CORRAL_TRY(CheckMode(mode_ceiling));
    CORRAL_TRY(CheckAcknowledgement());
#define CORRAL_NARROW_SETTING(member, Setter, setting) CORRAL_TRY(Narrow(setting, project_.member, config_.member));
    CORRAL_SANDBOX_SETTINGS(CORRAL_NARROW_SETTING)
#undef CORRAL_NARROW_SETTING
#define CORRAL_CHECK_LIST(member, Adder, setting) CORRAL_TRY(CheckList(setting, project_.member, config_.member));
    CORRAL_CONFIG_LISTS(CORRAL_CHECK_LIST)
#undef CORRAL_CHECK_LIST
    CORRAL_TRY(CheckApproval(approval_ceiling));
    CORRAL_TRY(CheckPreset(mode_ceiling, approval_ceiling));
#define CORRAL_APPEND_PROJECT_LIST(member, Adder, setting) \
  AppendList(setting, config_.member, project_.member, ConfigScope::kProject, config_);
    CORRAL_CONFIG_LISTS(CORRAL_APPEND_PROJECT_LIST)
#undef CORRAL_APPEND_PROJECT_LIST
    config_.files_read.push_back(project_.file);
    return Ok();
  }

 private:
  Error Widens(const SourcePos& where, std::string_view key, const std::string& what) const {
    return ConfigError(where, key, what, "config_project_widens");
  }
  std::string OnlyUserCan(std::string_view action) const {
    return "only the user config (" + context_.user_file + ") can " + std::string(action);
  }

  template <typename T>
  Status OnlyUser(const std::optional<Sourced<T>>& value, std::string_view key, std::string_view action) const {
    if (!value) return Ok();
    return Widens(value->where, key, "the project config cannot " + std::string(action) + ": " + OnlyUserCan(action));
  }

  Status CheckMode(Mode ceiling) {
    if (project_.bash && project_.bash->value == BashSetting::kOff) {
      return Widens(project_.bash->where, "sandbox.bash",
                    "the project config cannot turn bash off (shell commands would run unconfined): " +
                        OnlyUserCan("set bash = \"off\""));
    }
    if (project_.mode) {
      if (IsStrictlyWider(project_.mode->value, ceiling) && !MutantActive(Mutant::kConfigNarrow)) {
        return Widens(project_.mode->where, "sandbox.mode",
                      "the project config cannot widen the mode from " + std::string(ModeName(ceiling)) + " (" +
                          mode_source_ + ") to " + std::string(ModeName(project_.mode->value)) + ": " +
                          OnlyUserCan("widen the mode"));
      }
      Set(config_.mode, project_.mode, "sandbox.mode", config_);
    }
    // bash = "enforce" keeps shell commands in the sandbox even if the user
    // chose danger-full-access.
    if (project_.bash && config_.mode == Mode::kDangerFullAccess) {
      config_.mode = Mode::kWorkspaceWrite;
      config_.origins["sandbox.mode"] = project_.bash->where.ToString();
    }
    return Ok();
  }

  Status CheckAcknowledgement() {
    if (!project_.acknowledge_danger) return Ok();
    constexpr std::string_view kKey = "sandbox.i_understand_danger_full_access";
    constexpr std::string_view kAction = "acknowledge danger-full-access";
    if (project_.acknowledge_danger->value) {
      return Widens(project_.acknowledge_danger->where, kKey,
                    "the project config cannot " + std::string(kAction) + ": " + OnlyUserCan(kAction));
    }
    Set(config_.acknowledge_danger, project_.acknowledge_danger, kKey, config_);
    return Ok();
  }

  // One scalar setting (policy/spec_fields.h) as its ProjectRule allows. A
  // switch's wide value is true, a choice's its last name.
  template <typename T, typename SpecType, typename Arg>
  Status Narrow(const Setting<T, SpecType, Arg>& setting, const std::optional<Sourced<T>>& asked,
                std::optional<T>& field) {
    if (!asked) return Ok();
    if constexpr (std::is_same_v<T, NetworkMode>) {
      if (MutantActive(Mutant::kProjectNetwork)) return Ok();
    }
    const std::string key = SandboxKey(setting);
    if constexpr (std::is_same_v<T, bool> || std::is_enum_v<T>) {
      T wide;
      if constexpr (std::is_same_v<T, bool>) {
        wide = setting.narrow == NarrowSide::kOff;
      } else {
        wide = static_cast<T>(setting.choices.size() - 1);
      }
      const bool user_is_wide = setting.project == ProjectRule::kWideIfUserIsWide && field == wide;
      if (asked->value == wide && !user_is_wide) {
        return Widens(asked->where, key,
                      "the project config cannot " + std::string(setting.refusal) + ": " +
                          OnlyUserCan(setting.user_action));
      }
    } else {
      static_assert(std::is_same_v<T, std::chrono::seconds> || std::is_same_v<T, uint64_t>);
      // The user's value, else the default (host memory is the user's: a
      // project may shrink the tmpfs, never grow it); no default is no bound.
      std::optional<T> ceiling = field;
      if (!ceiling) ceiling = setting.spec_default;
      bool unbounded = false;
      if constexpr (std::is_same_v<SpecType, std::optional<uint64_t>>) {
        unbounded = MutantActive(Mutant::kProjectLimits) ||
                    (setting.key == kMaxCpusSetting.key && MutantActive(Mutant::kProjectCpus));
      }
      if (!unbounded && ceiling && asked->value > *ceiling) {
        std::string ceiling_text;
        std::string asked_text;
        if constexpr (std::is_same_v<T, std::chrono::seconds>) {
          ceiling_text = std::to_string(ceiling->count()) + " seconds";
          asked_text = std::to_string(asked->value.count());
        } else if constexpr (std::is_same_v<SpecType, std::optional<uint64_t>>) {
          ceiling_text = LimitText(setting, *ceiling);
          asked_text = LimitText(setting, asked->value);
        } else {
          ceiling_text = TmpfsSizeText(*ceiling);
          asked_text = TmpfsSizeText(asked->value);
        }
        return Widens(asked->where, key,
                      "the project config may lower the " + std::string(setting.refusal) + " (" + ceiling_text +
                          (field ? " in the user config" : " by default") + ") but not raise it to " + asked_text);
      }
    }
    Set(field, asked, key, config_);
    return Ok();
  }

  // One list as its ProjectListRule allows; `user` is what the user file
  // gave.
  Status CheckList(const ListSetting& setting, const std::vector<Sourced<std::string>>& asked,
                   const std::vector<std::string>& user) const {
    switch (setting.project) {
      case ProjectListRule::kInsideWorkspace: return CheckPaths(asked, SandboxKey(setting));
      case ProjectListRule::kUserAllows: return CheckNames(setting, asked, user);
      case ProjectListRule::kAdds: return Ok();
      case ProjectListRule::kUserOnly:
        if (asked.empty() || MutantActive(Mutant::kProjectAcceptRung)) return Ok();
        return Widens(asked[0].where, SandboxKey(setting) + "[0]",
                      "the project config cannot accept the rung " + asked[0].value + ": " +
                          OnlyUserCan("set " + std::string(setting.key)));
      case ProjectListRule::kNotAConfigKey: break;
    }
    // A flag-only list has no key to read, so a project file cannot reach here.
    return Error(ErrorKind::kInternal, "sandbox." + std::string(setting.key) + " is not a config key");
  }

  Status CheckPaths(const std::vector<Sourced<std::string>>& paths, const std::string& key) const {
    for (size_t i = 0; i < paths.size(); ++i) {
      const std::string& path = paths[i].value;
      std::string element = key + "[" + std::to_string(i) + "]";
      bool inside = !context_.workspace_root.empty() && IsWithin(path, context_.workspace_root);
      if (inside && config_.workspace_root) inside = IsWithin(path, *config_.workspace_root);
      if (!inside) {
        std::string root = config_.workspace_root && *config_.workspace_root != context_.workspace_root
                               ? context_.workspace_root + " and " + *config_.workspace_root
                               : context_.workspace_root;
        return Widens(paths[i].where, element,
                      "the project config can grant only paths inside the workspace (" +
                          (root.empty() ? std::string("none is known") : root) + "), not " +
                          QuoteForMessage(path) + ": " + OnlyUserCan("grant paths outside it"));
      }
    }
    return Ok();
  }

  // A name the user file gave, or (allow_env) one of the built-in allowlist.
  Status CheckNames(const ListSetting& setting, const std::vector<Sourced<std::string>>& names,
                    const std::vector<std::string>& user) const {
    static const std::vector<std::string> kNone;
    const std::vector<std::string>& builtin = setting.element == ListElement::kEnvName ? DefaultEnvAllowlist() : kNone;
    for (size_t i = 0; i < names.size(); ++i) {
      const std::string& name = names[i].value;
      bool allowed = std::find(user.begin(), user.end(), name) != user.end() ||
                     std::find(builtin.begin(), builtin.end(), name) != builtin.end();
      if (!allowed) {
        std::string what;
        switch (setting.element) {
          case ListElement::kToolchain: what = "grant the toolchain " + name; break;
          case ListElement::kAllowHost: what = "let the command reach " + name; break;
          case ListElement::kPrivateRange: what = "let the proxy connect into " + name; break;
          case ListElement::kLocalPort: what = "open the host's 127.0.0.1:" + name; break;
          case ListElement::kConnectPort: what = "open TCP port " + name + " of every host"; break;
          case ListElement::kDnsName: what = "let " + name + " resolve"; break;
          default: what = "pass " + name + " through"; break;
        }
        return Widens(names[i].where, SandboxKey(setting) + "[" + std::to_string(i) + "]",
                      "the project config cannot " + what + ": the user config does not allow it, and " +
                          OnlyUserCan("add names to " + std::string(setting.key)));
      }
    }
    return Ok();
  }

  // Without a user setting, anything but allow-all is a tightening.
  static bool Looser(ApprovalPolicy asked, const std::optional<ApprovalPolicy>& ceiling) {
    return ceiling ? ApprovalLooseness(asked) > ApprovalLooseness(*ceiling) : asked == ApprovalPolicy::kAllowAll;
  }

  Status CheckApproval(const std::optional<ApprovalPolicy>& ceiling) {
    if (!project_.approval_policy) return Ok();
    const ApprovalPolicy asked = project_.approval_policy->value;
    if (Looser(asked, ceiling)) {
      return Widens(project_.approval_policy->where, "approval.policy",
                    "the project config cannot loosen approval to \"" + std::string(ApprovalPolicyName(asked)) +
                        "\"" +
                        (ceiling ? " (" + approval_source_ + " says \"" + std::string(ApprovalPolicyName(*ceiling)) +
                                       "\")"
                                 : std::string()) +
                        ": " + OnlyUserCan("loosen approval"));
    }
    Set(config_.approval_policy, project_.approval_policy, "approval.policy", config_);
    return Ok();
  }

  // A preset is a mode and an approval policy; neither may exceed the user's.
  Status CheckPreset(Mode mode_ceiling, const std::optional<ApprovalPolicy>& approval_ceiling) {
    if (!project_.preset) return Ok();
    const Preset& asked = project_.preset->value;
    std::string why;
    if (config_.preset) {
      Result<Preset> user = ResolvePreset(*config_.preset);
      if (user.ok() && (IsStrictlyWider(asked.mode, user->mode) ||
                        ApprovalLooseness(asked.approval) > ApprovalLooseness(user->approval))) {
        why = "it is wider than the user's preset \"" + *config_.preset + "\"";
      }
    }
    if (why.empty() && IsStrictlyWider(asked.mode, mode_ceiling)) {
      why = "its mode " + std::string(ModeName(asked.mode)) + " is wider than " + std::string(ModeName(mode_ceiling));
    }
    if (why.empty() && Looser(asked.approval, approval_ceiling)) {
      why = "its approval policy " + std::string(ApprovalPolicyName(asked.approval)) + " is looser than the user's";
    }
    if (!why.empty()) {
      return Widens(project_.preset->where, "approval.preset",
                    "the project config cannot choose preset \"" + std::string(asked.name) + "\": " + why + "; " +
                        OnlyUserCan("choose a wider preset"));
    }
    config_.preset = std::string(asked.name);
    config_.origins["approval.preset"] = project_.preset->where.ToString();
    return Ok();
  }

  const ConfigLayer& project_;
  const MergeContext& context_;
  Config& config_;
  std::string mode_source_;      // where the mode ceiling came from
  std::string approval_source_;  // where the approval ceiling came from
};

}  // namespace

Result<Config> MergeConfigLayers(const std::optional<ConfigLayer>& user, const std::optional<ConfigLayer>& project,
                                 const MergeContext& context) {
  Config config;
  if (user) ApplyUser(*user, config);
  if (project) CORRAL_TRY(ProjectMerge(*project, context, config).Apply());
  return config;
}

}  // namespace corral
