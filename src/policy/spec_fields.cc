#include "policy/spec_fields.h"

#include <algorithm>

#include "policy/resource_limits.h"

namespace corral {
namespace {

std::string Quoted(std::string_view name) { return "`\"" + std::string(name) + "\"`"; }

std::string Joined(std::span<const std::string_view> names, std::string_view separator) {
  std::string out;
  for (std::string_view name : names) out += (out.empty() ? "" : std::string(separator)) + Quoted(name);
  return out;
}

std::string Row(std::string_view key, const std::string& type, const std::string& default_text, std::string_view flag,
                std::string_view doc) {
  return "| `" + std::string(key) + "` | " + type + " | " + default_text + " | `" + std::string(key) + "` | `" +
         std::string(flag) + "` | " + std::string(doc) + " |";
}

template <typename E>
  requires std::is_enum_v<E>
std::string ChoiceRow(const Setting<E>& setting) {
  const std::string_view default_name = ChoiceName(setting, setting.spec_default);
  if (setting.spelling == TomlSpelling::kNamesOrBoolean) {
    const bool is_last = default_name == setting.choices.back();
    return Row(setting.key, "boolean, or string " + Joined(setting.choices, " / "),
               std::string(is_last ? "`true`" : "`false`") + " (" + Quoted(default_name) + ")", setting.flag,
               setting.doc);
  }
  return Row(setting.key, "string: " + Joined(setting.choices, ", "), Quoted(default_name), setting.flag,
             setting.doc);
}

std::string NarrowingRow(std::string_view key, const std::string& may, const std::string& may_not) {
  return "| `" + std::string(key) + "` | " + may + " | " + may_not + " |";
}

// A choice spelled also as a boolean shows both spellings: `false` / `"none"`.
template <typename E>
  requires std::is_enum_v<E>
std::string Spellings(const Setting<E>& setting, size_t index) {
  if (setting.spelling != TomlSpelling::kNamesOrBoolean) return Quoted(setting.choices[index]);
  return std::string(index == 0 ? "`false`" : "`true`") + " / " + Quoted(setting.choices[index]);
}

template <typename E>
  requires std::is_enum_v<E>
std::string ChoiceNarrowingRow(const Setting<E>& setting) {
  const size_t wide = setting.choices.size() - 1;
  std::string narrow;
  for (size_t i = 0; i < wide; ++i) narrow += (i == 0 ? "" : ", ") + Spellings(setting, i);
  if (setting.project == ProjectRule::kWideIfUserIsWide) {
    const std::string user_wide =
        setting.spelling == TomlSpelling::kNamesOrBoolean ? "`true`" : Quoted(setting.choices[wide]);
    const std::string user_narrow =
        setting.spelling == TomlSpelling::kNamesOrBoolean ? "`false`" : Quoted(setting.choices[0]);
    return NarrowingRow(setting.key, narrow + ", or repeat the user's " + user_wide,
                        Spellings(setting, wide) + " when the user's is " + user_narrow + " or unset");
  }
  return NarrowingRow(setting.key, narrow, Spellings(setting, wide));
}

}  // namespace

std::string RenderSwitchNarrowingRow(std::string_view key, ProjectRule project, NarrowSide narrow) {
  if (narrow == NarrowSide::kOn) return NarrowingRow(key, "`true`", "`false`");
  if (project == ProjectRule::kWideIfUserIsWide) {
    return NarrowingRow(key, "`false`, or repeat the user's `true`", "`true` when the user's is not");
  }
  return NarrowingRow(key, "`false`", "`true`");
}
std::string RenderNarrowingRow(const Setting<HomeMode>& setting) { return ChoiceNarrowingRow(setting); }
std::string RenderNarrowingRow(const Setting<NetworkMode>& setting) { return ChoiceNarrowingRow(setting); }
std::string RenderNarrowingRow(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting) {
  // No default: without a user value there is nothing to stay below.
  return NarrowingRow(setting.key, "lower it, or set one when the user has none", "raise it above the user's");
}
std::string RenderNarrowingRow(const Setting<uint64_t>& setting) {
  return NarrowingRow(setting.key,
                      "lower it (below the user's, or below the " + TmpfsSizeText(setting.spec_default) + " default)",
                      "raise it above the user's or the default");
}

std::string RenderNarrowingRow(const LimitSetting& setting) {
  return NarrowingRow(setting.key, "lower it, or set one when the user has none", "raise it above the user's");
}

std::string LimitText(const LimitSetting& setting, uint64_t value) {
  switch (setting.unit) {
    case LimitUnit::kBytes: return TmpfsSizeText(value);
    case LimitUnit::kMilliCpus: return MilliCpusText(value);
    case LimitUnit::kCount: break;
  }
  return std::to_string(value);
}

Result<uint64_t> ParseLimit(const LimitSetting& setting, std::string_view text) {
  const std::string what(setting.key);
  if (setting.unit == LimitUnit::kBytes) return ParseSize(text, setting.minimum, setting.maximum, what);
  auto bad = [&](const std::string& why) { return Error(ErrorKind::kUsage, what + " \"" + std::string(text) + "\": " + why); };
  if (setting.unit == LimitUnit::kMilliCpus) {
    // "2", "0.5", "1.25": whole CPUs, then at most three decimals.
    const std::string_view expected = "expected a number of CPUs such as 0.5 or 2 (at most three decimals)";
    const size_t dot = text.find('.');
    const std::string_view whole = text.substr(0, dot);
    const std::string_view fraction = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    if (whole.empty() || whole.size() > 7 || fraction.size() > 3 || (dot != std::string_view::npos && fraction.empty())) {
      return bad(std::string(expected));
    }
    uint64_t value = 0;
    for (char c : whole) {
      if (c < '0' || c > '9') return bad(std::string(expected));
      value = value * 10 + static_cast<uint64_t>(c - '0');
    }
    uint64_t thousandths = 0;
    for (size_t i = 0; i < 3; ++i) {
      const char c = i < fraction.size() ? fraction[i] : '0';
      if (c < '0' || c > '9') return bad(std::string(expected));
      thousandths = thousandths * 10 + static_cast<uint64_t>(c - '0');
    }
    value = value * 1000 + thousandths;
    if (value < setting.minimum || value > setting.maximum) {
      return bad("must be between " + MilliCpusText(setting.minimum) + " and " + MilliCpusText(setting.maximum));
    }
    return value;
  }
  if (text.empty() || text.size() > 19) return bad("expected a whole number");
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return bad("expected a whole number");
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value < setting.minimum || value > setting.maximum) {
    return bad("must be between " + std::to_string(setting.minimum) + " and " + std::to_string(setting.maximum));
  }
  return value;
}

