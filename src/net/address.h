// An IPv4 or IPv6 address as a plain value, a CIDR range of them, and the
// net layer's one reader of their textual forms.
//
// ParseAddress takes the forms people type and nothing looser: IPv4 as four
// decimal parts 0-255 without leading zeros ("10.0.0.1"; "010.0.0.1", "10.1"
// and "0x0a.0.0.1", which inet_aton would read as something else, are
// refused), IPv6 as eight hex groups with at most one "::" and an optional
// dotted IPv4 tail ("fd00::1", "::ffff:10.0.0.1"), without brackets or a
// zone ("fe80::1%eth0" is refused). ToString writes the canonical form; for
// IPv6, lowercase hex without leading zeros, the longest run of two or more
// zero groups (the first of equal runs) as "::", and an IPv4-mapped
// address's tail dotted ("::ffff:10.0.0.1").
//
//   CORRAL_ASSIGN_OR_RETURN(Cidr range, ParseCidr("10.1.0.0/16"));
//   CORRAL_ASSIGN_OR_RETURN(Address peer, ParseAddress("::ffff:10.1.2.3"));
//   if (range.Contains(Unmapped(peer))) ...   // true: compared as 10.1.2.3
#pragma once

#include <sys/socket.h>

#include <optional>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/result.h"

namespace corral {

enum class AddressFamily { kIpv4, kIpv6 };

using Ipv4Bytes = std::array<uint8_t, 4>;
using Ipv6Bytes = std::array<uint8_t, 16>;

class Address {
 public:
  static Address Ipv4(const Ipv4Bytes& bytes);
  static Address Ipv6(const Ipv6Bytes& bytes);

  AddressFamily family() const { return family_; }
  // The bytes in network order: 4 for IPv4, 16 for IPv6.
  std::span<const uint8_t> bytes() const;
  // 32 or 128.
  int bit_count() const { return family_ == AddressFamily::kIpv4 ? 32 : 128; }
  std::string ToString() const;

  bool operator==(const Address&) const = default;

 private:
  Address(AddressFamily family, const Ipv6Bytes& bytes) : family_(family), bytes_(bytes) {}
  AddressFamily family_;
  Ipv6Bytes bytes_;  // IPv4 uses the first 4; the rest stay 0
};

Result<Address> ParseAddress(std::string_view text);

// The address of an AF_INET or AF_INET6 socket address (getaddrinfo's,
// getifaddrs'); none for another family or a null pointer.
std::optional<Address> AddressOfSockaddr(const struct sockaddr* address);

// The IPv4 address an IPv4-mapped IPv6 address (::ffff:a.b.c.d) stands for;
// any other address unchanged.
Address Unmapped(const Address& address);

// The addresses whose first `prefix_length` bits (0 to base.bit_count())
// are those of `base`; the bits of `base` past the prefix are zero. A
// prefix length out of bounds contains nothing.
struct Cidr {
  Address base;
  int prefix_length = 0;

  bool Contains(const Address& address) const;  // false across families
  bool Covers(const Cidr& inner) const;         // every address of `inner` is in this one
  std::string ToString() const;                 // "10.1.0.0/16", "fd00::/8"

  bool operator==(const Cidr&) const = default;
};

// "ADDRESS/LENGTH" (the length 0-32 or 0-128 in decimal). A base with bits
// set past the prefix is refused ("10.1.0.1/16"), naming the range meant.
Result<Cidr> ParseCidr(std::string_view text);

// The single address as a range (/32 or /128).
Cidr HostRange(const Address& address);

}  // namespace corral
