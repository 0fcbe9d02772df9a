// JSON-RPC 2.0 as MCP's stdio transport carries it: one message per line.
//
// ParseMessage reads one line strictly and says what it is, or gives the
// error object to answer with:
//   not JSON                           -> -32700 parse error (id null)
//   a batch (array), not an object,
//   "jsonrpc" not "2.0", a bad id
//   (not a string or integer), a
//   method that is not a string, params
//   that are not an object or array, a
//   response without exactly one of
//   result / error, nesting deeper
//   than kMaxNesting                   -> -32600 invalid request
// LineReader splits a stream into lines of at most `max_bytes`; a longer line
// is read to its end and thrown away, and reported as oversized (-32600), so
// one bad message never ends the session. The writers never throw: text that
// is not UTF-8 is written with U+FFFD in its place.
//
//   LineReader reader(STDIN_FILENO, 32 << 20);
//   while (std::optional<Line> line = reader.Next()) {
//     ParsedMessage parsed = ParseMessage(line->text);
//     ...
//   }
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace corral::mcp {

inline constexpr int kParseError = -32700;
inline constexpr int kInvalidRequest = -32600;
inline constexpr int kMethodNotFound = -32601;
inline constexpr int kInvalidParams = -32602;
inline constexpr int kInternalError = -32603;
// Arrays and objects nested deeper than this are refused (-32600).
inline constexpr size_t kMaxNesting = 64;

struct Message {
  enum class Kind { kRequest, kNotification, kResponse };
  Kind kind = Kind::kRequest;
  nlohmann::json id;  // requests and responses
  std::string method;
  nlohmann::json params = nlohmann::json::object();
  std::optional<nlohmann::json> result;
  std::optional<nlohmann::json> error;
};

struct RpcError {
  int code = kInvalidRequest;
  std::string message;
  nlohmann::json id;  // null when it could not be read
};

using ParsedMessage = std::variant<Message, RpcError>;

ParsedMessage ParseMessage(std::string_view line);

// One serialised line each, ending in '\n'.
std::string ResultLine(const nlohmann::json& id, const nlohmann::json& result);
std::string ErrorLine(const nlohmann::json& id, int code, std::string_view message);
std::string RequestLine(const nlohmann::json& id, std::string_view method, const nlohmann::json& params);
std::string NotificationLine(std::string_view method, const nlohmann::json& params);

struct Line {
  std::string text;
  bool oversized = false;  // the line was longer than the cap; `text` is empty
};

class LineReader {
 public:
  LineReader(int fd, size_t max_bytes) : fd_(fd), max_bytes_(max_bytes) {}
  // The next line without its '\n' (a final line without one counts);
  // nullopt at the end of the stream or on a read error.
  std::optional<Line> Next();

 private:
  int fd_;
  size_t max_bytes_;
  std::string buffer_;
  bool eof_ = false;
  bool skipping_ = false;
};

}  // namespace corral::mcp
