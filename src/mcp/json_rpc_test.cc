#include "mcp/json_rpc.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace corral::mcp {
namespace {

int CodeOf(std::string_view line) {
  ParsedMessage parsed = ParseMessage(line);
  const RpcError* error = std::get_if<RpcError>(&parsed);
  return error == nullptr ? 0 : error->code;
}

TEST(JsonRpc, ReadsRequestsNotificationsAndResponses) {
  ParsedMessage request = ParseMessage(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}})");
  ASSERT_TRUE(std::holds_alternative<Message>(request));
  EXPECT_EQ(std::get<Message>(request).kind, Message::Kind::kRequest);
  EXPECT_EQ(std::get<Message>(request).id, 7);
  ParsedMessage note = ParseMessage(R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  ASSERT_TRUE(std::holds_alternative<Message>(note));
  EXPECT_EQ(std::get<Message>(note).kind, Message::Kind::kNotification);
  ParsedMessage response = ParseMessage(R"({"jsonrpc":"2.0","id":"corral-1","result":{"action":"accept"}})");
  ASSERT_TRUE(std::holds_alternative<Message>(response));
  EXPECT_EQ(std::get<Message>(response).kind, Message::Kind::kResponse);
}

TEST(JsonRpc, EachMalformedMessageGetsItsError) {
  EXPECT_EQ(CodeOf("{not json"), kParseError);
  EXPECT_EQ(CodeOf("[]"), kInvalidRequest);
  EXPECT_EQ(CodeOf("42"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"id":1,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"1.0","id":1,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"2.0","id":1.5,"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"2.0","id":{},"method":"ping"})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"2.0","id":1,"method":5})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"2.0","id":1,"method":"x","params":3})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"2.0","id":1})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"2.0","id":1,"result":1,"error":{}})"), kInvalidRequest);
  EXPECT_EQ(CodeOf(std::string(100000, '[')), kInvalidRequest);
  EXPECT_EQ(CodeOf(R"({"jsonrpc":"2.0","id":1,"method":"x","params":{"s":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}})"), 0);
  // The id is kept where it could be read, so the client can match the error.
  ParsedMessage parsed = ParseMessage(R"({"jsonrpc":"1.0","id":"a"})");
  EXPECT_EQ(std::get<RpcError>(parsed).id, "a");
}

TEST(JsonRpc, WritersNeverThrowOnBytesThatAreNotUtf8) {
  std::string line = ResultLine(1, {{"text", std::string("caf\xe9")}});
  EXPECT_EQ(line.back(), '\n');
  EXPECT_NE(line.find("caf\xef\xbf\xbd"), std::string::npos);
}

TEST(JsonRpc, AnOversizedLineIsDroppedAndTheNextOneRead) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::string input = std::string(5000, 'x') + "\n" + R"({"jsonrpc":"2.0","id":1,"method":"ping"})" + "\n\n" +
                      R"({"jsonrpc":"2.0","id":2,"method":"ping"})";
  ASSERT_EQ(::write(fds[1], input.data(), input.size()), static_cast<ssize_t>(input.size()));
  ::close(fds[1]);
  LineReader reader(fds[0], 1024);
  std::optional<Line> first = reader.Next();
  ASSERT_TRUE(first);
  EXPECT_TRUE(first->oversized);
  std::optional<Line> second = reader.Next();
  ASSERT_TRUE(second);
  EXPECT_EQ(CodeOf(second->text), 0);
  std::optional<Line> third = reader.Next();
  ASSERT_TRUE(third);
  EXPECT_EQ(std::get<Message>(ParseMessage(third->text)).id, 2);
  EXPECT_FALSE(reader.Next());
  ::close(fds[0]);
}

}  // namespace
}  // namespace corral::mcp
