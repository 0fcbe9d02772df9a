#include "net/address.h"

#include <netinet/in.h>

#include <cstring>

#include <optional>
#include <vector>

#include "net/user_text.h"

namespace corral {
namespace {

Error NotAnAddress(std::string_view text, const std::string& why) {
  return Error(ErrorKind::kUsage, "'" + PrintableText(text) + "' is not an IP address: " + why);
}

bool Digit(char c) { return c >= '0' && c <= '9'; }

std::optional<int> HexDigit(char c) {
  if (Digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return std::nullopt;
}

// A decimal number of 1 to 3 digits without a leading zero, at most `limit`.
std::optional<int> SmallDecimal(std::string_view text, int limit) {
  if (text.empty() || text.size() > 3 || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  int value = 0;
  for (char c : text) {
    if (!Digit(c)) return std::nullopt;
    value = value * 10 + (c - '0');
  }
  if (value > limit) return std::nullopt;
  return value;
}

Result<Ipv4Bytes> ParseIpv4(std::string_view whole, std::string_view text) {
  std::vector<std::string_view> parts = Split(text, '.');
  if (parts.size() != 4) return NotAnAddress(whole, "an IPv4 address has four parts");
  Ipv4Bytes bytes{};
  for (size_t i = 0; i < 4; ++i) {
    std::optional<int> value = SmallDecimal(parts[i], 255);
    if (!value) return NotAnAddress(whole, "each IPv4 part is 0 to 255 in decimal, without leading zeros");
    bytes[i] = static_cast<uint8_t>(*value);
  }
  return bytes;
}

// Whether a side of an IPv6 address may end in a dotted IPv4 part: only the
// last side may.
enum class DottedTail { kAllowed, kRefused };

// The 16-bit groups of one side of a "::" (or of the whole address without
// one); a dotted IPv4 tail gives two groups.
Result<std::vector<uint16_t>> ParseGroups(std::string_view whole, std::string_view side, DottedTail tail) {
  std::vector<uint16_t> groups;
  if (side.empty()) return groups;
  std::vector<std::string_view> pieces = Split(side, ':');
  for (size_t i = 0; i < pieces.size(); ++i) {
    std::string_view piece = pieces[i];
    if (piece.find('.') != std::string_view::npos) {
      if (tail == DottedTail::kRefused || i + 1 != pieces.size()) return NotAnAddress(whole, "a dotted IPv4 part only at the end");
      CORRAL_ASSIGN_OR_RETURN(Ipv4Bytes ipv4, ParseIpv4(whole, piece));
      groups.push_back(static_cast<uint16_t>(ipv4[0] << 8 | ipv4[1]));
      groups.push_back(static_cast<uint16_t>(ipv4[2] << 8 | ipv4[3]));
      continue;
    }
    if (piece.empty() || piece.size() > 4) return NotAnAddress(whole, "each IPv6 group is 1 to 4 hex digits");
    int value = 0;
    for (char c : piece) {
      std::optional<int> digit = HexDigit(c);
      if (!digit) return NotAnAddress(whole, "each IPv6 group is 1 to 4 hex digits");
      value = value * 16 + *digit;
    }
    groups.push_back(static_cast<uint16_t>(value));
  }
  return groups;
}

Result<Ipv6Bytes> ParseIpv6(std::string_view text) {
  if (text.find('%') != std::string_view::npos) return NotAnAddress(text, "a zone (%) is not taken");
  size_t gap = text.find("::");
  std::string_view head = gap == std::string_view::npos ? text : text.substr(0, gap);
  std::string_view rest = gap == std::string_view::npos ? std::string_view() : text.substr(gap + 2);
  if (rest.find("::") != std::string_view::npos) return NotAnAddress(text, "more than one '::'");
  CORRAL_ASSIGN_OR_RETURN(std::vector<uint16_t> front, ParseGroups(text, head, gap == std::string_view::npos ? DottedTail::kAllowed : DottedTail::kRefused));
  CORRAL_ASSIGN_OR_RETURN(std::vector<uint16_t> back, ParseGroups(text, rest, DottedTail::kAllowed));
  size_t count = front.size() + back.size();
  if (gap == std::string_view::npos ? count != 8 : count > 7) {
    return NotAnAddress(text, "an IPv6 address has eight groups, or fewer with one '::'");
  }
  Ipv6Bytes bytes{};
  auto put = [&bytes](size_t group, uint16_t value) {
    bytes[2 * group] = static_cast<uint8_t>(value >> 8);
    bytes[2 * group + 1] = static_cast<uint8_t>(value);
  };
  for (size_t i = 0; i < front.size(); ++i) put(i, front[i]);
  for (size_t i = 0; i < back.size(); ++i) put(8 - back.size() + i, back[i]);
  return bytes;
}

bool IsMapped(std::span<const uint8_t> bytes) {
  for (size_t i = 0; i < 10; ++i) {
    if (bytes[i] != 0) return false;
  }
  return bytes[10] == 0xff && bytes[11] == 0xff;
}

std::string Ipv4Text(std::span<const uint8_t> four) {
  return std::to_string(four[0]) + "." + std::to_string(four[1]) + "." + std::to_string(four[2]) + "." +
         std::to_string(four[3]);
}

std::string Ipv6Text(std::span<const uint8_t> bytes) {
  if (IsMapped(bytes)) return "::ffff:" + Ipv4Text(bytes.subspan(12));
  std::array<uint16_t, 8> groups{};
  for (size_t i = 0; i < 8; ++i) groups[i] = static_cast<uint16_t>(bytes[2 * i] << 8 | bytes[2 * i + 1]);
  // The longest run of two or more zero groups, the first of equals.
  size_t best_start = 8, best_length = 1;
  for (size_t start = 0; start < 8;) {
    size_t end = start;
    while (end < 8 && groups[end] == 0) ++end;
    if (end - start > best_length) {
      best_start = start;
      best_length = end - start;
    }
    start = end == start ? start + 1 : end;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < 8; ++i) {
    if (i == best_start) {
      out += "::";
      i += best_length - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out.push_back(':');
    bool started = false;
    for (int shift = 12; shift >= 0; shift -= 4) {
      int digit = groups[i] >> shift & 0xf;
      if (digit == 0 && !started && shift != 0) continue;
      started = true;
      out.push_back(kHex[digit]);
    }
  }
  return out;
}

// Whether the first `bits` bits of the two byte strings are equal.
bool SamePrefix(std::span<const uint8_t> a, std::span<const uint8_t> b, int bits) {
  size_t whole = static_cast<size_t>(bits / 8);
  for (size_t i = 0; i < whole; ++i) {
    if (a[i] != b[i]) return false;
  }
  if (bits % 8 == 0) return true;
  auto mask = static_cast<uint8_t>(0xff << (8 - bits % 8));
  return (a[whole] & mask) == (b[whole] & mask);
}

}  // namespace

Address Address::Ipv4(const Ipv4Bytes& bytes) {
  Ipv6Bytes all{};
  for (size_t i = 0; i < 4; ++i) all[i] = bytes[i];
  return Address(AddressFamily::kIpv4, all);
}

Address Address::Ipv6(const Ipv6Bytes& bytes) { return Address(AddressFamily::kIpv6, bytes); }

std::span<const uint8_t> Address::bytes() const {
  return std::span<const uint8_t>(bytes_.data(), family_ == AddressFamily::kIpv4 ? 4 : 16);
}

std::string Address::ToString() const {
  return family_ == AddressFamily::kIpv4 ? Ipv4Text(bytes()) : Ipv6Text(bytes());
}

Result<Address> ParseAddress(std::string_view text) {
  if (text.empty()) return NotAnAddress(text, "it is empty");
  if (text.find(':') == std::string_view::npos) {
    CORRAL_ASSIGN_OR_RETURN(Ipv4Bytes bytes, ParseIpv4(text, text));
    return Address::Ipv4(bytes);
  }
  CORRAL_ASSIGN_OR_RETURN(Ipv6Bytes bytes, ParseIpv6(text));
  return Address::Ipv6(bytes);
}

Address Unmapped(const Address& address) {
  std::span<const uint8_t> bytes = address.bytes();
  if (address.family() != AddressFamily::kIpv6 || !IsMapped(bytes)) return address;
  return Address::Ipv4({bytes[12], bytes[13], bytes[14], bytes[15]});
}

bool Cidr::Contains(const Address& address) const {
  if (prefix_length < 0 || prefix_length > base.bit_count()) return false;  // not a range ParseCidr gives
  return address.family() == base.family() && SamePrefix(address.bytes(), base.bytes(), prefix_length);
}

bool Cidr::Covers(const Cidr& inner) const { return inner.prefix_length >= prefix_length && Contains(inner.base); }

std::string Cidr::ToString() const { return base.ToString() + "/" + std::to_string(prefix_length); }

Result<Cidr> ParseCidr(std::string_view text) {
  size_t slash = text.rfind('/');
  if (slash == std::string_view::npos) {
    return Error(ErrorKind::kUsage, "'" + PrintableText(text) + "' is not a CIDR range (ADDRESS/LENGTH)");
  }
  CORRAL_ASSIGN_OR_RETURN(Address base, ParseAddress(text.substr(0, slash)));
  std::optional<int> length = SmallDecimal(text.substr(slash + 1), base.bit_count());
  if (!length) {
    return Error(ErrorKind::kUsage, "'" + PrintableText(text) + "' has no prefix length 0 to " +
                                        std::to_string(base.bit_count()) + " after its '/'");
  }
  Cidr range{base, *length};
  Ipv6Bytes cleared{};
  std::span<const uint8_t> bytes = base.bytes();
  for (size_t i = 0; i < bytes.size(); ++i) cleared[i] = bytes[i];
  for (int bit = *length; bit < base.bit_count(); ++bit) {
    cleared[static_cast<size_t>(bit / 8)] &= static_cast<uint8_t>(~(0x80 >> (bit % 8)));
  }
  Address network = base.family() == AddressFamily::kIpv4
                        ? Address::Ipv4({cleared[0], cleared[1], cleared[2], cleared[3]})
                        : Address::Ipv6(cleared);
  if (network != base) {
    return Error(ErrorKind::kUsage, "'" + PrintableText(text) + "' has bits set past its /" +
                                        std::to_string(*length) + " prefix (the range is " +
                                        Cidr{network, *length}.ToString() + ")");
  }
  return range;
}

Cidr HostRange(const Address& address) { return Cidr{address, address.bit_count()}; }

std::optional<Address> AddressOfSockaddr(const struct sockaddr* address) {
  if (address == nullptr) return std::nullopt;
  if (address->sa_family == AF_INET) {
    Ipv4Bytes bytes;
    std::memcpy(bytes.data(), &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, bytes.size());
    return Address::Ipv4(bytes);
  }
  if (address->sa_family == AF_INET6) {
    Ipv6Bytes bytes;
    std::memcpy(bytes.data(), &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, bytes.size());
    return Address::Ipv6(bytes);
  }
  return std::nullopt;
}

}  // namespace corral