std::string_view NetworkModeName(NetworkMode mode) { return ChoiceName(kNetworkSetting, mode); }
std::string_view HomeModeName(HomeMode mode) { return ChoiceName(kHomeSetting, mode); }

std::string RenderSwitchDocRow(std::string_view key, bool spec_default, std::string_view flag, std::string_view doc) {
  return Row(key, "boolean", spec_default ? "`true`" : "`false`", flag, doc);
}
std::string RenderDocRow(const Setting<HomeMode>& setting) { return ChoiceRow(setting); }
std::string RenderDocRow(const Setting<NetworkMode>& setting) { return ChoiceRow(setting); }
std::string RenderDocRow(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting) {
  return Row(setting.key,
             "integer, seconds, " + std::to_string(setting.minimum.count()) + " to " +
                 std::to_string(setting.maximum.count()) + " (" + std::string(setting.maximum_text) + ")",
             std::string(setting.doc_default), setting.flag, setting.doc);
}
std::string RenderDocRow(const LimitSetting& setting) {
  return Row(setting.key, std::string(setting.doc_type), std::string(setting.doc_default), setting.flag, setting.doc);
}
std::string RenderDocRow(const Setting<uint64_t>& setting) {
  return Row(setting.key, std::string(setting.doc_type), std::string(setting.doc_default), setting.flag, setting.doc);
}

bool IsAcceptableRungName(std::string_view name) {
  return std::find(std::begin(kAcceptableRungNames), std::end(kAcceptableRungNames), name) !=
         std::end(kAcceptableRungNames);
}

