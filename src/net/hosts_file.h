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
// LookUpAbsolute asks the system resolver (getaddrinfo) for `name.`, so no
// search domain is appended; it blocks for as long as the resolver takes,
// and gives the addresses once each, in the resolver's order (none when the
// lookup failed).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "net/address.h"

namespace corral {

std::map<std::string, std::vector<Address>> ParseHostsFile(std::string_view text);
std::map<std::string, std::vector<Address>> ReadHostsFile(const std::string& path);
std::vector<Address> LookUpAbsolute(const std::string& name);

}  // namespace corral
