#include "policy/spec_json.h"

#include <nlohmann/json.hpp>

namespace corral {
namespace {

Error Bad(const std::string& key, const std::string& why) {
  return Error(ErrorKind::kConfig, "policy spec: key '" + key + "': " + why);
}

Result<std::vector<std::string>> Strings(const nlohmann::json& value, const std::string& key) {
  if (!value.is_array()) return Bad(key, "expected an array of strings");
  std::vector<std::string> out;
  for (const auto& item : value) {
    if (!item.is_string()) return Bad(key, "expected an array of strings");
    out.push_back(item.get<std::string>());
  }
  return out;
}

Result<bool> Bool(const nlohmann::json& value, const std::string& key) {
  if (!value.is_boolean()) return Bad(key, "expected true or false");
  return value.get<bool>();
}

Result<std::optional<std::string>> OptionalString(const nlohmann::json& value, const std::string& key) {
  if (value.is_null()) return std::optional<std::string>();
  if (!value.is_string()) return Bad(key, "expected a string or null");
  return std::optional<std::string>(value.get<std::string>());
}

}  // namespace

nlohmann::json SpecToJson(const PolicySpec& spec) {
  nlohmann::json out;
  out["mode"] = ModeName(spec.mode);
  out["acknowledge_danger"] = spec.acknowledge_danger;
  out["workspace"] = spec.workspace ? nlohmann::json(*spec.workspace) : nlohmann::json(nullptr);
  out["no_workspace"] = spec.no_workspace;
  out["allow_read"] = spec.allow_read;
  out["allow_write"] = spec.allow_write;
  out["allow_exec"] = spec.allow_exec;
  out["allow_credential"] = spec.allow_credential;
  out["forbid_read"] = spec.forbid_read;
  out["allow_env"] = spec.allow_env;
  out["network"] = NetworkModeName(spec.network);
  out["timeout"] = spec.timeout ? nlohmann::json(spec.timeout->count()) : nlohmann::json(nullptr);
  out["pin_sha256"] = spec.pin_sha256 ? nlohmann::json(*spec.pin_sha256) : nlohmann::json(nullptr);
  out["best_effort"] = spec.best_effort;
  out["home"] = HomeModeName(spec.home);
  out["tmpfs_size"] = spec.tmpfs_size;
  out["system_roots"] = spec.system_roots;
  out["own_files"] = spec.own_files;
  return out;
}

Result<PolicySpec> SpecFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Error(ErrorKind::kConfig, "policy spec: expected a JSON object");
  PolicySpec spec;
  for (const auto& [key, value] : json.items()) {
    if (key == "mode") {
      std::optional<Mode> mode = value.is_string() ? ParseMode(value.get<std::string>()) : std::nullopt;
      if (!mode) return Bad(key, "expected read-only, workspace-write or danger-full-access");
      spec.mode = *mode;
    } else if (key == "acknowledge_danger") {
      CORRAL_ASSIGN_OR_RETURN(spec.acknowledge_danger, Bool(value, key));
    } else if (key == "workspace") {
      CORRAL_ASSIGN_OR_RETURN(spec.workspace, OptionalString(value, key));
    } else if (key == "no_workspace") {
      CORRAL_ASSIGN_OR_RETURN(spec.no_workspace, Bool(value, key));
    } else if (key == "allow_read") {
      CORRAL_ASSIGN_OR_RETURN(spec.allow_read, Strings(value, key));
    } else if (key == "allow_write") {
      CORRAL_ASSIGN_OR_RETURN(spec.allow_write, Strings(value, key));
    } else if (key == "allow_exec") {
      CORRAL_ASSIGN_OR_RETURN(spec.allow_exec, Strings(value, key));
    } else if (key == "allow_credential") {
      CORRAL_ASSIGN_OR_RETURN(spec.allow_credential, Strings(value, key));
    } else if (key == "forbid_read") {
      CORRAL_ASSIGN_OR_RETURN(spec.forbid_read, Strings(value, key));
    } else if (key == "allow_env") {
      CORRAL_ASSIGN_OR_RETURN(spec.allow_env, Strings(value, key));
    } else if (key == "network") {
      if (value == "none") spec.network = NetworkMode::kNone;
      else if (value == "all") spec.network = NetworkMode::kAll;
      else return Bad(key, "expected \"none\" or \"all\"");
    } else if (key == "timeout") {
      if (value.is_null()) continue;
      if (!value.is_number_integer() || value.get<long long>() <= 0) return Bad(key, "expected a positive integer");
      spec.timeout = std::chrono::seconds(value.get<long long>());
    } else if (key == "pin_sha256") {
      CORRAL_ASSIGN_OR_RETURN(spec.pin_sha256, OptionalString(value, key));
    } else if (key == "best_effort") {
      CORRAL_ASSIGN_OR_RETURN(spec.best_effort, Bool(value, key));
    } else if (key == "home") {
      if (value == "isolated") spec.home = HomeMode::kIsolated;
      else if (value == "real") spec.home = HomeMode::kReal;
      else return Bad(key, "expected \"isolated\" or \"real\"");
    } else if (key == "tmpfs_size") {
      bool in_range = value.is_number_unsigned() && value.get<uint64_t>() >= kMinTmpfsSize &&
                      value.get<uint64_t>() <= kMaxTmpfsSize;
      if (!in_range) {
        return Bad(key, "expected a number of bytes between " + TmpfsSizeText(kMinTmpfsSize) + " and " +
                            TmpfsSizeText(kMaxTmpfsSize));
      }
      spec.tmpfs_size = value.get<uint64_t>();
    } else if (key == "system_roots") {
      CORRAL_ASSIGN_OR_RETURN(spec.system_roots, Bool(value, key));
    } else if (key == "own_files") {
      CORRAL_ASSIGN_OR_RETURN(spec.own_files, Strings(value, key));
    } else {
      return Bad(key, "unknown key");
    }
  }
  return spec;
}

}  // namespace corral
