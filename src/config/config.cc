#include "config/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "config/config_file.h"
#include "config/config_merge.h"
#include "config/config_read.h"
#include "policy/path.h"
#include "policy/path_text.h"

namespace corral {
namespace {

Result<std::optional<ConfigLayer>> LoadLayer(const std::optional<std::string>& path, ConfigScope scope,
                                             const LoadOptions& options) {
  if (!path) return std::optional<ConfigLayer>();
  WriterRule owner = scope == ConfigScope::kUser ? WriterRule::kCallerOrRoot : WriterRule::kAnyone;
  CORRAL_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigFile(*path, owner, options.uid));
  if (!text && scope == ConfigScope::kUser && options.user_file_rule == UserFileRule::kMustExist) {
    return Error(ErrorKind::kConfig, *path + ": no such config file (named by --config; --no-config reads none)")
        .WithCode("config_missing");
  }
  if (!text) return std::optional<ConfigLayer>();
  CORRAL_ASSIGN_OR_RETURN(ConfigLayer layer, ParseConfigText(*text, ParseContext{*path, scope, options.home}));
  return std::optional<ConfigLayer>(std::move(layer));
}

}  // namespace

std::string_view BackendChoiceName(BackendChoice backend) {
  switch (backend) {
    case BackendChoice::kAuto: return "auto";
    case BackendChoice::kNative: return "native";
    case BackendChoice::kBubblewrap: return "bubblewrap";
    case BackendChoice::kSeatbelt: return "seatbelt";
    case BackendChoice::kUnavailable: return "unavailable";
  }
  return "auto";
}

std::optional<BackendChoice> ParseBackendChoice(std::string_view text) {
  for (BackendChoice backend : {BackendChoice::kAuto, BackendChoice::kNative, BackendChoice::kBubblewrap,
                                BackendChoice::kSeatbelt, BackendChoice::kUnavailable}) {
    if (BackendChoiceName(backend) == text) return backend;
  }
  return std::nullopt;
}

size_t ApprovalLooseness(ApprovalPolicy policy) {
  for (size_t i = 0; i < kApprovalStrictestFirst.size(); ++i) {
    if (kApprovalStrictestFirst[i] == policy) return i;
  }
  return kApprovalStrictestFirst.size();
}

void Config::ApplyTo(PolicySpec& spec) const {
  if (mode) spec.mode = *mode;
  if (acknowledge_danger) spec.acknowledge_danger = *acknowledge_danger;
  if (workspace_root) {
    spec.workspace = *workspace_root;
    spec.no_workspace = false;
  }
#define CORRAL_APPLY_LIST(member, Adder, setting) spec.member.insert(spec.member.end(), member.begin(), member.end());
  CORRAL_CONFIG_LISTS(CORRAL_APPLY_LIST)
#undef CORRAL_APPLY_LIST
  for (const auto& [path, where] : path_origins) {
    const bool project = std::find(project_paths.begin(), project_paths.end(), path) != project_paths.end();
    (project ? spec.project_config_grants : spec.user_config_grants).push_back(path);
  }
#define CORRAL_APPLY_SETTING(member, Setter, setting) \
  if (member) spec.member = *member;
  CORRAL_SANDBOX_SETTINGS(CORRAL_APPLY_SETTING)
#undef CORRAL_APPLY_SETTING
}

std::string UserConfigPath(std::string_view home, const char* xdg_config_home) {
  if (xdg_config_home != nullptr && xdg_config_home[0] == '/') {
    return std::string(xdg_config_home) + "/corral/config.toml";
  }
  return std::string(home) + "/.config/corral/config.toml";
}

std::string ProjectConfigPath(std::string_view workspace_root) {
  return std::string(workspace_root) + "/corral.toml";
}

Status Config::CheckPaths() const {
  auto check = [](const std::string& path, const std::string& where) -> Status {
    Result<PinnedPath> pinned = PinPath(path, "the path");
    if (pinned.ok()) return Ok();
    return Error(ErrorKind::kConfig, where + ": " + pinned.error().message()).WithCode("config_bad_value");
  };
  if (workspace_root) {
    auto origin = origins.find("sandbox.workspace_root");
    CORRAL_TRY(check(*workspace_root,
                     (origin == origins.end() ? std::string("config") : origin->second) + ": sandbox.workspace_root"));
  }
  auto check_list = [&](const ListSetting& setting, const std::vector<std::string>& list) -> Status {
    if (setting.element != ListElement::kPath) return Ok();
    for (const std::string& path : list) {
      auto origin = path_origins.find(path);
      CORRAL_TRY(check(path, origin == path_origins.end() ? std::string("config") : origin->second));
    }
    return Ok();
  };
#define CORRAL_CHECK_LIST_PATHS(member, Adder, setting) CORRAL_TRY(check_list(setting, member));
  CORRAL_CONFIG_LISTS(CORRAL_CHECK_LIST_PATHS)
#undef CORRAL_CHECK_LIST_PATHS
  return Ok();
}

LoadOptions DefaultLoadOptions(const std::string& home, const std::string& workspace_root) {
  LoadOptions options;
  options.user_path = UserConfigPath(home, std::getenv("XDG_CONFIG_HOME"));
  options.project_path = ProjectConfigPath(workspace_root);
  options.home = home;
  options.workspace_root = workspace_root;
  options.uid = ::geteuid();
  return options;
}

Result<Config> LoadConfig(const LoadOptions& options) {
  MergeContext context;
  context.user_file = options.user_path.value_or("~/.config/corral/config.toml");
  context.preset = options.preset;
  if (!options.workspace_root.empty()) {
    Result<std::string> root = CanonicalAbsolutePath(options.workspace_root);
    if (!root.ok()) {
      return Error(ErrorKind::kUsage, "workspace root " + options.workspace_root + ": " + root.error().message());
    }
    context.workspace_root = std::move(root).value();
  }
  std::optional<ConfigLayer> user;
  if (options.user_layer != nullptr) {
    if (!options.user_layer->ok()) return options.user_layer->error();
    user = **options.user_layer;
  } else {
    CORRAL_ASSIGN_OR_RETURN(user, LoadUserLayer(options));
  }
  CORRAL_ASSIGN_OR_RETURN(std::optional<ConfigLayer> project,
                          LoadLayer(options.project_path, ConfigScope::kProject, options));
  return MergeConfigLayers(user, project, context);
}

Result<std::optional<ConfigLayer>> LoadUserLayer(const LoadOptions& options) {
  return LoadLayer(options.user_path, ConfigScope::kUser, options);
}

}  // namespace corral
