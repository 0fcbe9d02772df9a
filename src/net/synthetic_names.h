// The table behind transparent capture under --allow-host: each name the
// rules allow, when the sandbox looks it up, is given an address of its own
// in 127.77.0.0/16 of the sandbox's loopback, and a connection the sandbox
// makes to that address is mapped back to the name.
//
// The sandbox's name server (net/dns_stub.h) answers an A query for an
// allowed name with the name's address (AddressFor); a program that ignores
// the proxy variables then connects to it, on a port a listener of the
// sandbox's init holds on every address (kernel/loopback.h), and corral's
// proxy reads the address the connection was made to (getsockname), asks
// NameFor, and decides on that name and port exactly as for a CONNECT.
//
// Bounded and never reused during a run: at most kCapacity names, given
// 127.77.0.1, 127.77.0.2, ... in the order first asked; once full, a new name
// gets none (the name server answers it NXDOMAIN) and an address is never
// given to another name, so a connection is never taken for another name
// than the one looked up. Names are kept in their normal form (lower case,
// no trailing dot). Safe to call from the name server's thread and the
// proxy's at once.
//
//   SyntheticNames names([&](const std::string& name) { return rules allow name; });
//   std::optional<Address> a = names.AddressFor("registry.npmjs.org");   // 127.77.0.1
//   std::optional<std::string> n = names.NameFor(*a);                     // "registry.npmjs.org"
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "net/address.h"

namespace corral {

class SyntheticNames {
 public:
  static constexpr size_t kCapacity = 4096;
  // 127.77.0.0/16: the first address given is 127.77.0.1.
  static constexpr uint8_t kFirstOctets[2] = {127, 77};

  // `allowed`: whether a name (normal form) may be given an address at all;
  // the proxy still decides on each connection's name and port.
  explicit SyntheticNames(std::function<bool(const std::string&)> allowed) : allowed_(std::move(allowed)) {}

  // The name's address, given now if it had none; none when the name is not
  // allowed or the table is full.
  std::optional<Address> AddressFor(const std::string& name);
  // The name an address was given to; none for any other address.
  std::optional<std::string> NameFor(const Address& address) const;
  // Whether `address` is in 127.77.0.0/16 (given or not).
  static bool InRange(const Address& address);

  size_t size() const;
  // Names refused an address because the table was full.
  size_t overflowed() const;

 private:
  std::function<bool(const std::string&)> allowed_;
  mutable std::mutex mutex_;
  std::map<std::string, size_t> index_;  // name -> position in names_
  std::vector<std::string> names_;       // names_[i] has 127.77.0.0 + i + 1
  size_t overflowed_ = 0;
};

// A name as a client wrote it, in normal form: ASCII lower case, without a
// trailing dot.
std::string NormalName(const std::string& name);

}  // namespace corral
