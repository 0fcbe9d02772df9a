#include "net/host_port.h"

#include <arpa/inet.h>

#include <cstring>

namespace corral {
namespace {

constexpr size_t kMaxName = 253;
constexpr size_t kMaxLabel = 63;

Error Refused(const std::string& why) { return Error(ErrorKind::kUsage, why); }

bool Digit(char c) { return c >= '0' && c <= '9'; }

bool NameByte(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || Digit(c) || c == '-' || c == '_' || c == '.';
}

// Four decimal parts of 0 to 255, no leading zeros.
bool DottedQuad(std::string_view text) {
  int parts = 0;
  size_t at = 0;
  while (parts < 4) {
    size_t end = at;
    while (end < text.size() && Digit(text[end])) ++end;
    size_t length = end - at;
    if (length == 0 || length > 3 || (length > 1 && text[at] == '0')) return false;
    int value = 0;
    for (size_t i = at; i < end; ++i) value = value * 10 + (text[i] - '0');
    if (value > 255) return false;
    ++parts;
    if (parts == 4) return end == text.size();
    if (end >= text.size() || text[end] != '.') return false;
    at = end + 1;
  }
  return false;
}

}  // namespace

Result<std::string> NormalHostName(std::string_view text) {
  if (!text.empty() && text.back() == '.') text.remove_suffix(1);
  if (text.empty()) return Refused("an empty host");
  if (text.size() > kMaxName) return Refused("a host longer than 253 bytes");
  std::string name;
  name.reserve(text.size());
  size_t label = 0;
  size_t last_label_start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (!NameByte(c)) return Refused("a host with a byte other than a letter, a digit, '-', '_' or '.'");
    if (c == '.') {
      if (label == 0) return Refused("a host with an empty label");
      label = 0;
      last_label_start = i + 1;
    } else if (++label > kMaxLabel) {
      return Refused("a host with a label longer than 63 bytes");
    }
    name.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
  }
  if (label == 0) return Refused("a host with an empty label");
  if (Digit(name[last_label_start]) && !DottedQuad(name)) {
    return Refused("a host that ends in a number but is not an IPv4 address of four decimal parts");
  }
  return name;
}

Result<std::string> NormalIpv6(std::string_view text) {
  // The longest IPv6 text is 45 bytes; longer is refused before copying.
  if (text.size() > INET6_ADDRSTRLEN) return Refused("an IPv6 address that is too long");
  char copy[INET6_ADDRSTRLEN + 1] = {};
  std::memcpy(copy, text.data(), text.size());
  if (std::memchr(copy, '\0', text.size()) != nullptr) return Refused("an IPv6 address with a NUL");
  uint8_t address[16];
  if (inet_pton(AF_INET6, copy, address) != 1) return Refused("an IPv6 address that does not parse");
  return Ipv6Text(address);
}

Result<uint16_t> ParsePort(std::string_view digits) {
  if (digits.empty() || digits.size() > 5) return Refused("a port of other than 1 to 5 digits");
  uint32_t value = 0;
  for (char c : digits) {
    if (!Digit(c)) return Refused("a port with a byte other than a digit");
    value = value * 10 + static_cast<uint32_t>(c - '0');
  }
  if (value == 0 || value > 65535) return Refused("a port outside 1 to 65535");
  return static_cast<uint16_t>(value);
}

Result<HostPort> ParseAuthority(std::string_view text) {
  if (text.find('@') != std::string_view::npos) return Refused("userinfo ('@') in an authority");
  HostPort place;
  std::string_view port_text;
  bool has_port = false;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) return Refused("an IPv6 address without its ']'");
    CORRAL_ASSIGN_OR_RETURN(place.host, NormalIpv6(text.substr(1, close - 1)));
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Refused("bytes after an IPv6 address's ']'");
      has_port = true;
      port_text = rest.substr(1);
    }
  } else {
    size_t colon = text.find(':');
    std::string_view host_text = text.substr(0, colon);
    if (colon != std::string_view::npos) {
      has_port = true;
      port_text = text.substr(colon + 1);
    }
    CORRAL_ASSIGN_OR_RETURN(place.host, NormalHostName(host_text));
  }
  if (has_port) {
    CORRAL_ASSIGN_OR_RETURN(place.port, ParsePort(port_text));
  }
  return place;
}

std::string Ipv4Text(std::span<const uint8_t, 4> address) {
  std::string text;
  for (size_t i = 0; i < 4; ++i) {
    if (i > 0) text.push_back('.');
    text += std::to_string(address[i]);
  }
  return text;
}

std::string Ipv6Text(std::span<const uint8_t, 16> address) {
  char text[INET6_ADDRSTRLEN] = {};
  inet_ntop(AF_INET6, address.data(), text, sizeof text);
  return text;
}

std::string AuthorityText(std::string_view host, uint16_t port) {
  std::string text;
  if (host.find(':') != std::string_view::npos) {
    text = "[" + std::string(host) + "]";
  } else {
    text = std::string(host);
  }
  return text + ":" + std::to_string(port);
}

}  // namespace corral
