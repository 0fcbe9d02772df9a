// The SOCKS5 greeting and request readers on what clients send and on each
// refusal with its reply code; partial input; the reply builders.
#include "net/socks5.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace corral {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes NameRequest(const std::string& name, uint16_t port, uint8_t command = 0x01) {
  Bytes bytes(5 + name.size() + 2);
  bytes[0] = 5;
  bytes[1] = command;
  bytes[3] = 3;
  bytes[4] = static_cast<uint8_t>(name.size());
  std::copy(name.begin(), name.end(), bytes.begin() + 5);
  bytes[bytes.size() - 2] = static_cast<uint8_t>(port >> 8);
  bytes[bytes.size() - 1] = static_cast<uint8_t>(port);
  return bytes;
}

TEST(Socks5, AGreetingOfferingNoAuthenticationIsRead) {
  Bytes bytes = {5, 2, 0x02, 0x00, 5, 1};  // a request follows at once
  Result<ReadStep<Socks5Greeting>> step = ReadSocks5Greeting(bytes);
  ASSERT_TRUE(step.ok()) << step.error().message();
  ASSERT_FALSE(step->need_more());
  EXPECT_EQ(step->used(), 4u);
  EXPECT_EQ(step->value().methods, (Bytes{0x02, 0x00}));
  Bytes all(257, 0x80);
  all[0] = 5;
  all[1] = 255;
  all[200] = 0x00;
  step = ReadSocks5Greeting(all);
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->used(), 257u);
}

TEST(Socks5, BadGreetingsAreRefused) {
  for (const auto& [bytes, why] : std::vector<std::pair<Bytes, std::string>>{
           {{4, 1, 0}, "version 4"},
           {{5, 0}, "no methods"},
           {{5, 1, 0x02}, "not offering 0x00"},
           {{5, 3, 0x01, 0x02, 0x80}, "not offering 0x00"},
       }) {
    Result<ReadStep<Socks5Greeting>> step = ReadSocks5Greeting(bytes);
    ASSERT_FALSE(step.ok()) << why;
    EXPECT_NE(step.error().message().find(why), std::string::npos) << step.error().message();
    EXPECT_EQ(step.error().message().rfind("socks5: ", 0), 0u);
  }
  EXPECT_EQ(Socks5MethodReply(Socks5Method::kNoAcceptable), (std::array<uint8_t, 2>{5, 0xff}));
  EXPECT_EQ(Socks5MethodReply(Socks5Method::kNoAuthentication), (std::array<uint8_t, 2>{5, 0x00}));
}

TEST(Socks5, RequestsForEachAddressType) {
  Result<ReadStep<Socks5Request>> v4 = ReadSocks5Request(Bytes{5, 1, 0, 1, 192, 0, 2, 1, 0x01, 0xbb});
  ASSERT_TRUE(v4.ok()) << v4.error().message();
  EXPECT_EQ(v4->used(), 10u);
  EXPECT_EQ(v4->value().address_type, Socks5AddressType::kIpv4);
  EXPECT_EQ(v4->value().host, "192.0.2.1");
  EXPECT_EQ(v4->value().port, 443);

  Bytes v6_bytes = {5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x1f, 0x90, 0xaa};
  Result<ReadStep<Socks5Request>> v6 = ReadSocks5Request(v6_bytes);
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->used(), 22u);
  EXPECT_EQ(v6->value().address_type, Socks5AddressType::kIpv6);
  EXPECT_EQ(v6->value().host, "2001:db8::1");
  EXPECT_EQ(v6->value().port, 8080);

  Result<ReadStep<Socks5Request>> name = ReadSocks5Request(NameRequest("Registry.NPMjs.org.", 443));
  ASSERT_TRUE(name.ok()) << name.error().message();
  EXPECT_EQ(name->value().address_type, Socks5AddressType::kDomainName);
  EXPECT_EQ(name->value().host, "registry.npmjs.org");
  EXPECT_EQ(name->used(), 5u + 19u + 2u);
  EXPECT_TRUE(ReadSocks5Request(NameRequest("my_host-1", 1)).ok());
  std::string longest(63, 'a');
  longest += "." + std::string(63, 'b') + "." + std::string(63, 'c') + "." + std::string(61, 'd') + ".";
  ASSERT_EQ(longest.size(), 254u);  // 253 and the trailing dot: the longest host name
  EXPECT_TRUE(ReadSocks5Request(NameRequest(longest, 65535)).ok());
  EXPECT_FALSE(ReadSocks5Request(NameRequest(longest + "e", 65535)).ok());
}

