// The property the SOCKS5 readers (socks5.h) must hold on any bytes, shared
// by the libFuzzer harness (socks5_fuzz.cc) and its deterministic smoke test.
// The greeting reader runs on the bytes; the request reader on the bytes and,
// after an accepted greeting, on the bytes after it.
//   - they never crash or read out of bounds (sanitizers judge that);
//   - a refusal's message starts "socks5: " and is printable ASCII; a
//     refused greeting's code asks for 0xFF, a refused request's reply code
//     is 0x01, 0x02, 0x07 or 0x08, and 0x07 exactly when the command byte is
//     not CONNECT;
//   - an accepted message used no more bytes than given and exactly as many
//     as its own length fields say; a greeting offered 0x00; a request is
//     version 5, CONNECT, reserved 0, its port is its last two bytes and not
//     0, its host is in normal form and is its address's bytes written out
//     (a name written again in a request reads to the same request);
//   - the bytes fed in two pieces split at `split` give the same answer as
//     whole: when the first piece alone is refused or read, the whole is
//     refused with the same message or read to the same value and length.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/host_port.h"
#include "net/read_step_fuzz_check.h"
#include "net/socks5.h"

namespace corral::testing {

inline bool SameSocks5Request(const Socks5Request& a, const Socks5Request& b) {
  return a.address_type == b.address_type && a.host == b.host && a.port == b.port;
}

inline std::optional<std::string> CheckSocks5Refusal(const Error& error) {
  const std::string& message = error.message();
  if (message.rfind("socks5: ", 0) != 0) return "a refusal not naming the reader: " + message;
  for (char c : message) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) {
      return "a refusal message that is not printable ASCII";
    }
  }
  return std::nullopt;
}

inline std::optional<std::string> CheckSocks5Greeting(std::span<const uint8_t> bytes, size_t split) {
  Result<ReadStep<Socks5Greeting>> step = ReadSocks5Greeting(bytes);
  if (!step.ok()) {
    if (std::optional<std::string> broken = CheckSocks5Refusal(step.error())) return broken;
    if (step.error().code() != "socks5_no_acceptable_methods") return "a greeting refusal with another code";
  } else if (!step->need_more()) {
    const std::vector<uint8_t>& methods = step->value().methods;
    if (step->used() > bytes.size() || bytes[0] != 5 || methods.empty() || step->used() != 2u + bytes[1] ||
        methods.size() != bytes[1] || !std::equal(methods.begin(), methods.end(), bytes.begin() + 2)) {
      return "a greeting read other than its bytes say";
    }
    if (std::find(methods.begin(), methods.end(), 0) == methods.end()) return "a greeting without 0x00 accepted";
  }
  return CheckSplitAgrees(ReadSocks5Greeting(bytes.first(std::min(split, bytes.size()))), step, split,
                          [](const Socks5Greeting& a, const Socks5Greeting& b) { return a.methods == b.methods; });
}

inline std::optional<std::string> CheckSocks5RequestHost(std::span<const uint8_t> bytes, const Socks5Request& request,
                                                         size_t address_length) {
  std::span<const uint8_t> address = bytes.subspan(4, address_length);
  switch (request.address_type) {
    case Socks5AddressType::kIpv4:
      if (address_length != 4 || request.host != Ipv4Text(address.first<4>())) return "an IPv4 host not its bytes";
      return std::nullopt;
    case Socks5AddressType::kIpv6:
      if (address_length != 16 || request.host != Ipv6Text(address.first<16>())) return "an IPv6 host not its bytes";
      return std::nullopt;
    case Socks5AddressType::kDomainName: break;
  }
  Result<std::string> normal = NormalHostName(request.host);
  if (!normal.ok() || *normal != request.host) return "a name not in normal form";
  std::vector<uint8_t> again(5 + request.host.size() + 2);
  again[0] = 5;
  again[1] = 1;
  again[3] = 3;
  again[4] = static_cast<uint8_t>(request.host.size());
  std::copy(request.host.begin(), request.host.end(), again.begin() + 5);
  again[again.size() - 2] = static_cast<uint8_t>(request.port >> 8);
  again[again.size() - 1] = static_cast<uint8_t>(request.port);
  Result<ReadStep<Socks5Request>> reread = ReadSocks5Request(again);
  if (!reread.ok() || reread->need_more() || reread->used() != again.size() ||
      !SameSocks5Request(reread->value(), request)) {
    return "a name written again reads to another request";
  }
  return std::nullopt;
}

inline std::optional<std::string> CheckSocks5Request(std::span<const uint8_t> bytes, size_t split) {
  Result<ReadStep<Socks5Request>> step = ReadSocks5Request(bytes);
  if (!step.ok()) {
    if (std::optional<std::string> broken = CheckSocks5Refusal(step.error())) return broken;
    Socks5Reply reply = Socks5ReplyFor(step.error());
    if (reply != Socks5Reply::kGeneralFailure && reply != Socks5Reply::kNotAllowed &&
        reply != Socks5Reply::kCommandNotSupported && reply != Socks5Reply::kAddressTypeNotSupported) {
      return "a request refusal with reply code " + std::to_string(static_cast<int>(reply));
    }
    bool other_command = bytes.size() > 1 && bytes[0] == 5 && bytes[1] != 1;
    if (other_command != (reply == Socks5Reply::kCommandNotSupported)) return "0x07 for the wrong reason";
  } else if (!step->need_more()) {
    const Socks5Request& request = step->value();
    if (step->used() > bytes.size() || step->used() < 8) return "a request of " + std::to_string(step->used());
    if (bytes[0] != 5 || bytes[1] != 1 || bytes[2] != 0 || bytes[3] != static_cast<uint8_t>(request.address_type)) {
      return "a request accepted with another version, command, reserved byte or address type";
    }
    size_t address_length = step->used() - 6;
    if (request.address_type == Socks5AddressType::kDomainName && address_length != 1u + bytes[4]) {
      return "a name of another length than its length byte";
    }
    if (request.port == 0 || request.port != (bytes[step->used() - 2] << 8 | bytes[step->used() - 1])) {
      return "a port other than the last two bytes";
    }
    if (std::optional<std::string> broken = CheckSocks5RequestHost(bytes, request, address_length)) return broken;
  }
  return CheckSplitAgrees(ReadSocks5Request(bytes.first(std::min(split, bytes.size()))), step, split,
                          SameSocks5Request);
}

inline std::optional<std::string> CheckSocks5Readers(std::span<const uint8_t> bytes, size_t split) {
  if (std::optional<std::string> broken = CheckSocks5Greeting(bytes, split)) return "greeting: " + *broken;
  if (std::optional<std::string> broken = CheckSocks5Request(bytes, split)) return "request: " + *broken;
  Result<ReadStep<Socks5Greeting>> greeting = ReadSocks5Greeting(bytes);
  if (!greeting.ok() || greeting->need_more()) return std::nullopt;
  std::span<const uint8_t> rest = bytes.subspan(greeting->used());
  size_t rest_split = split > greeting->used() ? split - greeting->used() : 0;
  if (std::optional<std::string> broken = CheckSocks5Request(rest, rest_split)) return "request after greeting: " + *broken;
  return std::nullopt;
}

}  // namespace corral::testing
