// One DNS query, read strictly, and the only answer corral gives to it under
// --network none: NXDOMAIN ("no such name"), never forwarded anywhere.
//
// The reader takes a message as a stub resolver sends it (glibc, musl, Go,
// c-ares, Node): a 12-byte header with QR = 0, opcode QUERY, one question,
// no answer or authority records and at most one additional record (an
// EDNS OPT), then the question's name as plain labels (1 to 63 bytes each,
// at most 255 bytes in all; a compression pointer or an extended label type
// is refused), its type and class. Anything else is refused with an Error,
// and corral sends nothing back. The bytes after the question (the OPT
// record) are not read.
//
//   Result<DnsQuery> query = ParseDnsQuery(bytes);
//   if (query.ok()) send(NxdomainAnswer(*query));   // id and question echoed
//
// NXDOMAIN, not REFUSED or SERVFAIL: glibc moves to the next server or retries
// on those, so a lookup would wait for every timeout; on NXDOMAIN it stops.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"

namespace corral {

struct DnsQuery {
  uint16_t id = 0;
  bool recursion_desired = false;
  // The name as dotted text ("registry.npmjs.org"; "." for the root), with
  // each byte outside [A-Za-z0-9-_] written as \DDD, as in a zone file.
  std::string name;
  uint16_t type = 0;
  uint16_t klass = 0;
  // The question's bytes (name, type, class), echoed in the answer.
  std::vector<uint8_t> question;
};

// The largest message read: a TCP message's length prefix allows 65535.
inline constexpr size_t kDnsMaxMessage = 65535;

Result<DnsQuery> ParseDnsQuery(std::span<const uint8_t> message);

// The NXDOMAIN answer to `query`: its id, QR, RD as asked, RA, RCODE 3, the
// question echoed, no records.
std::vector<uint8_t> NxdomainAnswer(const DnsQuery& query);

// Under --allow-host, for a name the rules allow (net/synthetic_names.h):
// NOERROR with one A record (the name, by a pointer to the question; class
// IN; TTL 60 s) holding `address`, for an A query...
std::vector<uint8_t> AddressAnswer(const DnsQuery& query, const std::array<uint8_t, 4>& address);
// ...and NOERROR with no records ("no data": the name exists, without that
// type) for any other type, AAAA included, so a client falls back to IPv4.
std::vector<uint8_t> NoDataAnswer(const DnsQuery& query);

inline constexpr uint16_t kDnsTypeA = 1;
inline constexpr uint16_t kDnsClassIn = 1;

}  // namespace corral
