// The property the JSON-RPC reader and the tool-argument check keep for any
// input line (json_rpc_fuzz.cc under libFuzzer, json_rpc_fuzz_test.cc in the
// unit tests): no exception and no crash; the line is a Message or an RpcError
// with a JSON-RPC error code; a message's error reply serialises; and every
// tool's argument check of the message's params.arguments either refuses, or
// accepts only arguments that are an object with known keys of the right
// types.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mcp/json_rpc.h"
#include "tools/catalog.h"

namespace corral::testing {

inline std::optional<std::string> CheckMcpLine(std::string_view line) {
  using namespace corral::mcp;
  ParsedMessage parsed = ParseMessage(line);
  if (const RpcError* error = std::get_if<RpcError>(&parsed)) {
    if (error->code != kParseError && error->code != kInvalidRequest) return "an unexpected error code";
    if (!error->id.is_null() && !error->id.is_string() && !error->id.is_number_integer()) return "a bad error id";
    std::string reply = ErrorLine(error->id, error->code, error->message);
    if (reply.empty() || reply.back() != '\n' || reply.find('\n') != reply.size() - 1) return "a reply of many lines";
    return std::nullopt;
  }
  const Message& message = std::get<Message>(parsed);
  std::string reply = ResultLine(message.id, message.params);
  if (reply.find('\n') != reply.size() - 1) return "a reply of many lines";
  nlohmann::json arguments = message.params.is_object() && message.params.contains("arguments")
                                 ? message.params["arguments"]
                                 : message.params;
  for (const corral::tools::ToolSpec& spec : corral::tools::ToolCatalog()) {
    if (!corral::tools::ValidateArguments(spec, arguments).ok()) continue;
    if (!arguments.is_object()) return spec.name + ": accepted arguments that are not an object";
    for (const auto& [key, value] : arguments.items()) {
      const corral::tools::ArgSpec* known = nullptr;
      for (const corral::tools::ArgSpec& arg : spec.args) {
        if (arg.name == key) known = &arg;
      }
      if (known == nullptr) return spec.name + ": accepted the unknown argument " + key;
      bool typed = known->type == corral::tools::ArgType::kString    ? value.is_string()
                   : known->type == corral::tools::ArgType::kInteger ? value.is_number_integer()
                                                                     : value.is_boolean();
      if (!typed) return spec.name + ": accepted " + key + " of the wrong type";
    }
  }
  return std::nullopt;
}

}  // namespace corral::testing
