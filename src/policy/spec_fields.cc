#include "policy/spec_fields.h"

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

std::string RenderNarrowingRow(const Setting<bool>& setting) {
  if (setting.project == ProjectRule::kWideIfUserIsWide) {
    return NarrowingRow(setting.key, "`false`, or repeat the user's `true`", "`true` when the user's is not");
  }
  return NarrowingRow(setting.key, "`false`", "`true`");
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

std::string_view NetworkModeName(NetworkMode mode) { return ChoiceName(kNetworkSetting, mode); }
std::string_view HomeModeName(HomeMode mode) { return ChoiceName(kHomeSetting, mode); }

std::string RenderDocRow(const Setting<bool>& setting) {
  return Row(setting.key, "boolean", setting.spec_default ? "`true`" : "`false`", setting.flag, setting.doc);
}
std::string RenderDocRow(const Setting<HomeMode>& setting) { return ChoiceRow(setting); }
std::string RenderDocRow(const Setting<NetworkMode>& setting) { return ChoiceRow(setting); }
std::string RenderDocRow(const Setting<std::chrono::seconds, std::optional<std::chrono::seconds>>& setting) {
  return Row(setting.key,
             "integer, seconds, " + std::to_string(setting.minimum.count()) + " to " +
                 std::to_string(setting.maximum.count()) + " (" + std::string(setting.maximum_text) + ")",
             std::string(setting.doc_default), setting.flag, setting.doc);
}
std::string RenderDocRow(const Setting<uint64_t>& setting) {
  return Row(setting.key, std::string(setting.doc_type), std::string(setting.doc_default), setting.flag, setting.doc);
}

}  // namespace corral
