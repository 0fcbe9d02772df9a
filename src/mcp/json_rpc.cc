#include "mcp/json_rpc.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace corral::mcp {
namespace {

std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

bool ValidId(const nlohmann::json& id) { return id.is_string() || id.is_number_integer(); }

// How deep arrays and objects nest, outside strings. The writers and the
// destructor of a parsed value recurse, so a deep one is refused unparsed.
size_t NestingDepth(std::string_view line) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : line) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if ((c == ']' || c == '}') && depth > 0) --depth;
  }
  return deepest;
}

}  // namespace

ParsedMessage ParseMessage(std::string_view line) {
  if (NestingDepth(line) > kMaxNesting) {
    return RpcError{kInvalidRequest, "the message nests deeper than " + std::to_string(kMaxNesting) + " levels", nullptr};
  }
  nlohmann::json value = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
  if (value.is_discarded()) return RpcError{kParseError, "parse error: the message is not JSON", nullptr};
  if (value.is_array()) return RpcError{kInvalidRequest, "batches are not supported", nullptr};
  if (!value.is_object()) return RpcError{kInvalidRequest, "a message must be a JSON object", nullptr};
  nlohmann::json id = nullptr;
  auto found_id = value.find("id");
  bool has_id = found_id != value.end();
  if (has_id) {
    if (!ValidId(*found_id)) return RpcError{kInvalidRequest, "id must be a string or an integer", nullptr};
    id = *found_id;
  }
  auto version = value.find("jsonrpc");
  if (version == value.end() || !version->is_string() || *version != "2.0") {
    return RpcError{kInvalidRequest, "jsonrpc must be \"2.0\"", id};
  }
  Message message;
  message.id = id;
  auto method = value.find("method");
  if (method != value.end()) {
    if (!method->is_string()) return RpcError{kInvalidRequest, "method must be a string", id};
    message.method = method->get<std::string>();
    message.kind = has_id ? Message::Kind::kRequest : Message::Kind::kNotification;
    auto params = value.find("params");
    if (params != value.end()) {
      if (!params->is_object() && !params->is_array()) {
        return RpcError{kInvalidRequest, "params must be an object or an array", id};
      }
      message.params = *params;
    }
    return message;
  }
  auto result = value.find("result");
  auto error = value.find("error");
  if (!has_id || (result == value.end()) == (error == value.end())) {
    return RpcError{kInvalidRequest, "neither a request, a notification nor a response", id};
  }
  message.kind = Message::Kind::kResponse;
  if (result != value.end()) message.result = *result;
  if (error != value.end()) {
    if (!error->is_object()) return RpcError{kInvalidRequest, "error must be an object", id};
    message.error = *error;
  }
  return message;
}

std::string ResultLine(const nlohmann::json& id, const nlohmann::json& result) {
  return Dump({{"jsonrpc", "2.0"}, {"id", id}, {"result", result}});
}

std::string ErrorLine(const nlohmann::json& id, int code, std::string_view message) {
  return Dump({{"jsonrpc", "2.0"}, {"id", id}, {"error", {{"code", code}, {"message", message}}}});
}

std::string RequestLine(const nlohmann::json& id, std::string_view method, const nlohmann::json& params) {
  return Dump({{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}});
}

std::string NotificationLine(std::string_view method, const nlohmann::json& params) {
  return Dump({{"jsonrpc", "2.0"}, {"method", method}, {"params", params}});
}

std::optional<Line> LineReader::Next() {
  for (;;) {
    size_t newline = buffer_.find('\n');
    if (newline != std::string::npos) {
      Line line;
      if (skipping_ || newline > max_bytes_) {
        line.oversized = true;
        skipping_ = false;
      } else {
        line.text = buffer_.substr(0, newline);
        if (!line.text.empty() && line.text.back() == '\r') line.text.pop_back();
      }
      buffer_.erase(0, newline + 1);
      if (!line.oversized && line.text.empty()) continue;  // blank lines between messages
      return line;
    }
    if (buffer_.size() > max_bytes_) {
      skipping_ = true;
      buffer_.clear();
    }
    if (eof_) {
      if (buffer_.empty() && !skipping_) return std::nullopt;
      Line line;
      line.oversized = skipping_;
      if (!skipping_) line.text = std::move(buffer_);
      buffer_.clear();
      skipping_ = false;
      return line;
    }
    char chunk[65536];
    ssize_t n = ::read(fd_, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<size_t>(n));
  }
}

}  // namespace corral::mcp
