// The property the DNS answer reader (AddressesInDnsAnswer, hosts_file.h)
// must hold on any bytes (the answers of the host's DNS servers, which
// corral does not trust), shared by the libFuzzer harness
// (dns_answer_fuzz.cc) and its deterministic smoke test. For each of the
// names "v4.corral.test" and "corral.test", and for A and AAAA:
//   - it never crashes or reads out of bounds (sanitizers judge that);
//   - it appends nothing unless the answer ended kAnswered;
//   - kNoSuchName only for a message of 12 bytes or more whose rcode is 3;
//   - every address it gives is of the type asked (IPv4 for A, IPv6 for
//     AAAA), given once, and its bytes are in the message;
//   - it gives no more addresses than records of that size fit in the
//     message (an A record takes at least 16 bytes, an AAAA record 28).
#pragma once

#include <arpa/nameser.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "net/hosts_file.h"

namespace corral::testing {

inline std::optional<std::string> CheckDnsAnswerReader(std::span<const uint8_t> bytes) {
  for (const char* name : {"v4.corral.test", "corral.test"}) {
    for (int type : {ns_t_a, ns_t_aaaa}) {
      std::vector<Address> found;
      DnsAnswerEnd end = AddressesInDnsAnswer(bytes, name, type, found);
      const std::string what = std::string(name) + (type == ns_t_a ? " A" : " AAAA") + ": ";
      if (end != DnsAnswerEnd::kAnswered && !found.empty()) return what + "addresses from an answer that gave none";
      if (end == DnsAnswerEnd::kNoSuchName && (bytes.size() < 12 || (bytes[3] & 0x0f) != 3)) {
        return what + "NXDOMAIN from a message that does not say it";
      }
      const size_t width = type == ns_t_a ? 4 : 16;
      if (found.size() * (width + 12) > bytes.size()) return what + std::to_string(found.size()) + " addresses";
      for (size_t i = 0; i < found.size(); ++i) {
        const Address& address = found[i];
        if ((address.family() == AddressFamily::kIpv4) != (type == ns_t_a)) {
          return what + "an address of the other family";
        }
        if (std::find(found.begin(), found.begin() + static_cast<std::ptrdiff_t>(i), address) !=
            found.begin() + static_cast<std::ptrdiff_t>(i)) {
          return what + "an address given twice";
        }
        std::span<const uint8_t> raw = address.bytes();
        if (std::search(bytes.begin(), bytes.end(), raw.begin(), raw.end()) == bytes.end()) {
          return what + "an address whose bytes are not in the message";
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace corral::testing
