// The server side of SOCKS5 (RFC 1928) as corral's egress proxy speaks it to
// a confined program: no authentication, CONNECT only, read strictly.
//
// Two steps, each over the bytes received so far and each NeedMore until its
// message is whole. The greeting is version 5, a count of 1 to 255 methods
// and the methods; it must offer 0x00 (no authentication). The request is
// version 5, a command (CONNECT; BIND and UDP ASSOCIATE are not supported),
// a reserved 0, an address type and address (IPv4, a domain name of 1 to 255
// bytes that is a host name as net/host_port.h reads it, or IPv6) and a port
// of 1 to 65535. A refusal's message starts "socks5: "; after a refused
// greeting the proxy sends Socks5MethodReply(kNoAcceptable) and closes,
// after a refused request Socks5RequestReply(Socks5ReplyFor(error)) and
// closes. A check runs as soon as its byte has come, so a refusal can come
// before the whole message.
//
//   Result<ReadStep<Socks5Greeting>> hello = ReadSocks5Greeting(received);
//   if (!hello.ok()) { send(Socks5MethodReply(Socks5Method::kNoAcceptable)); close(); }
//   else if (!hello->need_more()) send(Socks5MethodReply(Socks5Method::kNoAuthentication));
//   ...
//   Result<ReadStep<Socks5Request>> request = ReadSocks5Request(received);
//   if (!request.ok()) send(Socks5RequestReply(Socks5ReplyFor(request.error())));
//   else if (!request->need_more()) connect(request->value().host, request->value().port);
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "net/read_step.h"

namespace corral {

enum class Socks5Method : uint8_t {
  kNoAuthentication = 0x00,
  kNoAcceptable = 0xff,
};

enum class Socks5Reply : uint8_t {
  kSucceeded = 0x00,
  kGeneralFailure = 0x01,
  kNotAllowed = 0x02,  // "connection not allowed by ruleset"
  kNetworkUnreachable = 0x03,
  kHostUnreachable = 0x04,
  kConnectionRefused = 0x05,
  kTtlExpired = 0x06,
  kCommandNotSupported = 0x07,
  kAddressTypeNotSupported = 0x08,
};

enum class Socks5AddressType : uint8_t {
  kIpv4 = 0x01,
  kDomainName = 0x03,
  kIpv6 = 0x04,
};

struct Socks5Greeting {
  std::vector<uint8_t> methods;  // as offered, 0x00 among them
};

struct Socks5Request {
  Socks5AddressType address_type = Socks5AddressType::kIpv4;
  // Normal form (net/host_port.h): "192.0.2.1", "2001:db8::1" or a lowercased
  // name without a trailing dot.
  std::string host;
  uint16_t port = 0;
};

Result<ReadStep<Socks5Greeting>> ReadSocks5Greeting(std::span<const uint8_t> received);
Result<ReadStep<Socks5Request>> ReadSocks5Request(std::span<const uint8_t> received);

// The reply code a refusal of ReadSocks5Request asks for: kCommandNotSupported,
// kAddressTypeNotSupported, kNotAllowed (a destination no rule can allow: a
// malformed name, port 0) or kGeneralFailure (malformed bytes, and any other
// error).
Socks5Reply Socks5ReplyFor(const Error& refusal);

// Version 5 and the chosen method.
std::array<uint8_t, 2> Socks5MethodReply(Socks5Method method);
// Version 5, `reply`, reserved 0, bound address 0.0.0.0 port 0.
std::array<uint8_t, 10> Socks5RequestReply(Socks5Reply reply);

}  // namespace corral
