#include "net/synthetic_names.h"

namespace corral {

std::string NormalName(const std::string& name) {
  std::string normal = name;
  if (!normal.empty() && normal.back() == '.') normal.pop_back();
  for (char& c : normal) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return normal;
}

std::optional<Address> SyntheticNames::AddressFor(const std::string& name) {
  const std::string normal = NormalName(name);
  if (normal.empty() || !allowed_(normal)) return std::nullopt;
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = index_.find(normal);
  size_t position;
  if (found != index_.end()) {
    position = found->second;
  } else {
    if (names_.size() >= kCapacity) {
      ++overflowed_;
      return std::nullopt;
    }
    position = names_.size();
    names_.push_back(normal);
    index_.emplace(normal, position);
  }
  const size_t host = position + 1;
  return Address::Ipv4(Ipv4Bytes{kFirstOctets[0], kFirstOctets[1], static_cast<uint8_t>(host >> 8),
                                 static_cast<uint8_t>(host & 0xff)});
}

bool SyntheticNames::InRange(const Address& address) {
  if (address.family() != AddressFamily::kIpv4) return false;
  std::span<const uint8_t> bytes = address.bytes();
  return bytes[0] == kFirstOctets[0] && bytes[1] == kFirstOctets[1];
}

std::optional<std::string> SyntheticNames::NameFor(const Address& address) const {
  if (!InRange(address)) return std::nullopt;
  std::span<const uint8_t> bytes = address.bytes();
  const size_t host = (static_cast<size_t>(bytes[2]) << 8) | bytes[3];
  std::lock_guard<std::mutex> lock(mutex_);
  if (host == 0 || host > names_.size()) return std::nullopt;
  return names_[host - 1];
}

size_t SyntheticNames::size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return names_.size();
}

size_t SyntheticNames::overflowed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return overflowed_;
}

}  // namespace corral
