#include "policy/spec_json.h"

#include <cmath>

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

// One scalar setting (spec_fields.h) to and from JSON: a switch is a
// boolean, a choice its name, seconds a positive integer or null, a size a
// number of bytes.
template <typename E>
nlohmann::json SettingToJson(const Switch<E>&, bool value) {
  return value;
}
template <typename E>
  requires std::is_enum_v<E>
nlohmann::json SettingToJson(const Setting<E>& setting, E value) {
  return ChoiceName(setting, value);
}
nlohmann::json SettingToJson(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>&,
                             const std::optional<std::chrono::seconds>& value) {
  return value ? nlohmann::json(value->count()) : nlohmann::json(nullptr);
}
nlohmann::json SettingToJson(const Setting<uint64_t>&, uint64_t value) { return value; }
// CPUs are a number of CPUs (0.5), not the thousandths they are held in.
nlohmann::json SettingToJson(const LimitSetting& setting, const std::optional<uint64_t>& value) {
  if (!value) return nlohmann::json(nullptr);
  if (setting.unit == LimitUnit::kMilliCpus) {
    if (*value % 1000 == 0) return nlohmann::json(*value / 1000);
    return nlohmann::json(static_cast<double>(*value) / 1000.0);
  }
  return nlohmann::json(*value);
}

template <typename E>
Status SettingFromJson(const Switch<E>& setting, const nlohmann::json& value, bool& out) {
  CORRAL_ASSIGN_OR_RETURN(out, Bool(value, std::string(setting.key)));
  return Ok();
}
template <typename E>
  requires std::is_enum_v<E>
Status SettingFromJson(const Setting<E>& setting, const nlohmann::json& value, E& out) {
  std::optional<E> parsed = value.is_string() ? ParseChoice(setting, value.get<std::string>()) : std::nullopt;
  if (!parsed) {
    std::string names;
    for (size_t i = 0; i < setting.choices.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == setting.choices.size() ? " or " : ", ") + ("\"" + std::string(setting.choices[i]) + "\"");
    }
    return Bad(std::string(setting.key), "expected " + names);
  }
  out = *parsed;
  return Ok();
}
// null leaves the default (no limit).
Status SettingFromJson(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting,
                       const nlohmann::json& value, std::optional<std::chrono::seconds>& out) {
  if (value.is_null()) return Ok();
  if (!value.is_number_integer() || value.get<long long>() < setting.minimum.count()) {
    return Bad(std::string(setting.key), "expected a positive integer");
  }
  out = std::chrono::seconds(value.get<long long>());
  return Ok();
}
Status SettingFromJson(const Setting<uint64_t>& setting, const nlohmann::json& value, uint64_t& out) {
  bool in_range = value.is_number_unsigned() && value.get<uint64_t>() >= setting.minimum &&
                  value.get<uint64_t>() <= setting.maximum;
  if (!in_range) {
    return Bad(std::string(setting.key), "expected a number of bytes between " + TmpfsSizeText(setting.minimum) +
                                             " and " + TmpfsSizeText(setting.maximum));
  }
  out = value.get<uint64_t>();
  return Ok();
}

// null leaves the default (no limit); a number must be in the limit's range.
Status SettingFromJson(const LimitSetting& setting, const nlohmann::json& value, std::optional<uint64_t>& out) {
  if (value.is_null()) return Ok();
  if (setting.unit == LimitUnit::kMilliCpus) {
    const double thousandths = value.is_number() ? value.get<double>() * 1000.0 : -1.0;
    const bool whole = std::fabs(thousandths - std::round(thousandths)) <= 1e-6;
    if (!whole || thousandths < static_cast<double>(setting.minimum) ||
        thousandths > static_cast<double>(setting.maximum)) {
      return Bad(std::string(setting.key), "expected null or a number of CPUs between " +
                                               LimitText(setting, setting.minimum) + " and " +
                                               LimitText(setting, setting.maximum) + " (at most three decimals)");
    }
    out = static_cast<uint64_t>(std::llround(thousandths));
    return Ok();
  }
  bool in_range = value.is_number_unsigned() && value.get<uint64_t>() >= setting.minimum &&
                  value.get<uint64_t>() <= setting.maximum;
  if (!in_range) {
    return Bad(std::string(setting.key), "expected null or a number between " +
                                             LimitText(setting, setting.minimum) + " and " +
                                             LimitText(setting, setting.maximum));
  }
  out = value.get<uint64_t>();
  return Ok();
}

}  // namespace

