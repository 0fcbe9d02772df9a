// Where a resolved address leads, judged before the proxy connects to it:
// the public internet, or a special range a sandboxed command must not reach
// by default (the host's loopback, the LAN, the cloud metadata service, ...).
//
// ClassifyAddress names the range an address is in; an IPv6 address that
// carries an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4) is
// judged by the IPv4 address it carries, so ::ffff:169.254.169.254 and
// 64:ff9b::a9fe:a9fe are the metadata address too. A Teredo address is
// refused outright (its IPv4 part is obfuscated and it tunnels over UDP), and
// so is one in the local-use NAT64 prefix 64:ff9b:1::/48 outside its /96
// layout, whose embedded address cannot be read without knowing the
// network's layout. An IPv6 address outside 2000::/3 that no row names is
// reserved (not allocated for global unicast).
//
// CarriedIpv4Ranges tells what IPv4 addresses an IPv6 range reaches through
// those forms, for the rules that judge breadth (host_pattern.h).
//
// CheckDestination lets a public address through and refuses the rest,
// unless one of the user's --allow-private ranges covers it. A metadata
// address is refused even then, unless a range names it alone (/32, /128).
//
//   CORRAL_ASSIGN_OR_RETURN(Cidr lan, ParseAllowedPrivateRange("192.168.1.0/24"));
//   std::vector<Cidr> allowed = {lan};
//   CORRAL_TRY(CheckDestination(peer, allowed));
//   // kDenied for 10.0.0.5: "destination 10.0.0.5 is a private address
//   // (10.0.0.0/8); --allow-private 10.0.0.5/32 would let it through"
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "net/address.h"

namespace corral {

enum class AddressRange {
  kPublic,
  kUnspecified,          // 0.0.0.0/8, ::
  kLoopback,             // 127.0.0.0/8, ::1
  kPrivate,              // 10/8, 172.16/12, 192.168/16, fc00::/7 (unique local)
  kLinkLocal,            // 169.254/16, fe80::/10
  kSharedAddressSpace,   // 100.64/10, carrier-grade NAT
  kMulticast,            // 224/4, ff00::/8
  kReserved,             // 240/4 with 255.255.255.255; unallocated IPv6
  kCloudMetadata,        // 169.254.169.254, 100.100.100.200, fd00:ec2::254
  kBenchmarking,         // 198.18/15, 2001:2::/48
  kDocumentation,        // 192.0.2/24, 198.51.100/24, 203.0.113/24, 2001:db8::/32, 3fff::/20
  kProtocolAssignments,  // 192.0.0/24
  kSiteLocal,            // fec0::/10 (deprecated)
  kTeredo,               // 2001::/32, refused outright
  kUnreadNat64,          // 64:ff9b:1::/48 outside 64:ff9b:1::/96
};

// How an IPv6 address carries the IPv4 address it was judged by.
enum class Embedding { kNone, kIpv4Mapped, kIpv4Compatible, kNat64, kSixToFour };

struct Classification {
  AddressRange range = AddressRange::kPublic;
  // The row that matched ("10.0.0.0/8"); for kPublic, the address alone.
  Cidr block;
  Embedding embedding = Embedding::kNone;
  // The IPv4 address judged, when `embedding` is not kNone.
  std::optional<Address> embedded;
};

Classification ClassifyAddress(const Address& address);

// "IPv4-mapped", "IPv4-compatible", "NAT64", "6to4"; empty for kNone.
std::string_view EmbeddingName(Embedding embedding);

// The IPv4 addresses an IPv6 range reaches through one form that carries them.
struct CarriedRange {
  Embedding embedding = Embedding::kNone;
  // The prefix of that form the range overlaps: "64:ff9b::/96".
  Cidr carrier;
  // The bit where the carried IPv4 address starts: 96, or 16 for 6to4; 0
  // where the layout cannot be read.
  int ipv4_offset = 0;
  // The IPv4 range the range's addresses there carry, 0.0.0.0/0 when it
  // covers the whole prefix; none for the local-use NAT64 prefix
  // 64:ff9b:1::/48, whose layout cannot be read.
  std::optional<Cidr> ipv4;
};

// One entry for each prefix carrying IPv4 that `range` overlaps (covers or
// lies in): ::ffff:0:0/96, ::/96, 64:ff9b::/96, 64:ff9b:1::/96 (with an entry
// for 64:ff9b:1::/48 beside it), 2002::/16. Empty for an IPv4 range or one
// overlapping none. "2002:a00::/24" gives {kSixToFour, 2002::/16, 16, 10.0.0.0/8}.
std::vector<CarriedRange> CarriedIpv4Ranges(const Cidr& range);

// "169.254.169.254 is the cloud metadata address", "10.0.0.5 is a private
// address (10.0.0.0/8)", "::ffff:10.0.0.5 carries 10.0.0.5 (IPv4-mapped),
// a private address (10.0.0.0/8)".
std::string DescribeClassification(const Address& address, const Classification& classification);

// A --allow-private CIDR, of any width, that lies inside one non-public row
// (so "10.0.0.0/8" and "192.168.1.7/32" but not "8.8.8.0/24" or
// "0.0.0.0/0"); an IPv6 range that carries IPv4 addresses is refused (the
// IPv4 range is what to write). Refusals are kUsage and name the argument.
Result<Cidr> ParseAllowedPrivateRange(std::string_view text);

// Ok for a public address, and for another one that an allowed range covers
// (an address that carries an IPv4 address, by a range covering that IPv4
// address; a metadata address, only by a range naming it alone). Otherwise
// kDenied, with DescribeClassification's sentence.
Result<void> CheckDestination(const Address& address, std::span<const Cidr> allowed_private_ranges);

}  // namespace corral
