// Strict reading of TOML documents (config files and profiles), over toml++.
//
// Every rejection is an Error of kind kConfig whose message starts with where
// the problem is and which key it concerns:
//
//   /p/corral.toml:3:1: sandbox.netwrk: unknown key
//   /p/corral.toml:5:14: syntax error: expected '=' ...
//
// and whose code() says what kind of problem it is: "config_syntax",
// "config_unknown_key", "config_wrong_type", "config_bad_value" (and, from the
// merge, "config_project_widens"). Tables are walked in document order, so
// the first problem in the file is the one reported.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/toml.h"

#include "base/result.h"

namespace corral {

struct SourcePos {
  std::string file;
  uint32_t line = 0;
  uint32_t column = 0;
  std::string ToString() const;  // "file:line:column"
};

template <typename T>
struct Sourced {
  T value;
  SourcePos where;
};

// Control characters and non-ASCII bytes escaped as \xNN, so a hostile value
// cannot inject terminal escapes into an error message.
std::string EscapeForMessage(std::string_view text);
// The same, in double quotes (inner quotes and backslashes escaped).
std::string QuoteForMessage(std::string_view text);

// "<where>: <key>: <what>", ErrorKind::kConfig, with `code`.
Error ConfigError(const SourcePos& where, std::string_view key, std::string_view what, std::string code);

// Parses `text`; a syntax error names file:line:column (code "config_syntax").
Result<toml::table> ParseTomlText(std::string_view text, const std::string& file);

// One key of a table, with its dotted name and where it was written.
struct TomlField {
  std::string key;  // dotted, e.g. "sandbox.allow_read"
  SourcePos where;  // the key's position
  const toml::node* node = nullptr;
};

// Calls `visit` for each entry of `table`, in document order, stopping at the
// first error. `prefix` is the dotted name of the table ("" for the root).
Status ForEachField(const toml::table& table, std::string_view prefix, const std::string& file,
                    const std::function<Status(const TomlField&)>& visit);

// "string", "integer", "boolean", "array", "table", ...
std::string_view TomlTypeName(const toml::node& node);

Error UnknownKey(const TomlField& field);
Error WrongType(const TomlField& field, std::string_view expected);
Error BadValue(const TomlField& field, std::string_view what);

Result<std::string> ReadString(const TomlField& field);
Result<bool> ReadBool(const TomlField& field);
Result<int64_t> ReadInteger(const TomlField& field);
// Each element keeps its own position; its key is "<key>[<index>]".
Result<std::vector<Sourced<std::string>>> ReadStringArray(const TomlField& field);
// A list of ports, written as integers (`[443, 8080]`) or strings
// (`["443"]`): an integer must be 1-65535 and becomes its decimal text; a
// string is kept as written, for the caller to check as the flag would.
// Anything else (a float, a boolean, an integer out of range) is refused
// naming the element ("sandbox.allow_port[1]") and its line.
Result<std::vector<Sourced<std::string>>> ReadPortArray(const TomlField& field);
// A string that must be one of `allowed`; a bad one lists them. The index
// form returns its position in `allowed`.
Result<size_t> ReadChoiceIndex(const TomlField& field, const std::vector<std::string_view>& allowed);
Result<std::string> ReadChoice(const TomlField& field, const std::vector<std::string_view>& allowed);

}  // namespace corral
