#include "tools/catalog.h"

namespace corral::tools {
namespace {

constexpr int64_t kPathMax = 4096;
constexpr int64_t kContentMax = 16 << 20;

ArgSpec Path(ArgPresence presence, std::string description) {
  return ArgSpec{"path", ArgType::kString, presence, std::move(description), kPathMax, 1};
}

std::vector<ToolSpec> MakeCatalog() {
  std::vector<ToolSpec> tools = {
      {"read",
       "Read a text file inside the sandbox's roots: lines from `offset` (1-based), at most `limit`. Binary files are "
       "described, not dumped.",
       {Path(ArgPresence::kRequired, "the file (absolute, or relative to the workspace)"),
        {"offset", ArgType::kInteger, ArgPresence::kOptional, "the first line to show (1-based)", 1 << 30, 1},
        {"limit", ArgType::kInteger, ArgPresence::kOptional, "how many lines at most (default 2000)", 100000, 1}},
       true},
      {"write",
       "Create or overwrite a file inside a writable root of the sandbox.",
       {Path(ArgPresence::kRequired, "the file"),
        {"content", ArgType::kString, ArgPresence::kRequired, "the whole new contents", kContentMax, 0}},
       false},
      {"edit",
       "Replace an exact string in a file. Fails when the string is absent, or appears more than once unless "
       "replace_all is set.",
       {Path(ArgPresence::kRequired, "the file"),
        {"old_string", ArgType::kString, ArgPresence::kRequired, "the exact text to replace", kContentMax, 1},
        {"new_string", ArgType::kString, ArgPresence::kRequired, "what replaces it", kContentMax, 0},
        {"replace_all", ArgType::kBoolean, ArgPresence::kOptional, "replace every occurrence", 0, 0}},
       false},
      {"ls",
       "List a directory inside the sandbox's roots (hidden paths are not shown).",
       {Path(ArgPresence::kOptional, "the directory (default: the workspace)")},
       true},
      {"find",
       "Find files whose name (or, with a '/', whose relative path) matches a glob, below a directory.",
       {{"pattern", ArgType::kString, ArgPresence::kRequired, "a glob such as *.cc or src/*/test_*", 1024, 1},
        Path(ArgPresence::kOptional, "where to start (default: the workspace)")},
       true},
      {"grep",
       "Search file contents for a POSIX extended regular expression (no back-references), below a directory or in "
       "one file.",
       {{"pattern", ArgType::kString, ArgPresence::kRequired, "the regular expression", 512, 1},
        Path(ArgPresence::kOptional, "a file or directory (default: the workspace)"),
        {"glob", ArgType::kString, ArgPresence::kOptional, "only files whose name matches this glob", 1024, 1},
        {"ignore_case", ArgType::kBoolean, ArgPresence::kOptional, "match case-insensitively", 0, 0}},
       true},
      {"bash",
       "Run a shell command inside the sandbox (bash -c). Output is capped and terminal-sanitised.",
       {{"command", ArgType::kString, ArgPresence::kRequired, "the command line", 65536, 1},
        {"timeout", ArgType::kInteger, ArgPresence::kOptional, "seconds before the whole tree is killed (default 120)",
         3600, 1}},
       false},
      {"sandbox_info",
       "What this sandbox lets the tools touch: mode, roots and their access, protected paths, network, approvals.",
       {},
       true},
  };
  for (ToolSpec& tool : tools) {
    tool.args.push_back({"sandbox_permissions", ArgType::kString, ArgPresence::kOptional,
                         "escalation: the wider mode this one call needs (workspace-write or danger-full-access); "
                         "asked of the user",
                         64, 1});
    tool.args.push_back(
        {"justification", ArgType::kString, ArgPresence::kOptional, "escalation: why the call needs it", 2048, 1});
  }
  return tools;
}

std::string_view TypeName(ArgType type) {
  switch (type) {
    case ArgType::kString: return "string";
    case ArgType::kInteger: return "integer";
    case ArgType::kBoolean: return "boolean";
  }
  return "string";
}

}  // namespace

const std::vector<ToolSpec>& ToolCatalog() {
  static const std::vector<ToolSpec> catalog = MakeCatalog();
  return catalog;
}

const ToolSpec* FindTool(std::string_view name) {
  for (const ToolSpec& tool : ToolCatalog()) {
    if (tool.name == name) return &tool;
  }
  return nullptr;
}

nlohmann::json InputSchema(const ToolSpec& spec) {
  nlohmann::json properties = nlohmann::json::object();
  nlohmann::json required = nlohmann::json::array();
  for (const ArgSpec& arg : spec.args) {
    nlohmann::json property = {{"type", TypeName(arg.type)}, {"description", arg.description}};
    if (arg.type == ArgType::kString) {
      property["maxLength"] = arg.max;
      if (arg.min > 0) property["minLength"] = arg.min;
    }
    if (arg.type == ArgType::kInteger) {
      property["minimum"] = arg.min;
      property["maximum"] = arg.max;
    }
    properties[arg.name] = property;
    if (arg.presence == ArgPresence::kRequired) required.push_back(arg.name);
  }
  return {{"type", "object"}, {"properties", properties}, {"required", required}, {"additionalProperties", false}};
}

Result<void> ValidateArguments(const ToolSpec& spec, const nlohmann::json& arguments) {
  if (!arguments.is_object()) return Error(ErrorKind::kUsage, spec.name + ": the arguments must be an object");
  for (const auto& [key, value] : arguments.items()) {
    bool known = false;
    for (const ArgSpec& arg : spec.args) known = known || arg.name == key;
    if (!known) return Error(ErrorKind::kUsage, spec.name + ": unknown argument \"" + key + "\"");
  }
  for (const ArgSpec& arg : spec.args) {
    auto found = arguments.find(arg.name);
    if (found == arguments.end()) {
      if (arg.presence == ArgPresence::kRequired) {
        return Error(ErrorKind::kUsage, spec.name + ": missing argument \"" + arg.name + "\"");
      }
      continue;
    }
    const nlohmann::json& value = *found;
    std::string where = spec.name + ": argument \"" + arg.name + "\" ";
    switch (arg.type) {
      case ArgType::kString: {
        if (!value.is_string()) return Error(ErrorKind::kUsage, where + "must be a string");
        const std::string& text = value.get_ref<const std::string&>();
        if (static_cast<int64_t>(text.size()) > arg.max) {
          return Error(ErrorKind::kUsage, where + "is longer than " + std::to_string(arg.max) + " bytes");
        }
        if (static_cast<int64_t>(text.size()) < arg.min) return Error(ErrorKind::kUsage, where + "is empty");
        if (text.find('\0') != std::string::npos) return Error(ErrorKind::kUsage, where + "holds a NUL byte");
        break;
      }
      case ArgType::kInteger: {
        if (!value.is_number_integer()) return Error(ErrorKind::kUsage, where + "must be an integer");
        if (value.is_number_unsigned() ? (value.get<uint64_t>() > static_cast<uint64_t>(arg.max) ||
                                          value.get<uint64_t>() < static_cast<uint64_t>(arg.min))
                                       : (value.get<int64_t>() < arg.min || value.get<int64_t>() > arg.max)) {
          return Error(ErrorKind::kUsage, where + "must be between " + std::to_string(arg.min) + " and " +
                                              std::to_string(arg.max));
        }
        break;
      }
      case ArgType::kBoolean:
        if (!value.is_boolean()) return Error(ErrorKind::kUsage, where + "must be true or false");
        break;
    }
  }
  return {};
}

}  // namespace corral::tools
