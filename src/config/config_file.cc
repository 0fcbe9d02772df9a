#include "config/config_file.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "base/mutant.h"
#include "policy/egress_rules.h"
#include "policy/forbid.h"
#include "policy/path_text.h"
#include "policy/resource_limits.h"
#include "policy/tmpfs_size.h"
#include "policy/toolchains.h"

namespace corral {
namespace {

using Handler = std::function<Status(const TomlField&, const ParseContext&, ConfigLayer&)>;

template <typename T>
Sourced<T> At(const TomlField& field, T value) {
  return Sourced<T>{std::move(value), field.where};
}

std::string DirectoryOf(const std::string& file) {
  size_t slash = file.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : file.substr(0, slash);
}

}  // namespace

Result<std::string> ResolveConfigPath(const TomlField& field, const std::string& given, const ParseContext& context) {
  Result<std::string> expanded = ExpandHome(given, context.home);
  if (!expanded.ok()) return BadValue(field, QuoteForMessage(given) + ": " + expanded.error().message());
  std::string path = std::move(expanded).value();
  if (!path.empty() && path[0] != '/') {
    if (context.scope != ConfigScope::kProject) {
      return BadValue(field, QuoteForMessage(given) + ": relative paths are not allowed in the " +
                                 std::string(ConfigScopeName(context.scope)) +
                                 "; write an absolute path or start it with ~/");
    }
    // "./build" is common and harmless; ".." stays and is refused below.
    std::string joined = DirectoryOf(context.file);
    size_t start = 0;
    while (start <= path.size()) {
      size_t end = std::min(path.find('/', start), path.size());
      std::string_view part = std::string_view(path).substr(start, end - start);
      if (!part.empty() && part != ".") joined += "/" + std::string(part);
      start = end + 1;
    }
    path = std::move(joined);
  }
  Result<std::string> canonical = CanonicalAbsolutePath(path);
  if (!canonical.ok()) return BadValue(field, QuoteForMessage(given) + ": " + canonical.error().message());
  return canonical;
}

namespace {

Status ReadPathList(const TomlField& field, const ParseContext& context, std::vector<Sourced<std::string>>& out) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<Sourced<std::string>> items, ReadStringArray(field));
  for (size_t i = 0; i < items.size(); ++i) {
    TomlField element{field.key + "[" + std::to_string(i) + "]", items[i].where, field.node};
    CORRAL_ASSIGN_OR_RETURN(std::string path, ResolveConfigPath(element, items[i].value, context));
    out.push_back(Sourced<std::string>{std::move(path), items[i].where});
  }
  return Ok();
}

bool IsEnvName(std::string_view name) {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

Status ReadEnvList(const TomlField& field, std::vector<Sourced<std::string>>& out) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<Sourced<std::string>> items, ReadStringArray(field));
  for (size_t i = 0; i < items.size(); ++i) {
    if (!IsEnvName(items[i].value)) {
      TomlField element{field.key + "[" + std::to_string(i) + "]", items[i].where, field.node};
      return BadValue(element, QuoteForMessage(items[i].value) +
                                   " is not an environment variable name (letters, digits and _, not starting "
                                   "with a digit)");
    }
    out.push_back(items[i]);
  }
  return Ok();
}

Status ReadRungList(const TomlField& field, std::vector<Sourced<std::string>>& out) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<Sourced<std::string>> items, ReadStringArray(field));
  for (size_t i = 0; i < items.size(); ++i) {
    if (!IsAcceptableRungName(items[i].value)) {
      TomlField element{field.key + "[" + std::to_string(i) + "]", items[i].where, field.node};
      return BadValue(element, QuoteForMessage(items[i].value) + " is not a rung that can be accepted; the names are " +
                                   AcceptableRungNamesText());
    }
    out.push_back(items[i]);
  }
  return Ok();
}

