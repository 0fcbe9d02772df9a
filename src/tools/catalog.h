// The agent's tools as a client sees them: each tool's name, description and
// arguments, the JSON Schema offered in tools/list, and the strict check of a
// call's arguments against it.
//
//   const ToolSpec* spec = FindTool("read");
//   CORRAL_TRY(ValidateArguments(*spec, arguments));   // before anything runs
//
// Validation is strict: an unknown key, a wrong type, a missing required
// argument, a string over its cap or a number out of range is one kUsage
// error naming the argument, and nothing runs. Every tool also takes the
// escalation pair `sandbox_permissions` and `justification`.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/result.h"

namespace corral::tools {

enum class ArgType { kString, kInteger, kBoolean };
enum class ArgPresence { kRequired, kOptional };

struct ArgSpec {
  std::string name;
  ArgType type = ArgType::kString;
  ArgPresence presence = ArgPresence::kOptional;
  std::string description;
  int64_t max = 0;  // strings: bytes; integers: the largest value (the smallest is 0 or 1, `min`)
  int64_t min = 0;
};

struct ToolSpec {
  std::string name;
  std::string description;
  std::vector<ArgSpec> args;
  bool read_only = false;
};

const std::vector<ToolSpec>& ToolCatalog();
const ToolSpec* FindTool(std::string_view name);

// {"type":"object","properties":{...},"required":[...],"additionalProperties":false}
nlohmann::json InputSchema(const ToolSpec& spec);

Result<void> ValidateArguments(const ToolSpec& spec, const nlohmann::json& arguments);

}  // namespace corral::tools
