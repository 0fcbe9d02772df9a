// The host and port of a destination as a proxy's client names them, read
// strictly and written in one normal form, so that two spellings of the same
// place compare equal as strings and a ruleset sees one name per place.
//
// A host is a name (letters, digits, '-', '_' and '.', labels of 1 to 63
// bytes, at most 253 in all, lowercased, a trailing dot dropped), an IPv4
// address as four decimal parts without leading zeros (a name whose last
// label starts with a digit must be one: "0x7f.1" or "127.1" is refused, as
// a resolver would read it as an address), or an IPv6 address (no zone),
// written as inet_ntop writes it. A port is 1 to 5 digits, 1 to 65535.
//
//   Result<HostPort> place = ParseAuthority("[0:0::1]:8080");  // host "::1", port 8080
//   Result<std::string> name = NormalHostName("Registry.NPMjs.org.");  // "registry.npmjs.org"
//   AuthorityText("::1", 8080);                                 // "[::1]:8080"
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

struct HostPort {
  std::string host;             // normal form, IPv6 without brackets
  std::optional<uint16_t> port;  // empty when the text named none
};

// A name or an IPv4 address (not IPv6), in normal form.
Result<std::string> NormalHostName(std::string_view text);
// An IPv6 address without brackets, in normal form.
Result<std::string> NormalIpv6(std::string_view text);
Result<uint16_t> ParsePort(std::string_view digits);
// `host`, `host:port`, `[v6]` or `[v6]:port`; no userinfo, no empty port.
Result<HostPort> ParseAuthority(std::string_view text);

std::string Ipv4Text(std::span<const uint8_t, 4> address);
std::string Ipv6Text(std::span<const uint8_t, 16> address);
// `host:port`, with brackets around an IPv6 host.
std::string AuthorityText(std::string_view host, uint16_t port);

}  // namespace corral
