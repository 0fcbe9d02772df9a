#include "net/socks5.h"

#include <algorithm>

#include "net/host_port.h"

namespace corral {
namespace {

constexpr uint8_t kVersion = 5;
constexpr uint8_t kConnect = 0x01;
constexpr uint8_t kBind = 0x02;
constexpr uint8_t kUdpAssociate = 0x03;
constexpr size_t kRequestFixed = 4;  // version, command, reserved, address type

constexpr std::string_view kCodeGreeting = "socks5_no_acceptable_methods";
constexpr std::string_view kCodeGeneralFailure = "socks5_general_failure";
constexpr std::string_view kCodeNotAllowed = "socks5_not_allowed";
constexpr std::string_view kCodeCommand = "socks5_command_not_supported";
constexpr std::string_view kCodeAddressType = "socks5_address_type_not_supported";

Error Refused(std::string_view code, const std::string& why) {
  return Error(ErrorKind::kUsage, "socks5: " + why).WithCode(std::string(code));
}

uint16_t Read16(std::span<const uint8_t> bytes, size_t at) {
  return static_cast<uint16_t>(bytes[at] << 8 | bytes[at + 1]);
}

// The address's length, once its first byte (for a name, its length) has come.
size_t AddressLength(Socks5AddressType type, std::span<const uint8_t> received) {
  switch (type) {
    case Socks5AddressType::kIpv4: return 4;
    case Socks5AddressType::kIpv6: return 16;
    case Socks5AddressType::kDomainName: return 1 + static_cast<size_t>(received[kRequestFixed]);
  }
  return 0;
}

Result<std::string> ReadHost(Socks5AddressType type, std::span<const uint8_t> address) {
  switch (type) {
    case Socks5AddressType::kIpv4: return Ipv4Text(address.first<4>());
    case Socks5AddressType::kIpv6: return Ipv6Text(address.first<16>());
    case Socks5AddressType::kDomainName: break;
  }
  std::span<const uint8_t> name = address.subspan(1);
  if (std::find(name.begin(), name.end(), 0) != name.end()) return Refused(kCodeNotAllowed, "a NUL in the name");
  Result<std::string> host = NormalHostName(std::string_view(reinterpret_cast<const char*>(name.data()), name.size()));
  if (!host.ok()) return Refused(kCodeNotAllowed, "a name that is not a host name: " + host.error().message());
  return host;
}

}  // namespace

Result<ReadStep<Socks5Greeting>> ReadSocks5Greeting(std::span<const uint8_t> received) {
  if (received.empty()) return ReadStep<Socks5Greeting>::NeedMore();
  if (received[0] != kVersion) return Refused(kCodeGreeting, "a greeting of version " + std::to_string(received[0]));
  if (received.size() < 2) return ReadStep<Socks5Greeting>::NeedMore();
  size_t count = received[1];
  if (count == 0) return Refused(kCodeGreeting, "a greeting offering no methods");
  if (received.size() < 2 + count) return ReadStep<Socks5Greeting>::NeedMore();
  Socks5Greeting greeting;
  greeting.methods.assign(received.begin() + 2, received.begin() + 2 + static_cast<std::ptrdiff_t>(count));
  if (std::find(greeting.methods.begin(), greeting.methods.end(), 0x00) == greeting.methods.end()) {
    return Refused(kCodeGreeting, "a greeting not offering 0x00 (no authentication)");
  }
  return ReadStep<Socks5Greeting>(std::move(greeting), 2 + count);
}

Result<ReadStep<Socks5Request>> ReadSocks5Request(std::span<const uint8_t> received) {
  if (received.size() > 0 && received[0] != kVersion) {
    return Refused(kCodeGeneralFailure, "a request of version " + std::to_string(received[0]));
  }
  if (received.size() > 1 && received[1] != kConnect) {
    std::string name = received[1] == kBind           ? "BIND"
                       : received[1] == kUdpAssociate ? "UDP ASSOCIATE"
                                                      : "command " + std::to_string(received[1]);
    return Refused(kCodeCommand, name + " is not supported, only CONNECT");
  }
  if (received.size() > 2 && received[2] != 0) return Refused(kCodeGeneralFailure, "a reserved byte that is not 0");
  if (received.size() < kRequestFixed) return ReadStep<Socks5Request>::NeedMore();
  Socks5Request request;
  uint8_t type = received[3];
  if (type != 0x01 && type != 0x03 && type != 0x04) {
    return Refused(kCodeAddressType, "address type " + std::to_string(type) + " is not supported");
  }
  request.address_type = static_cast<Socks5AddressType>(type);
  if (received.size() == kRequestFixed) return ReadStep<Socks5Request>::NeedMore();
  size_t address_length = AddressLength(request.address_type, received);
  if (address_length == 1) return Refused(kCodeGeneralFailure, "an empty name");
  size_t total = kRequestFixed + address_length + 2;
  if (received.size() < total) return ReadStep<Socks5Request>::NeedMore();
  CORRAL_ASSIGN_OR_RETURN(request.host, ReadHost(request.address_type, received.subspan(kRequestFixed, address_length)));
  request.port = Read16(received, kRequestFixed + address_length);
  if (request.port == 0) return Refused(kCodeNotAllowed, "port 0");
  return ReadStep<Socks5Request>(std::move(request), total);
}

Socks5Reply Socks5ReplyFor(const Error& refusal) {
  if (refusal.code() == kCodeCommand) return Socks5Reply::kCommandNotSupported;
  if (refusal.code() == kCodeAddressType) return Socks5Reply::kAddressTypeNotSupported;
  if (refusal.code() == kCodeNotAllowed) return Socks5Reply::kNotAllowed;
  return Socks5Reply::kGeneralFailure;
}

std::array<uint8_t, 2> Socks5MethodReply(Socks5Method method) { return {kVersion, static_cast<uint8_t>(method)}; }

std::array<uint8_t, 10> Socks5RequestReply(Socks5Reply reply) {
  return {kVersion, static_cast<uint8_t>(reply), 0, static_cast<uint8_t>(Socks5AddressType::kIpv4), 0, 0, 0, 0, 0, 0};
}

}  // namespace corral
