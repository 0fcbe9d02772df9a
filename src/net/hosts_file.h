// The host's own names table (/etc/hosts), read once by the egress proxy:
// the names it holds are answered from it, and every other name is looked
// up as an absolute name, so no search domain of the host's resolver is
// ever appended to a name the rules allowed (a missing "api.allowed.test"
// must not become "api.allowed.test.corp.example").
//
// Each line is an address and its names, '#' to the end of a line a
// comment. A line whose address ParseAddress refuses (a zone, a typo) is
// skipped; names are lowercased, a trailing dot dropped, and a name's
// addresses kept in the file's order, once each. A file that cannot be read
// gives an empty table.
//
//   std::map<std::string, std::vector<Address>> names = ReadHostsFile("/etc/hosts");
//   std::vector<Address> found = LookUpAbsolute("registry.npmjs.org");
//
// LookUpAbsolute asks the DNS servers of the host's /etc/resolv.conf (its
// options too: timeout, attempts, rotate, edns0, use-vc) for `name.`, so
// no search domain is appended: an A query, then an AAAA query unless the
// first found that the name does not exist or that no server answers. Of
// each answer it keeps the addresses of the name asked and of the names
// its CNAMEs lead to (15 links at most), no other owner's. Under edns0 a
// UDP query offers answers of 1200 bytes, and a server that refuses that
// with a FORMERR repeating the question is asked again without, for the
// rest of the lookup (one that answers FORMERR with no question looks
// silent: glibc drops its reply). A truncated answer (TC), and every
// query under use-vc, is asked over TCP by corral itself, of each server
// in turn (under rotate each query starting at the next one, round robin)
// until one answers NOERROR or NXDOMAIN (glibc's
// own TCP path has no deadline: a server that accepts and never answers
// held the lookup for ever); a truncated answer stands when none answers
// in time. The lookup's TCP (both queries, every server) gets
// resolv.conf's timeout in all, each server an equal share of what is
// left. It blocks for as long as that takes, and gives the addresses once
// each, IPv4 first, each in the answer's order (none when the lookup
// failed). It goes to DNS itself, through libresolv, not through
// getaddrinfo and the name service switch: /etc/hosts is read by the
// caller (ReadHostsFile), and no other module of nsswitch.conf is loaded,
// so corral can be a static binary. A name that ends in a dot, or is
// empty, finds nothing.
//
// AddressesInDnsAnswer reads one DNS answer (untrusted bytes, any length)
// for `name`'s `type` records (ns_t_a or ns_t_aaaa; any other type gives
// kNoData): it appends to `addresses` each address of that type owned by
// the name or by a name its CNAMEs lead to (15 links at most), once each,
// in the answer's order, and says how the answer ended: NXDOMAIN, no data
// (an answer it cannot parse, an rcode other than NOERROR; its records are
// not read), or answered. A record it cannot parse ends the reading there.
//
// LookUpAbsoluteAt is the same with the servers named, all IPv4 or all
// IPv6 (one try of one second; at most MAXNS of them), for tests; none is
// LookUpAbsolute.
#pragma once

#include <netinet/in.h>

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "net/address.h"

namespace corral {

std::map<std::string, std::vector<Address>> ParseHostsFile(std::string_view text);
std::map<std::string, std::vector<Address>> ReadHostsFile(const std::string& path);
enum class DnsAnswerEnd { kAnswered, kNoData, kNoSuchName };
DnsAnswerEnd AddressesInDnsAnswer(std::span<const unsigned char> answer, const std::string& name, int type,
                                  std::vector<Address>& addresses);
std::vector<Address> LookUpAbsolute(const std::string& name);
std::vector<Address> LookUpAbsoluteAt(const std::string& name, const std::vector<sockaddr_in>& servers);
std::vector<Address> LookUpAbsoluteAt(const std::string& name, const std::vector<sockaddr_in6>& servers);

}  // namespace corral