Status ReadToolchainList(const TomlField& field, std::vector<Sourced<std::string>>& out) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<Sourced<std::string>> items, ReadStringArray(field));
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].value != "auto" && FindToolchain(items[i].value) == nullptr) {
      TomlField element{field.key + "[" + std::to_string(i) + "]", items[i].where, field.node};
      return BadValue(element, QuoteForMessage(items[i].value) + " is not a toolchain corral knows; the names are " +
                                   ToolchainNames());
    }
    out.push_back(items[i]);
  }
  return Ok();
}

Status ReadForbidList(const TomlField& field, const ParseContext& context, std::vector<Sourced<std::string>>& out) {
  CORRAL_ASSIGN_OR_RETURN(std::vector<Sourced<std::string>> items, ReadStringArray(field));
  for (size_t i = 0; i < items.size(); ++i) {
    TomlField element{field.key + "[" + std::to_string(i) + "]", items[i].where, field.node};
    const std::string& given = items[i].value;
    if (std::any_of(given.begin(), given.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
      return BadValue(element, QuoteForMessage(given) + ": the pattern contains a control character");
    }
    // "~user" and an unknown home are refused here; the home goes into the
    // pattern quoted (NormalizeForbidPattern), never read as wildcards.
    Result<std::string> expanded = ExpandHome(given, context.home);
    if (!expanded.ok()) return BadValue(element, QuoteForMessage(given) + ": " + expanded.error().message());
    Result<std::string> pattern = NormalizeForbidPattern(given, context.home);
    if (!pattern.ok() || pattern->empty()) {
      return BadValue(element, QuoteForMessage(given) + ": an empty pattern, one with '..' segments or one that "
                                                        "names no path");
    }
    out.push_back(Sourced<std::string>{std::move(pattern).value(), items[i].where});
  }
  return Ok();
}

// Host rules, private ranges and ports (net/host_pattern.h,
// net/destination.h, policy/egress_rules.h), each read as its flag reads it;
// the text is kept as written. A port may also be a TOML integer.
Status ReadNetworkList(const TomlField& field, ListElement element, std::vector<Sourced<std::string>>& out) {
  const bool ports = element == ListElement::kLocalPort || element == ListElement::kConnectPort;
  CORRAL_ASSIGN_OR_RETURN(std::vector<Sourced<std::string>> items,
                          ports ? ReadPortArray(field) : ReadStringArray(field));
  for (size_t i = 0; i < items.size(); ++i) {
    Result<void> checked = CheckEgressListElement(element, items[i].value);
    if (!checked.ok()) {
      TomlField one{field.key + "[" + std::to_string(i) + "]", items[i].where, field.node};
      return BadValue(one, checked.error().message());
    }
    out.push_back(items[i]);
  }
  return Ok();
}

// One list setting (policy/spec_fields.h) from its TOML array, each element
// read as its kind says.
Status ReadList(const ListSetting& setting, const TomlField& field, const ParseContext& context,
                std::vector<Sourced<std::string>>& out) {
  switch (setting.element) {
    case ListElement::kPath: return ReadPathList(field, context, out);
    case ListElement::kEnvName: return ReadEnvList(field, out);
    case ListElement::kPattern: return ReadForbidList(field, context, out);
    case ListElement::kToolchain: return ReadToolchainList(field, out);
    case ListElement::kRung: return ReadRungList(field, out);
    case ListElement::kAllowHost:
    case ListElement::kDenyHost:
    case ListElement::kPrivateRange:
    case ListElement::kLocalPort:
    case ListElement::kConnectPort:
    case ListElement::kDnsName: return ReadNetworkList(field, setting.element, out);
  }
  return WrongType(field, "a list");
}

// One scalar setting (policy/spec_fields.h) from its TOML value.
template <typename E>
Status ReadSetting(const Switch<E>&, const TomlField& field, std::optional<Sourced<bool>>& out) {
  CORRAL_ASSIGN_OR_RETURN(bool value, ReadBool(field));
  out = At(field, value);
  return Ok();
}

template <typename E>
  requires std::is_enum_v<E>
Status ReadSetting(const Setting<E>& setting, const TomlField& field, std::optional<Sourced<E>>& out) {
  if (setting.spelling == TomlSpelling::kNamesOrBoolean) {
    if (const toml::value<bool>* flag = field.node->as_boolean()) {
      out = At(field, static_cast<E>(flag->get() ? setting.choices.size() - 1 : 0));
      return Ok();
    }
    if (!field.node->is_string()) {
      std::string names;
      for (std::string_view name : setting.choices) names += (names.empty() ? "\"" : " / \"") + std::string(name) + "\"";
      return WrongType(field, "a boolean or " + names);
    }
  }
  CORRAL_ASSIGN_OR_RETURN(size_t index,
                          ReadChoiceIndex(field, std::vector<std::string_view>(setting.choices.begin(),
                                                                                setting.choices.end())));
  out = At(field, static_cast<E>(index));
  return Ok();
}

Status ReadSetting(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting,
                   const TomlField& field, std::optional<Sourced<std::chrono::seconds>>& out) {
  if (!field.node->is_integer()) return WrongType(field, "a positive integer (seconds)");
  CORRAL_ASSIGN_OR_RETURN(int64_t seconds, ReadInteger(field));
  if (seconds < setting.minimum.count()) {
    return BadValue(field, std::to_string(seconds) + " is not a positive number of seconds");
  }
  if (seconds > setting.maximum.count()) {
    return BadValue(field, std::to_string(seconds) + " seconds is more than the limit of " +
                               std::to_string(setting.maximum.count()) + " (" + std::string(setting.maximum_text) +
                               ")");
  }
  out = At(field, std::chrono::seconds(seconds));
  return Ok();
}

// A size as the flag takes it ("512m", "1g"), or a whole number of bytes.
Status ReadSetting(const Setting<uint64_t>&, const TomlField& field, std::optional<Sourced<uint64_t>>& out) {
  std::string text;
  if (field.node->is_integer()) {
    CORRAL_ASSIGN_OR_RETURN(int64_t bytes, ReadInteger(field));
    text = std::to_string(bytes);
  } else if (field.node->is_string()) {
    CORRAL_ASSIGN_OR_RETURN(text, ReadString(field));
  } else {
    return WrongType(field, "a size such as \"1g\" or \"512m\", or a number of bytes");
  }
  Result<uint64_t> bytes = ParseTmpfsSize(text);
  if (!bytes.ok()) return BadValue(field, bytes.error().message());
  out = At(field, *bytes);
  return Ok();
}

// A resource limit: a count is an integer; a size is written as tmpfs_size
// is ("512m"), or a number of bytes; CPUs are a number (0.5, 2) or its text
// ("0.5").
Status ReadSetting(const LimitSetting& setting, const TomlField& field, std::optional<Sourced<uint64_t>>& out) {
  std::string text;
  if (setting.unit == LimitUnit::kMilliCpus) {
    if (field.node->is_floating_point()) {
      // At most three decimals: 0.5 is 500 thousandths, 0.0005 is refused.
      const double cpus = field.node->as_floating_point()->get();
      const double thousandths = cpus * 1000.0;
      if (!(thousandths >= 0.0 && thousandths < 1e12) || std::fabs(thousandths - std::round(thousandths)) > 1e-6) {
        return BadValue(field, std::string(setting.key) + ": expected a number of CPUs such as 0.5 or 2 (at most "
                                                          "three decimals)");
      }
      text = MilliCpusText(static_cast<uint64_t>(std::llround(thousandths)));
    } else if (field.node->is_integer()) {
      CORRAL_ASSIGN_OR_RETURN(int64_t value, ReadInteger(field));
      text = std::to_string(value);
    } else if (field.node->is_string()) {
      CORRAL_ASSIGN_OR_RETURN(text, ReadString(field));
    } else {
      return WrongType(field, "a number of CPUs such as 0.5 or 2");
    }
  } else if (field.node->is_integer()) {
    CORRAL_ASSIGN_OR_RETURN(int64_t value, ReadInteger(field));
    text = std::to_string(value);
  } else if (field.node->is_string() && setting.unit == LimitUnit::kBytes) {
    CORRAL_ASSIGN_OR_RETURN(text, ReadString(field));
  } else {
    return WrongType(field, setting.unit == LimitUnit::kBytes
                                ? "a size such as \"1g\" or \"512m\", or a number of bytes"
                                : "a positive integer");
  }
  Result<uint64_t> value = ParseLimit(setting, text);
  if (!value.ok()) return BadValue(field, value.error().message());
  out = At(field, *value);
  return Ok();
}

const std::map<std::string, Handler, std::less<>>& SandboxHandlers() {
  static const auto* handlers = new std::map<std::string, Handler, std::less<>>{
      {"mode",
       [](const TomlField& f, const ParseContext&, ConfigLayer& l) -> Status {
         CORRAL_ASSIGN_OR_RETURN(std::string text, ReadChoice(f, {"read-only", "workspace-write", "danger-full-access"}));
         l.mode = At(f, *ParseMode(text));
         return Ok();
       }},
      {"bash",
       [](const TomlField& f, const ParseContext&, ConfigLayer& l) -> Status {
         CORRAL_ASSIGN_OR_RETURN(size_t index, ReadChoiceIndex(f, {"enforce", "off"}));
         l.bash = At(f, index == 1 ? BashSetting::kOff : BashSetting::kEnforce);
         return Ok();
       }},
      {"workspace_root",
       [](const TomlField& f, const ParseContext& c, ConfigLayer& l) -> Status {
         CORRAL_ASSIGN_OR_RETURN(std::string given, ReadString(f));
         CORRAL_ASSIGN_OR_RETURN(std::string path, ResolveConfigPath(f, given, c));
         l.workspace_root = At(f, std::move(path));
         return Ok();
       }},
#define CORRAL_LIST_HANDLER(member, Adder, setting)                                                      \
  {std::string(setting.key), [](const TomlField& f, const ParseContext& c, ConfigLayer& l) -> Status { \
     return ReadList(setting, f, c, l.member);                                                         \
   }},
      CORRAL_CONFIG_LISTS(CORRAL_LIST_HANDLER)
#undef CORRAL_LIST_HANDLER
#define CORRAL_SETTING_HANDLER(member, Setter, setting)                                                  \
  {std::string(setting.key), [](const TomlField& f, const ParseContext&, ConfigLayer& l) -> Status { \
     return ReadSetting(setting, f, l.member);                                                       \
   }},
      CORRAL_SANDBOX_SETTINGS(CORRAL_SETTING_HANDLER)
#undef CORRAL_SETTING_HANDLER
      {"i_understand_danger_full_access",
       [](const TomlField& f, const ParseContext&, ConfigLayer& l) -> Status {
         CORRAL_ASSIGN_OR_RETURN(bool value, ReadBool(f));
         l.acknowledge_danger = At(f, value);
         return Ok();
       }},
      {"backend",
       [](const TomlField& f, const ParseContext&, ConfigLayer& l) -> Status {
         CORRAL_ASSIGN_OR_RETURN(std::string text,
                                 ReadChoice(f, {"auto", "native", "bubblewrap", "seatbelt", "unavailable"}));
         l.backend = At(f, *ParseBackendChoice(text));
         return Ok();
       }},
  };
  return *handlers;
}

const std::map<std::string, Handler, std::less<>>& ApprovalHandlers() {
  static const auto* handlers = new std::map<std::string, Handler, std::less<>>{
      {"policy",
       [](const TomlField& f, const ParseContext&, ConfigLayer& l) -> Status {
         std::vector<std::string_view> names;
         for (ApprovalPolicy policy : kApprovalStrictestFirst) names.push_back(ApprovalPolicyName(policy));
         CORRAL_ASSIGN_OR_RETURN(size_t index, ReadChoiceIndex(f, names));
         l.approval_policy = At(f, kApprovalStrictestFirst[index]);
         return Ok();
       }},
      {"preset",
       [](const TomlField& f, const ParseContext&, ConfigLayer& l) -> Status {
         std::vector<std::string_view> names;
         for (const Preset& preset : AllPresets()) names.push_back(preset.name);
         CORRAL_ASSIGN_OR_RETURN(size_t index, ReadChoiceIndex(f, names));
         l.preset = At(f, AllPresets()[index]);
         return Ok();
       }},
  };
  return *handlers;
}

// [audit]: where the trail goes. "-" is stderr; a path is a path value
// (absolute, "~" expanded).
const std::map<std::string, Handler, std::less<>>& AuditHandlers() {
  static const auto* handlers = new std::map<std::string, Handler, std::less<>>{
      {"trail",
       [](const TomlField& f, const ParseContext& c, ConfigLayer& l) -> Status {
         CORRAL_ASSIGN_OR_RETURN(std::string given, ReadString(f));
         if (given == "-") {
           l.audit_trail = At(f, given);
           return Ok();
         }
         CORRAL_ASSIGN_OR_RETURN(std::string path, ResolveConfigPath(f, given, c));
         l.audit_trail = At(f, std::move(path));
         return Ok();
       }},
  };
  return *handlers;
}

Status ReadTable(const TomlField& field, const ParseContext& context,
                 const std::map<std::string, Handler, std::less<>>& handlers, ConfigLayer& layer) {
  const toml::table* table = field.node->as_table();
  if (table == nullptr) return WrongType(field, "a table");
  return ForEachField(*table, field.key, context.file, [&](const TomlField& entry) -> Status {
    std::string_view name = std::string_view(entry.key).substr(field.key.size() + 1);
    auto handler = handlers.find(name);
    if (handler == handlers.end()) return MutantActive(Mutant::kConfigUnknownKeys) ? Ok() : UnknownKey(entry);
    return handler->second(entry, context, layer);
  });
}

// bash and mode in one file must agree.
Status CheckBashAgainstMode(const ConfigLayer& layer) {
  if (!layer.bash || !layer.mode) return Ok();
  const bool off = layer.bash->value == BashSetting::kOff;
  const bool danger = layer.mode->value == Mode::kDangerFullAccess;
  if (off == danger) return Ok();
  TomlField at{"sandbox.bash", layer.bash->where, nullptr};
  return ConfigError(at.where, at.key,
                     off ? "\"off\" runs shell commands unconfined (danger-full-access), which contradicts mode = \"" +
                               std::string(ModeName(layer.mode->value)) + "\""
                         : "\"enforce\" contradicts mode = \"danger-full-access\", which runs commands unconfined",
                     "config_bad_value");
}

}  // namespace

