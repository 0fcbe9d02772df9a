#include "config/toml_reader.h"

#include <algorithm>
#include <tuple>

namespace corral {
namespace {

SourcePos PosOf(const toml::source_region& region, const std::string& file) {
  return SourcePos{file, region.begin.line, region.begin.column};
}

// An element of an array, addressed as "key[index]".
TomlField ElementField(const TomlField& array, size_t index, const toml::node& element) {
  SourcePos where = PosOf(element.source(), array.where.file);
  if (where.line == 0) where = array.where;
  return TomlField{array.key + "[" + std::to_string(index) + "]", std::move(where), &element};
}

// A bare key as written; anything else quoted and escaped.
std::string KeyText(std::string_view key) {
  bool bare = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  return bare ? std::string(key) : QuoteForMessage(key);
}

}  // namespace

std::string EscapeForMessage(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7f) {
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string QuoteForMessage(std::string_view text) {
  std::string escaped;
  for (char c : text) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += c;
  }
  return "\"" + EscapeForMessage(escaped) + "\"";
}

std::string SourcePos::ToString() const {
  return EscapeForMessage(file) + ":" + std::to_string(line) + ":" + std::to_string(column);
}

Error ConfigError(const SourcePos& where, std::string_view key, std::string_view what, std::string code) {
  std::string message = where.ToString() + ": ";
  if (!key.empty()) message += std::string(key) + ": ";
  message += what;
  return Error(ErrorKind::kConfig, std::move(message)).WithCode(std::move(code));
}

Result<toml::table> ParseTomlText(std::string_view text, const std::string& file) {
  try {
    return toml::parse(text, std::string_view(file));
  } catch (const toml::parse_error& error) {
    SourcePos where = PosOf(error.source(), file);
    return ConfigError(where, "", "syntax error: " + EscapeForMessage(error.description()), "config_syntax");
  }
}

Status ForEachField(const toml::table& table, std::string_view prefix, const std::string& file,
                    const std::function<Status(const TomlField&)>& visit) {
  std::vector<TomlField> fields;
  for (auto&& [key, node] : table) {
    std::string name = prefix.empty() ? KeyText(key.str()) : std::string(prefix) + "." + KeyText(key.str());
    SourcePos where = PosOf(key.source(), file);
    if (where.line == 0) where = PosOf(node.source(), file);
    fields.push_back(TomlField{std::move(name), std::move(where), &node});
  }
  std::stable_sort(fields.begin(), fields.end(), [](const TomlField& a, const TomlField& b) {
    return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
  });
  for (const TomlField& field : fields) CORRAL_TRY(visit(field));
  return Ok();
}

std::string_view TomlTypeName(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::none: return "nothing";
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    case toml::node_type::date: return "date";
    case toml::node_type::time: return "time";
    case toml::node_type::date_time: return "date-time";
  }
  return "value";
}

Error UnknownKey(const TomlField& field) {
  return ConfigError(field.where, field.key, field.node->is_table() ? "unknown table" : "unknown key",
                     "config_unknown_key");
}

Error WrongType(const TomlField& field, std::string_view expected) {
  return ConfigError(field.where, field.key,
                     "expected " + std::string(expected) + ", got " + std::string(TomlTypeName(*field.node)),
                     "config_wrong_type");
}

Error BadValue(const TomlField& field, std::string_view what) {
  return ConfigError(field.where, field.key, what, "config_bad_value");
}

Result<std::string> ReadString(const TomlField& field) {
  const toml::value<std::string>* value = field.node->as_string();
  if (value == nullptr) return WrongType(field, "a string");
  return value->get();
}

Result<bool> ReadBool(const TomlField& field) {
  const toml::value<bool>* value = field.node->as_boolean();
  if (value == nullptr) return WrongType(field, "a boolean (true or false)");
  return value->get();
}

Result<int64_t> ReadInteger(const TomlField& field) {
  const toml::value<int64_t>* value = field.node->as_integer();
  if (value == nullptr) return WrongType(field, "an integer");
  return value->get();
}

Result<std::vector<Sourced<std::string>>> ReadStringArray(const TomlField& field) {
  const toml::array* array = field.node->as_array();
  if (array == nullptr) return WrongType(field, "an array of strings");
  std::vector<Sourced<std::string>> out;
  for (size_t i = 0; i < array->size(); ++i) {
    TomlField element = ElementField(field, i, *array->get(i));
    CORRAL_ASSIGN_OR_RETURN(std::string text, ReadString(element));
    out.push_back(Sourced<std::string>{std::move(text), element.where});
  }
  return out;
}

Result<std::vector<Sourced<std::string>>> ReadPortArray(const TomlField& field) {
  const toml::array* array = field.node->as_array();
  if (array == nullptr) return WrongType(field, "an array of ports");
  std::vector<Sourced<std::string>> out;
  for (size_t i = 0; i < array->size(); ++i) {
    TomlField element = ElementField(field, i, *array->get(i));
    if (const toml::value<int64_t>* number = element.node->as_integer()) {
      int64_t port = number->get();
      if (port < 1 || port > 65535) return BadValue(element, std::to_string(port) + " is not a port (1-65535)");
      out.push_back(Sourced<std::string>{std::to_string(port), element.where});
      continue;
    }
    if (element.node->as_string() == nullptr) return WrongType(element, "a port (an integer 1-65535, or a string)");
    CORRAL_ASSIGN_OR_RETURN(std::string text, ReadString(element));
    out.push_back(Sourced<std::string>{std::move(text), element.where});
  }
  return out;
}

Result<size_t> ReadChoiceIndex(const TomlField& field, const std::vector<std::string_view>& allowed) {
  CORRAL_ASSIGN_OR_RETURN(std::string text, ReadString(field));
  auto found = std::find(allowed.begin(), allowed.end(), text);
  if (found != allowed.end()) return static_cast<size_t>(found - allowed.begin());
  std::string list;
  for (std::string_view choice : allowed) list += (list.empty() ? "\"" : ", \"") + std::string(choice) + "\"";
  return BadValue(field, QuoteForMessage(text) + " is not one of " + list);
}

Result<std::string> ReadChoice(const TomlField& field, const std::vector<std::string_view>& allowed) {
  CORRAL_ASSIGN_OR_RETURN(size_t index, ReadChoiceIndex(field, allowed));
  return std::string(allowed[index]);
}

}  // namespace corral
