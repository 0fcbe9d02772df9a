// The property the DNS query reader (dns_message.h) must hold on any bytes,
// shared by the libFuzzer harness (dns_message_fuzz.cc) and its
// deterministic smoke test:
//   - it never crashes or reads out of bounds (sanitizers judge that);
//   - a refusal's message starts "dns query: " and is printable ASCII;
//   - an accepted query came from a message of 17 to 65535 bytes with
//     QR = 0, opcode 0 and one question; its name is printable ASCII
//     without spaces, at most 4 * 255 characters; its question bytes are the
//     message's own from offset 12; and its NXDOMAIN answer is the header
//     (id echoed, QR, RCODE 3, one question) followed by exactly them, and
//     its no-data and address answers (transparent capture) the same with
//     NOERROR and none or one A record pointing at the question.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "net/dns_message.h"

namespace corral::testing {

inline bool PrintableAscii(const std::string& text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return false;
  }
  return true;
}

inline std::optional<std::string> CheckDnsQueryReader(std::span<const uint8_t> bytes) {
  Result<DnsQuery> query = ParseDnsQuery(bytes);
  if (!query.ok()) {
    const std::string& message = query.error().message();
    if (message.rfind("dns query: ", 0) != 0) return "a refusal not naming the reader: " + message;
    if (!PrintableAscii(message)) return "a refusal message that is not printable ASCII";
    return std::nullopt;
  }
  if (bytes.size() < 17 || bytes.size() > kDnsMaxMessage) return "accepted " + std::to_string(bytes.size()) + " bytes";
  if ((bytes[2] & 0xf8) != 0) return "accepted a response or an opcode other than QUERY";
  if (bytes[4] != 0 || bytes[5] != 1) return "accepted a question count other than 1";
  if (!PrintableAscii(query->name) || query->name.find(' ') != std::string::npos) return "a name with odd bytes";
  if (query->name.empty() || query->name.size() > 4 * 255) return "a name of " + std::to_string(query->name.size());
  if (query->question.size() + 12 > bytes.size() ||
      !std::equal(query->question.begin(), query->question.end(), bytes.begin() + 12)) {
    return "question bytes that are not the message's";
  }
  std::vector<uint8_t> answer = NxdomainAnswer(*query);
  if (answer.size() != 12 + query->question.size()) return "an answer of the wrong size";
  if (answer[0] != bytes[0] || answer[1] != bytes[1]) return "an answer with another id";
  if ((answer[2] & 0x80) == 0 || (answer[3] & 0x0f) != 3 || answer[4] != 0 || answer[5] != 1) {
    return "an answer that is not one question's NXDOMAIN";
  }
  for (int i = 6; i < 12; ++i) {
    if (answer[i] != 0) return "an answer with records";
  }
  if (!std::equal(query->question.begin(), query->question.end(), answer.begin() + 12)) {
    return "an answer whose question is not the query's";
  }
  // The answers of transparent capture: the same header with NOERROR, and
  // one A record of 16 bytes after the question, or none.
  std::vector<uint8_t> nodata = NoDataAnswer(*query);
  if (nodata.size() != answer.size() || (nodata[3] & 0x0f) != 0 || nodata[7] != 0) return "a malformed no-data answer";
  std::vector<uint8_t> address = AddressAnswer(*query, {127, 77, 0, 1});
  if (address.size() != answer.size() + 16 || (address[3] & 0x0f) != 0 || address[7] != 1 ||
      !std::equal(answer.begin() + 12, answer.end(), address.begin() + 12) || address[answer.size()] != 0xc0 ||
      address[answer.size() + 1] != 12) {
    return "a malformed address answer";
  }
  return std::nullopt;
}

}  // namespace corral::testing