std::string_view ConfigScopeName(ConfigScope scope) {
  switch (scope) {
    case ConfigScope::kUser: return "user config";
    case ConfigScope::kProject: return "project config";
    case ConfigScope::kProfile: return "profile";
  }
  return "user config";
}

std::optional<Sourced<Mode>> ConfigLayer::EffectiveMode() const {
  if (mode) return mode;
  if (bash && bash->value == BashSetting::kOff) return Sourced<Mode>{Mode::kDangerFullAccess, bash->where};
  return std::nullopt;
}

Result<ConfigLayer> ParseConfigText(std::string_view text, const ParseContext& context) {
  CORRAL_ASSIGN_OR_RETURN(toml::table root, ParseTomlText(text, context.file));
  ConfigLayer layer;
  layer.file = context.file;
  layer.scope = context.scope;
  CORRAL_TRY(ForEachField(root, "", context.file, [&](const TomlField& field) -> Status {
    if (field.key == "sandbox") return ReadTable(field, context, SandboxHandlers(), layer);
    if (field.key == "approval") return ReadTable(field, context, ApprovalHandlers(), layer);
    if (field.key == "audit") return ReadTable(field, context, AuditHandlers(), layer);
    if (field.node->is_table()) return UnknownKey(field);
    return ConfigError(field.where, field.key, "unknown key (settings belong in [sandbox] or [approval])",
                       "config_unknown_key");
  }));
  CORRAL_TRY(CheckBashAgainstMode(layer));
  return layer;
}

}  // namespace corral
