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

void Append(std::vector<std::string>& to, const std::vector<Sourced<std::string>>& items) {
  for (const Sourced<std::string>& item : items) {
    if (std::find(to.begin(), to.end(), item.value) == to.end()) to.push_back(item.value);
  }
}

// A path grant also records where it was written, for errors found later.
void AppendPaths(std::vector<std::string>& to, const std::vector<Sourced<std::string>>& items, std::string_view key,
                 Config& config) {
  Append(to, items);
  for (const Sourced<std::string>& item : items) {
    config.path_origins.try_emplace(item.value, item.where.ToString() + ": " + std::string(key));
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
  Set(config.network, user.network, "sandbox.network", config);
  Set(config.timeout, user.timeout, "sandbox.timeout", config);
  Set(config.tmpfs_size, user.tmpfs_size, "sandbox.tmpfs_size", config);
  Set(config.best_effort, user.best_effort, "sandbox.best_effort", config);
  Set(config.home, user.home, "sandbox.home", config);
  Set(config.approval_policy, user.approval_policy, "approval.policy", config);
  if (user.preset) {
    config.preset = std::string(user.preset->value.name);
    config.origins["approval.preset"] = user.preset->where.ToString();
  }
  if (user.backend) {
    config.backend = user.backend->value;
    config.origins["sandbox.backend"] = user.backend->where.ToString();
  }
  AppendPaths(config.allow_read, user.allow_read, "sandbox.allow_read", config);
  AppendPaths(config.allow_write, user.allow_write, "sandbox.allow_write", config);
  AppendPaths(config.allow_exec, user.allow_exec, "sandbox.allow_exec", config);
  Append(config.allow_env, user.allow_env);
  Append(config.forbid_read, user.forbid_read);
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
    CORRAL_TRY(CheckMode(mode_ceiling));
    CORRAL_TRY(CheckBooleans());
    CORRAL_TRY(CheckNetwork());
    CORRAL_TRY(CheckTimeout());
    CORRAL_TRY(CheckTmpfsSize());
    CORRAL_TRY(CheckPaths(project_.allow_read, "sandbox.allow_read"));
    CORRAL_TRY(CheckPaths(project_.allow_write, "sandbox.allow_write"));
    CORRAL_TRY(CheckPaths(project_.allow_exec, "sandbox.allow_exec"));
    CORRAL_TRY(CheckEnv());
    CORRAL_TRY(CheckApproval(approval_ceiling));
    CORRAL_TRY(CheckPreset(mode_ceiling, approval_ceiling));
    AppendPaths(config_.allow_read, project_.allow_read, "sandbox.allow_read", config_);
    AppendPaths(config_.allow_write, project_.allow_write, "sandbox.allow_write", config_);
    AppendPaths(config_.allow_exec, project_.allow_exec, "sandbox.allow_exec", config_);
    Append(config_.allow_env, project_.allow_env);
    Append(config_.forbid_read, project_.forbid_read);
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

  Status CheckBooleans() {
    struct Rule {
      const std::optional<Sourced<bool>>& value;
      std::optional<bool>& field;
      std::string_view key;
      std::string_view action;
    };
    const Rule rules[] = {
        {project_.acknowledge_danger, config_.acknowledge_danger, "sandbox.i_understand_danger_full_access",
         "acknowledge danger-full-access"},
        {project_.best_effort, config_.best_effort, "sandbox.best_effort", "set best_effort"},
    };
    for (const Rule& rule : rules) {
      if (!rule.value) continue;
      if (rule.value->value) {
        return Widens(rule.value->where, rule.key,
                      "the project config cannot " + std::string(rule.action) + ": " + OnlyUserCan(rule.action));
      }
      Set(rule.field, rule.value, rule.key, config_);
    }
    if (project_.home) {
      if (project_.home->value == HomeMode::kReal) {
        return Widens(project_.home->where, "sandbox.home",
                      "the project config cannot show the real home: " + OnlyUserCan("set home = \"real\""));
      }
      Set(config_.home, project_.home, "sandbox.home", config_);
    }
    return Ok();
  }

  Status CheckNetwork() {
    if (!project_.network || MutantActive(Mutant::kProjectNetwork)) return Ok();
    if (project_.network->value == NetworkMode::kAll && config_.network != NetworkMode::kAll) {
      return Widens(project_.network->where, "sandbox.network",
                    "the project config cannot open the network: " + OnlyUserCan("set network = true"));
    }
    Set(config_.network, project_.network, "sandbox.network", config_);
    return Ok();
  }

  Status CheckTimeout() {
    if (!project_.timeout) return Ok();
    if (config_.timeout && project_.timeout->value > *config_.timeout) {
      return Widens(project_.timeout->where, "sandbox.timeout",
                    "the project config may lower the timeout (" + std::to_string(config_.timeout->count()) +
                        " seconds in the user config) but not raise it to " +
                        std::to_string(project_.timeout->value.count()));
    }
    Set(config_.timeout, project_.timeout, "sandbox.timeout", config_);
    return Ok();
  }

  // Host memory is the user's: a project may shrink the private tmpfs, never
  // grow it past the user's setting or the default.
  Status CheckTmpfsSize() {
    if (!project_.tmpfs_size) return Ok();
    uint64_t ceiling = config_.tmpfs_size.value_or(kDefaultTmpfsSize);
    if (project_.tmpfs_size->value > ceiling) {
      return Widens(project_.tmpfs_size->where, "sandbox.tmpfs_size",
                    "the project config may lower the tmpfs size (" + TmpfsSizeText(ceiling) +
                        (config_.tmpfs_size ? " in the user config" : " by default") + ") but not raise it to " +
                        TmpfsSizeText(project_.tmpfs_size->value));
    }
    Set(config_.tmpfs_size, project_.tmpfs_size, "sandbox.tmpfs_size", config_);
    return Ok();
  }

  Status CheckPaths(const std::vector<Sourced<std::string>>& paths, std::string_view key) const {
    for (size_t i = 0; i < paths.size(); ++i) {
      const std::string& path = paths[i].value;
      std::string element = std::string(key) + "[" + std::to_string(i) + "]";
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

  Status CheckEnv() const {
    const std::vector<std::string>& builtin = DefaultEnvAllowlist();
    for (size_t i = 0; i < project_.allow_env.size(); ++i) {
      const std::string& name = project_.allow_env[i].value;
      bool allowed = std::find(config_.allow_env.begin(), config_.allow_env.end(), name) != config_.allow_env.end() ||
                     std::find(builtin.begin(), builtin.end(), name) != builtin.end();
      if (!allowed) {
        return Widens(project_.allow_env[i].where, "sandbox.allow_env[" + std::to_string(i) + "]",
                      "the project config cannot pass " + name +
                          " through: the user config does not allow it, and " + OnlyUserCan("add names to allow_env"));
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