nlohmann::json SpecToJson(const PolicySpec& spec) {
  nlohmann::json out;
  out["mode"] = ModeName(spec.mode);
  out["acknowledge_danger"] = spec.acknowledge_danger;
  out["workspace"] = spec.workspace ? nlohmann::json(*spec.workspace) : nlohmann::json(nullptr);
  out["no_workspace"] = spec.no_workspace;
#define CORRAL_LIST_TO_JSON(member, Adder, setting) out[std::string(setting.key)] = spec.member;
  CORRAL_SANDBOX_LISTS(CORRAL_LIST_TO_JSON)
#undef CORRAL_LIST_TO_JSON
  out["pin_sha256"] = spec.pin_sha256 ? nlohmann::json(*spec.pin_sha256) : nlohmann::json(nullptr);
#define CORRAL_SETTING_TO_JSON(member, Setter, setting) out[std::string(setting.key)] = SettingToJson(setting, spec.member);
  CORRAL_SANDBOX_SETTINGS(CORRAL_SETTING_TO_JSON)
#undef CORRAL_SETTING_TO_JSON
  out["system_roots"] = spec.system_roots;
  out["own_files"] = spec.own_files;
  out["scratch_dirs"] = spec.scratch_dirs;
  out["user_config_grants"] = spec.user_config_grants;
  out["project_config_grants"] = spec.project_config_grants;
  return out;
}

Result<PolicySpec> SpecFromJson(const nlohmann::json& json) {
  if (!json.is_object()) return Error(ErrorKind::kConfig, "policy spec: expected a JSON object");
  PolicySpec spec;
  for (const auto& [key, value] : json.items()) {
#define CORRAL_SETTING_FROM_JSON(member, Setter, setting)    \
  if (key == setting.key) {                                  \
    CORRAL_TRY(SettingFromJson(setting, value, spec.member)); \
    continue;                                                \
  }
    CORRAL_SANDBOX_SETTINGS(CORRAL_SETTING_FROM_JSON)
#undef CORRAL_SETTING_FROM_JSON
#define CORRAL_LIST_FROM_JSON(member, Adder, setting)                  \
  if (key == setting.key) {                                            \
    CORRAL_ASSIGN_OR_RETURN(spec.member, Strings(value, key));         \
    continue;                                                          \
  }
    CORRAL_SANDBOX_LISTS(CORRAL_LIST_FROM_JSON)
#undef CORRAL_LIST_FROM_JSON
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
    } else if (key == "pin_sha256") {
      CORRAL_ASSIGN_OR_RETURN(spec.pin_sha256, OptionalString(value, key));
    } else if (key == "system_roots") {
      CORRAL_ASSIGN_OR_RETURN(spec.system_roots, Bool(value, key));
    } else if (key == "own_files") {
      CORRAL_ASSIGN_OR_RETURN(spec.own_files, Strings(value, key));
    } else if (key == "scratch_dirs") {
      CORRAL_ASSIGN_OR_RETURN(spec.scratch_dirs, Strings(value, key));
      // Only an executor set grants its own scratch (executor/scratch.h).
      if (!spec.scratch_dirs.empty()) return Bad(key, "only an executor set grants a scratch directory");
    } else if (key == "user_config_grants") {
      CORRAL_ASSIGN_OR_RETURN(spec.user_config_grants, Strings(value, key));
    } else if (key == "project_config_grants") {
      CORRAL_ASSIGN_OR_RETURN(spec.project_config_grants, Strings(value, key));
    } else {
      return Bad(key, "unknown key");
    }
  }
  return spec;
}

}  // namespace corral