std::string AcceptableRungNamesText() {
  std::string text;
  for (std::string_view name : kAcceptableRungNames) text += (text.empty() ? "" : ", ") + std::string(name);
  return text;
}

std::string_view ListFlagValue(const ListSetting& setting) {
  switch (setting.element) {
    case ListElement::kPath: return "PATH";
    case ListElement::kEnvName: return "NAME";
    case ListElement::kPattern: return "PATTERN";
    case ListElement::kToolchain: return "NAME";
    case ListElement::kAllowHost: return "PATTERN[:PORTS]";
    case ListElement::kDenyHost: return "PATTERN";
    case ListElement::kPrivateRange: return "CIDR";
    case ListElement::kLocalPort: return "PORT";
    case ListElement::kConnectPort: return "PORT";
    case ListElement::kDnsName: return "NAME";
    case ListElement::kRung: return "NAME";
  }
  return "VALUE";
}

std::string RenderDocRow(const ListSetting& setting) {
  if (setting.project == ProjectListRule::kNotAConfigKey) {
    return "| (no key) | | `[]` | `" + std::string(setting.key) + "` | `" + std::string(setting.flag) + "` | " +
           std::string(setting.doc) + " |";
  }
  std::string type;
  switch (setting.element) {
    case ListElement::kPath: type = "array of strings (paths)"; break;
    case ListElement::kEnvName:
      type = "array of strings (variable names: letters, digits, `_`, not starting with a digit)";
      break;
    case ListElement::kPattern: type = "array of strings (patterns)"; break;
    case ListElement::kToolchain: type = "array of strings (toolchain names, or `\"auto\"`)"; break;
    case ListElement::kAllowHost: type = "array of strings (host patterns, each with optional `:PORT,PORT`)"; break;
    case ListElement::kDenyHost: type = "array of strings (host patterns)"; break;
    case ListElement::kPrivateRange: type = "array of strings (CIDR ranges)"; break;
    case ListElement::kLocalPort: type = "array of ports (`5432` or `\"5432\"`)"; break;
    case ListElement::kConnectPort: type = "array of ports (`443` or `\"443\"`)"; break;
    case ListElement::kDnsName: type = "array of strings (host names)"; break;
    case ListElement::kRung: type = "array of strings (`no-userns`, `no-landlock`, `masked-proc`)"; break;
  }
  return Row(setting.key, type, "`[]`", setting.flag, setting.doc);
}

std::vector<std::string> RenderNarrowingRows(std::span<const ListSetting* const> settings) {
  std::vector<std::string> rows;
  std::vector<ProjectListRule> done;
  for (const ListSetting* first : settings) {
    if (first->project == ProjectListRule::kNotAConfigKey ||
        std::find(done.begin(), done.end(), first->project) != done.end()) {
      continue;
    }
    done.push_back(first->project);
    std::string keys;
    for (const ListSetting* setting : settings) {
      if (setting->project == first->project) keys += (keys.empty() ? "`" : ", `") + std::string(setting->key) + "`";
    }
    std::string may;
    std::string may_not;
    switch (first->project) {
      case ProjectListRule::kInsideWorkspace:
        may = "add paths **inside the workspace** (and inside the user's `workspace_root` when the user set one); "
              "they are added to the user's";
        may_not = "grant anything outside (`/etc`, `~/.bashrc`, `/ws-other` next to `/ws`)";
        break;
      case ProjectListRule::kUserAllows:
        may = "repeat names the user config already gives (for variables, also the built-in allowlist)";
        may_not = "add any other name";
        break;
      case ProjectListRule::kAdds:
        may = "add patterns: the result is the **union** of both files";
        may_not = "remove the user's";
        break;
      case ProjectListRule::kUserOnly:
        may = "nothing";
        may_not = "name any (refused, naming the key and the file)";
        break;
      case ProjectListRule::kNotAConfigKey: break;
    }
    rows.push_back("| " + keys + " | " + may + " | " + may_not + " |");
  }
  return rows;
}

}  // namespace corral
