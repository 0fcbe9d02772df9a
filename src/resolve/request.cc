#include "resolve/request.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>

#include "base/mutant.h"
#include "config/config.h"
#include "config/profile_file.h"
#include "policy/path_text.h"
#include "resolve/repository_top.h"

namespace corral {
namespace {

template <typename T>
void Append(std::vector<T>& to, const std::vector<T>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

LoadOptions OptionsFor(const RunRequest& request, const HostContext& host, const std::string& workspace) {
  LoadOptions options = DefaultLoadOptions(host.home, workspace.empty() ? host.cwd : workspace);
  if (request.user_config) {
    options.user_path = *request.user_config;
    options.user_file_rule = UserFileRule::kMustExist;
  }
  options.user_layer = request.user_layer.get();
  return options;
}

Result<Config> ReadConfig(const RunRequest& request, const HostContext& host, const std::string& workspace) {
  if (request.no_config) return Config{};
  LoadOptions options = OptionsFor(request, host, workspace);
  if (request.preset) {
    CORRAL_ASSIGN_OR_RETURN(Preset preset, ResolvePreset(*request.preset));
    options.preset = preset;
  }
  if (workspace.empty()) options.project_path.reset();  // no workspace, no project file
  return LoadConfig(options);
}

// One list's explicit overrides, added to the layers'. A path, as in a config
// file, may start with "~" (the home); the same path twice under one flag is
// a usage error, and a path a config file granted too is the flag's grant.
Status AppendOverrides(const ListSetting& setting, const std::vector<std::string>& given, const HostContext& host,
                       std::vector<std::string>& to, PolicySpec& spec) {
  if (setting.element != ListElement::kPath) {
    Append(to, given);
    return Ok();
  }
  std::vector<std::string> named;  // canonical text where it has one
  for (const std::string& text : given) {
    const std::string flag = std::string(setting.flag) + " " + text;
    Result<std::string> expanded = ExpandHome(text, host.home);
    if (!expanded.ok()) return Error(ErrorKind::kUsage, flag + ": " + expanded.error().message());
    Result<std::string> canonical = CanonicalAbsolutePath(*expanded);
    const std::string& path = canonical.ok() ? *canonical : *expanded;
    if (std::find(named.begin(), named.end(), path) != named.end()) {
      return Error(ErrorKind::kUsage, flag + ": given twice; write a flag once per path");
    }
    named.push_back(path);
    std::erase(spec.user_config_grants, path);
    std::erase(spec.project_config_grants, path);
    to.push_back(std::move(expanded).value());
  }
  return Ok();
}

// An explicit override of a scalar setting: a switch turns it on, anything
// else replaces the layers' value.
bool IsSet(bool value) { return value; }
template <typename T>
bool IsSet(const std::optional<T>& value) {
  return value.has_value();
}
void ApplyOverride(bool& to, bool value) { to = to || value; }
template <typename T, typename To>
void ApplyOverride(To& to, const std::optional<T>& value) {
  if (value) to = *value;
}

}  // namespace

bool SpecOverrides::HasGrants() const {
  bool setting = false;
#define CORRAL_GRANT_SETTING(member, Setter, s) \
  if (s.profile == ProfileRule::kIsAGrant && IsSet(member)) setting = true;
  CORRAL_SANDBOX_SETTINGS(CORRAL_GRANT_SETTING)
#undef CORRAL_GRANT_SETTING
#define CORRAL_GRANT_LIST(member, Adder, s) \
  if (s.profile == ProfileRule::kIsAGrant && !member.empty()) setting = true;
  CORRAL_SANDBOX_LISTS(CORRAL_GRANT_LIST)
#undef CORRAL_GRANT_LIST
  return workspace || no_workspace || setting;
}

Status ReadUserConfigOnce(RunRequest& request, const HostContext& host) {
  if (request.no_config) return Ok();
  if (!request.user_layer) {
    request.user_layer = std::make_shared<const Result<std::optional<ConfigLayer>>>(
        LoadUserLayer(OptionsFor(request, host, std::string())));
  }
  if (!request.user_layer->ok()) return request.user_layer->error();
  return Ok();
}

Result<std::optional<std::string>> ConfiguredAuditTrail(const RunRequest& request, const HostContext& host) {
  RunRequest user_only = request;
  user_only.preset.reset();  // a preset says nothing about the trail
  CORRAL_ASSIGN_OR_RETURN(Config config, ReadConfig(user_only, host, std::string()));
  return config.audit_trail;
}

Result<ResolvedRequest> ResolveRequest(const RunRequest& given, const HostContext& host) {
  RunRequest request = given;  // keeps the user file once read (ReadUserConfigOnce)
  ResolvedRequest out;
  const SpecOverrides& flags = request.overrides;

  if (request.session_id) {
    Result<SessionStore> store =
        request.session_dir ? SessionStore::Open(*request.session_dir) : SessionStore::OpenDefault();
    if (!store.ok()) return std::move(store).error();
    CORRAL_ASSIGN_OR_RETURN(Session session, store->Load(*request.session_id));
    out.session = std::move(session);
  }

  // The workspace decides which project file applies: an explicit one, else
  // the session's cwd, else the user config's fallback root, else the cwd.
  std::string workspace;
  // Where no layer names a workspace, a run from inside a git repository
  // takes its top.
  std::string top_note;
  std::optional<std::string> top;
  if (!flags.workspace && !out.session && !flags.no_workspace) top = RepositoryTop(host, &top_note);
  const std::string cwd_workspace = top.value_or(host.cwd);
  if (flags.workspace) {
    workspace = *flags.workspace;
  } else if (out.session) {
    workspace = out.session->cwd();
  } else if (!flags.no_workspace) {
    (void)ReadUserConfigOnce(request, host);  // kept, error or not: the merge below takes it too
    CORRAL_ASSIGN_OR_RETURN(Config user_only, ReadConfig(request, host, std::string()));
    workspace = user_only.workspace_root.value_or(cwd_workspace);
  }
  if (flags.no_workspace) workspace.clear();
  CORRAL_ASSIGN_OR_RETURN(Config config, ReadConfig(request, host, workspace));
  out.config_files = config.files_read;
  out.backend = std::string(BackendChoiceName(config.backend));
  out.audit_trail = config.audit_trail;

  // The base spec: a profile, or the config files over the defaults.
  if (request.profile) {
    if (flags.HasGrants()) {
      return Error(ErrorKind::kUsage, "--profile describes the whole authority; it cannot be combined with grant "
                                      "flags (edit the profile instead)");
    }
    CORRAL_ASSIGN_OR_RETURN(Profile profile, LoadProfileFile(*request.profile, host.home, host.uid));
    if (request.profile_ceiling) {
      CORRAL_ASSIGN_OR_RETURN(Profile ceiling, LoadProfileFile(*request.profile_ceiling, host.home, host.uid));
      profile = Restrict(profile, ceiling);
    }
    CORRAL_ASSIGN_OR_RETURN(ProfileSpec mapped, ToPolicySpec(profile));
    out.spec = std::move(mapped.spec);
    // A profile replaces the config's grants and mode, never its hiding.
    Append(out.spec.forbid_read, config.forbid_read);
    out.gated = std::move(mapped.gated);
    out.profile_fingerprint = Fingerprint(profile);
  } else {
    CORRAL_TRY(config.CheckPaths());
    config.ApplyTo(out.spec);
  }

  // A preset is the deployment's default mode and approval policy.
  std::optional<std::string> preset_name = request.preset ? request.preset : config.preset;
  std::optional<Preset> preset;
  if (preset_name) {
    CORRAL_ASSIGN_OR_RETURN(Preset resolved, ResolvePreset(*preset_name));
    preset = resolved;
    if (!request.profile && !config.mode) out.spec.mode = preset->mode;
  }

  // Mode: explicit override, then the session's last sandbox/mode event, then
  // the default. Workspace root: the session's cwd, then the fallback root:
  // a profile's own (the profile replaces the config files' grants, so the
  // config's workspace_root must not swap in another tree), else the config's.
  PolicyService service(out.spec.mode, request.profile ? out.spec.workspace : config.workspace_root);
  out.resolution = service.Explain(PolicyRequest{flags.mode, out.session ? &*out.session : nullptr});
  // A profile is the whole authority, and its ceiling a ceiling: neither
  // --mode nor a session's sandbox/mode event may widen its mode.
  const bool ceiling = !MutantActive(Mutant::kProfileCeiling);
  if (request.profile && ceiling && IsStrictlyWider(out.resolution.policy.mode, out.spec.mode)) {
    std::string by = out.resolution.mode_layer == ModeLayer::kOverride
                         ? "--mode " + std::string(ModeName(out.resolution.policy.mode))
                         : "the session's sandbox/mode event (" + std::string(ModeName(out.resolution.policy.mode)) +
                               ")";
    return Error(ErrorKind::kPolicy, by + " is wider than " + std::string(ModeName(out.spec.mode)) +
                                         ", all that the profile" +
                                         (request.profile_ceiling ? std::string(" and its ceiling") : std::string()) +
                                         " allow; nothing was run. Narrow the mode, or edit the profile")
        .WithCode("profile_widened");
  }
  if (request.profile) out.mode_ceiling = out.spec.mode;
  out.spec.mode = out.resolution.policy.mode;
  if (flags.workspace) {
    // --workspace beats the session's cwd: say so in the resolution too.
    out.spec.workspace = flags.workspace;
    out.resolution.policy.workspace_root = flags.workspace;
    out.resolution.root_layer = RootLayer::kOverride;
  } else if (out.resolution.policy.workspace_root && !flags.no_workspace) {
    out.spec.workspace = out.resolution.policy.workspace_root;
  }

  // The remaining explicit overrides.
  // Who acknowledged danger-full-access, for the audit trail.
  if (flags.acknowledge_danger) {
    out.danger_acknowledged_by = "flag";
  } else if (out.spec.acknowledge_danger && request.profile) {
    out.danger_acknowledged_by = "profile " + *request.profile;
  } else if (out.spec.acknowledge_danger) {
    auto origin = config.origins.find("sandbox.i_understand_danger_full_access");
    out.danger_acknowledged_by = "config " + (origin == config.origins.end() ? std::string("file") : origin->second);
  }
  out.spec.acknowledge_danger = out.spec.acknowledge_danger || flags.acknowledge_danger;
  if (flags.no_workspace) {
    out.spec.no_workspace = true;
    out.spec.workspace.reset();
    out.resolution.policy.workspace_root.reset();
    out.resolution.root_layer = RootLayer::kNone;
  }
  if (!out.spec.workspace && !out.spec.no_workspace) {
    // No layer named one: the policy takes the working directory. Say so.
    out.resolution.policy.workspace_root = cwd_workspace;
    out.resolution.root_layer = top ? RootLayer::kRepository : RootLayer::kCwd;
    out.resolution.root_note = top_note;
    if (top) out.spec.workspace = top;
  }
#define CORRAL_OVERRIDE_LIST(member, Adder, setting) \
  CORRAL_TRY(AppendOverrides(setting, flags.member, host, out.spec.member, out.spec));
  CORRAL_SANDBOX_LISTS(CORRAL_OVERRIDE_LIST)
#undef CORRAL_OVERRIDE_LIST
  if (flags.pin_sha256) out.spec.pin_sha256 = flags.pin_sha256;
#define CORRAL_OVERRIDE_SETTING(member, Setter, setting) ApplyOverride(out.spec.member, flags.member);
  CORRAL_SANDBOX_SETTINGS(CORRAL_OVERRIDE_SETTING)
#undef CORRAL_OVERRIDE_SETTING

  // The files corral itself trusts stay out of the command's reach: a user
  // config or profile named on the command line is hidden (and so cannot be
  // changed) wherever a grant would show it.
  std::optional<std::string> user_config = request.no_config ? std::nullopt : request.user_config;
  // Canonical, however it was spelled: relative, or through a symlink.
  for (const std::optional<std::string>& file : {user_config, request.profile, request.profile_ceiling}) {
    if (!file || file->empty()) continue;
    char resolved[PATH_MAX];
    if (::realpath(file->c_str(), resolved) != nullptr) {
      out.spec.own_files.push_back(resolved);
    } else if (errno == ENOENT) {
      // A user config that does not exist yet: kept from being created.
      out.spec.own_files.push_back(file->front() == '/' ? *file : host.cwd + "/" + *file);
    } else {
      return Error::FromErrno(ErrorKind::kUsage, *file + ": cannot resolve its canonical path", "realpath", errno);
    }
  }

  // Approval: the flag, then the config, then the preset, then allow-all (the
  // user typed the command).
  if (request.approval) {
    out.approval = *request.approval;
    out.approval_source = "flag";
  } else if (config.approval_policy) {
    out.approval = *config.approval_policy;
    out.approval_source = "config";
  } else if (preset) {
    out.approval = preset->approval;
    out.approval_source = "preset";
  } else {
    out.approval = ApprovalPolicy::kAllowAll;
    out.approval_source = "default";
  }
  if (preset) {
    std::optional<Mode> mode_override = flags.mode ? flags.mode : config.mode;
    std::optional<ApprovalPolicy> approval_override =
        request.approval ? request.approval : config.approval_policy;
    out.preset = DerivedState(*preset, mode_override, approval_override);
  }
  return out;
}

}  // namespace corral