TEST(Socks5, RefusedRequestsCarryTheirReplyCode) {
  struct Case {
    Bytes bytes;
    Socks5Reply reply;
    std::string why;
  };
  const std::vector<Case> cases = {
      {{4, 1, 0, 1, 1, 2, 3, 4, 0, 80}, Socks5Reply::kGeneralFailure, "version 4"},
      {{5, 2, 0, 1, 1, 2, 3, 4, 0, 80}, Socks5Reply::kCommandNotSupported, "BIND"},
      {{5, 3, 0, 1, 1, 2, 3, 4, 0, 80}, Socks5Reply::kCommandNotSupported, "UDP ASSOCIATE"},
      {{5, 9, 0, 1, 1, 2, 3, 4, 0, 80}, Socks5Reply::kCommandNotSupported, "command 9"},
      {{5, 1, 1, 1, 1, 2, 3, 4, 0, 80}, Socks5Reply::kGeneralFailure, "reserved"},
      {{5, 1, 0, 2, 1, 2, 3, 4, 0, 80}, Socks5Reply::kAddressTypeNotSupported, "address type 2"},
      {{5, 1, 0, 0}, Socks5Reply::kAddressTypeNotSupported, "address type 0"},
      {{5, 1, 0, 1, 1, 2, 3, 4, 0, 0}, Socks5Reply::kNotAllowed, "port 0"},
      {{5, 1, 0, 3, 0, 0, 80}, Socks5Reply::kGeneralFailure, "empty name"},
      {NameRequest(std::string("a\0b", 3), 80), Socks5Reply::kNotAllowed, "NUL"},
      {NameRequest("a b", 80), Socks5Reply::kNotAllowed, "not a host name"},
      {NameRequest("a..b", 80), Socks5Reply::kNotAllowed, "not a host name"},
      {NameRequest("[::1]", 80), Socks5Reply::kNotAllowed, "not a host name"},
      {NameRequest("127.1", 80), Socks5Reply::kNotAllowed, "not a host name"},
      {NameRequest(std::string(64, 'a'), 80), Socks5Reply::kNotAllowed, "not a host name"},
      {NameRequest("example.com", 0), Socks5Reply::kNotAllowed, "port 0"},
  };
  for (const Case& c : cases) {
    Result<ReadStep<Socks5Request>> step = ReadSocks5Request(c.bytes);
    ASSERT_FALSE(step.ok()) << c.why;
    EXPECT_NE(step.error().message().find(c.why), std::string::npos) << step.error().message();
    EXPECT_EQ(Socks5ReplyFor(step.error()), c.reply) << c.why;
  }
  EXPECT_EQ(Socks5ReplyFor(Error(ErrorKind::kIo, "other")), Socks5Reply::kGeneralFailure);
}

TEST(Socks5, PartialInputNeedsMoreAtEverySplit) {
  const std::vector<Bytes> greetings = {{5, 1, 0}, {5, 3, 1, 2, 0}};
  for (const Bytes& whole : greetings) {
    for (size_t split = 0; split < whole.size(); ++split) {
      Result<ReadStep<Socks5Greeting>> step = ReadSocks5Greeting(std::span(whole).first(split));
      ASSERT_TRUE(step.ok());
      EXPECT_TRUE(step->need_more()) << split;
    }
  }
  const std::vector<Bytes> requests = {{5, 1, 0, 1, 10, 0, 0, 1, 0, 22}, NameRequest("example.com", 443),
                                       Bytes{5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 53}};
  for (const Bytes& whole : requests) {
    for (size_t split = 0; split < whole.size(); ++split) {
      Result<ReadStep<Socks5Request>> step = ReadSocks5Request(std::span(whole).first(split));
      ASSERT_TRUE(step.ok());
      EXPECT_TRUE(step->need_more()) << split;
    }
    EXPECT_FALSE(ReadSocks5Request(whole)->need_more());
  }
  // A refusal does not wait for the rest of the message.
  EXPECT_EQ(Socks5ReplyFor(ReadSocks5Request(Bytes{5, 2}).error()), Socks5Reply::kCommandNotSupported);
  EXPECT_EQ(Socks5ReplyFor(ReadSocks5Request(Bytes{5, 1, 0, 7}).error()), Socks5Reply::kAddressTypeNotSupported);
  EXPECT_FALSE(ReadSocks5Greeting(Bytes{6}).ok());
}

TEST(Socks5, RequestReplies) {
  EXPECT_EQ(Socks5RequestReply(Socks5Reply::kSucceeded), (std::array<uint8_t, 10>{5, 0, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Socks5RequestReply(Socks5Reply::kCommandNotSupported),
            (std::array<uint8_t, 10>{5, 7, 0, 1, 0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(Socks5RequestReply(Socks5Reply::kNotAllowed)[1], 0x02);
  EXPECT_EQ(Socks5RequestReply(Socks5Reply::kAddressTypeNotSupported)[1], 0x08);
}

}  // namespace
}  // namespace corral
