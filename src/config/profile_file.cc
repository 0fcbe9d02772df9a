#include "config/profile_file.h"

#include <functional>
#include <map>

#include "config/config_file.h"
#include "config/config_read.h"
#include "config/toml_reader.h"

namespace corral {
namespace {

Result<Access3> ReadAccess(const TomlField& field) {
  CORRAL_ASSIGN_OR_RETURN(std::string text, ReadChoice(field, {"deny", "gated", "allow"}));
  return *ParseAccess3(text);
}

Status ReadRoots(const TomlField& field, const ParseContext& context, std::vector<std::string>& roots) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<Sourced<std::string>> items, ReadStringArray(field));
  for (size_t i = 0; i < items.size(); ++i) {
    TomlField element{field.key + "[" + std::to_string(i) + "]", items[i].where, field.node};
    CORRAL_ASSIGN_OR_RETURN(std::string root, ResolveConfigPath(element, items[i].value, context));
    roots.push_back(std::move(root));
  }
  return Ok();
}

Status ReadProfileKey(const TomlField& field, std::string_view name, const ParseContext& context,
                      ProfileConfig& config) {
  const std::map<std::string_view, Access3*> dimensions = {
      {"workspace_read", &config.workspace_read}, {"workspace_write", &config.workspace_write},
      {"host_read", &config.host_read},           {"host_write", &config.host_write},
      {"network", &config.network},               {"command", &config.command},
  };
  if (auto dimension = dimensions.find(name); dimension != dimensions.end()) {
    CORRAL_ASSIGN_OR_RETURN(*dimension->second, ReadAccess(field));
    return Ok();
  }
  if (name == "workspace_root") {
    CORRAL_ASSIGN_OR_RETURN(std::string given, ReadString(field));
    CORRAL_ASSIGN_OR_RETURN(config.workspace_root, ResolveConfigPath(field, given, context));
    return Ok();
  }
  if (name == "host_read_roots") return ReadRoots(field, context, config.host_read_roots);
  if (name == "host_write_roots") return ReadRoots(field, context, config.host_write_roots);
  if (name == "home") {
    CORRAL_ASSIGN_OR_RETURN(size_t index, ReadChoiceIndex(field, {"isolated", "real"}));
    config.home = index == 1 ? HomeMode::kReal : HomeMode::kIsolated;
    return Ok();
  }
  if (name == "isolation") {
    CORRAL_ASSIGN_OR_RETURN(std::string text, ReadChoice(field, {"sandboxed", "unconfined"}));
    config.isolation = *ParseIsolation(text);
    return Ok();
  }
  if (name == "acknowledge_unconfined") {
    CORRAL_ASSIGN_OR_RETURN(config.acknowledge_unconfined, ReadBool(field));
    return Ok();
  }
  return UnknownKey(field);
}

}  // namespace

Result<Profile> ParseProfileText(std::string_view text, const std::string& file, const std::string& home) {
  CORRAL_ASSIGN_OR_RETURN(toml::table root, ParseTomlText(text, file));
  ParseContext context{file, ConfigScope::kProfile, home};
  std::optional<TomlField> table_field;
  ProfileConfig config;
  CORRAL_TRY(ForEachField(root, "", file, [&](const TomlField& field) -> Status {
    if (field.key != "profile") {
      if (field.node->is_table()) return UnknownKey(field);
      return ConfigError(field.where, field.key, "unknown key (profile keys belong in [profile])",
                         "config_unknown_key");
    }
    const toml::table* table = field.node->as_table();
    if (table == nullptr) return WrongType(field, "a table");
    table_field = field;
    return ForEachField(*table, "profile", file, [&](const TomlField& entry) {
      return ReadProfileKey(entry, std::string_view(entry.key).substr(std::string_view("profile.").size()), context, config);
    });
  }));
  if (!table_field) {
    return ConfigError(SourcePos{file, 1, 1}, "profile", "missing: a profile file needs a [profile] table",
                       "config_bad_value");
  }
  Result<Profile> profile = NewProfile(config);
  if (!profile.ok()) {
    return ConfigError(table_field->where, "", profile.error().message(), profile.error().code());
  }
  return profile;
}

Result<Profile> LoadProfileFile(const std::string& path, const std::string& home, uid_t caller) {
  CORRAL_ASSIGN_OR_RETURN(std::optional<std::string> text, ReadConfigFile(path, WriterRule::kCallerOrRoot, caller));
  if (!text) return Error(ErrorKind::kConfig, path + ": no such profile file").WithCode("config_unreadable");
  return ParseProfileText(*text, path, home);
}

}  // namespace corral
