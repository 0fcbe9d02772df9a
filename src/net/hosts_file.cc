#include "net/hosts_file.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <fstream>
#include <iterator>

namespace corral {

std::map<std::string, std::vector<Address>> ParseHostsFile(std::string_view text) {
  std::map<std::string, std::vector<Address>> names;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    at = end == std::string_view::npos ? text.size() : end + 1;
    line = line.substr(0, line.find('#'));
    std::vector<std::string_view> words;
    for (size_t i = 0; i < line.size();) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) words.push_back(line.substr(start, i - start));
    }
    if (words.size() < 2) continue;
    Result<Address> address = ParseAddress(words[0]);
    if (!address.ok()) continue;
    for (size_t i = 1; i < words.size(); ++i) {
      std::string name(words[i]);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      if (!name.empty() && name.back() == '.') name.pop_back();
      if (name.empty()) continue;
      std::vector<Address>& addresses = names[name];
      if (std::find(addresses.begin(), addresses.end(), *address) == addresses.end()) addresses.push_back(*address);
    }
  }
  return names;
}

std::map<std::string, std::vector<Address>> ReadHostsFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseHostsFile(text.substr(0, 1 << 20));
}

std::vector<Address> LookUpAbsolute(const std::string& name) {
  struct addrinfo hints = {};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  struct addrinfo* found = nullptr;
  std::vector<Address> addresses;
  const std::string absolute = name + ".";
  if (::getaddrinfo(absolute.c_str(), nullptr, &hints, &found) != 0) return addresses;
  for (struct addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    std::optional<Address> address = AddressOfSockaddr(entry->ai_addr);
    if (address && std::find(addresses.begin(), addresses.end(), *address) == addresses.end()) {
      addresses.push_back(*address);
    }
  }
  ::freeaddrinfo(found);
  return addresses;
}

}  // namespace corral
