#include "net/dns_message.h"

#include <array>

#include <algorithm>

namespace corral {
namespace {

constexpr size_t kHeader = 12;
constexpr size_t kMaxName = 255;
constexpr size_t kMaxLabel = 63;

uint16_t Read16(std::span<const uint8_t> bytes, size_t at) {
  return static_cast<uint16_t>(bytes[at] << 8 | bytes[at + 1]);
}

Error Refused(const std::string& why) { return Error(ErrorKind::kUsage, "dns query: " + why); }

bool Plain(uint8_t byte) {
  return (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z') || (byte >= '0' && byte <= '9') ||
         byte == '-' || byte == '_';
}

void AppendEscaped(std::string& out, uint8_t byte) {
  if (Plain(byte)) {
    out.push_back(static_cast<char>(byte));
    return;
  }
  out.push_back('\\');
  out.push_back(static_cast<char>('0' + byte / 100));
  out.push_back(static_cast<char>('0' + byte / 10 % 10));
  out.push_back(static_cast<char>('0' + byte % 10));
}

}  // namespace

Result<DnsQuery> ParseDnsQuery(std::span<const uint8_t> message) {
  if (message.size() > kDnsMaxMessage) return Refused("longer than 65535 bytes");
  if (message.size() < kHeader) return Refused("shorter than its 12-byte header");
  DnsQuery query;
  query.id = Read16(message, 0);
  uint16_t flags = Read16(message, 2);
  if (flags & 0x8000) return Refused("a response, not a query");
  if ((flags >> 11 & 0xf) != 0) return Refused("opcode " + std::to_string(flags >> 11 & 0xf) + ", not QUERY");
  query.recursion_desired = (flags & 0x0100) != 0;
  if (Read16(message, 4) != 1) return Refused(std::to_string(Read16(message, 4)) + " questions, not 1");
  if (Read16(message, 6) != 0 || Read16(message, 8) != 0) return Refused("answer or authority records in a query");
  if (Read16(message, 10) > 1) return Refused("more than one additional record");

  size_t at = kHeader;
  size_t name_length = 0;
  for (;;) {
    if (at >= message.size()) return Refused("the name runs past the end");
    uint8_t label = message[at];
    if (label == 0) break;
    if (label > kMaxLabel) return Refused("a compression pointer or extended label in the question");
    if (at + 1 + label > message.size()) return Refused("the name runs past the end");
    name_length += 1 + label;
    if (name_length + 1 > kMaxName) return Refused("a name longer than 255 bytes");
    if (!query.name.empty()) query.name.push_back('.');
    for (size_t i = 0; i < label; ++i) AppendEscaped(query.name, message[at + 1 + i]);
    at += 1 + label;
  }
  if (query.name.empty()) query.name = ".";
  at += 1;
  if (at + 4 > message.size()) return Refused("the question has no type and class");
  query.type = Read16(message, at);
  query.klass = Read16(message, at + 2);
  at += 4;
  query.question.assign(message.begin() + kHeader, message.begin() + static_cast<std::ptrdiff_t>(at));
  if (Read16(message, 10) == 0 && at != message.size()) return Refused("bytes after the question");
  return query;
}

namespace {

// The header and the question echoed, with `rcode`.
std::vector<uint8_t> AnswerHead(const DnsQuery& query, uint8_t rcode) {
  std::vector<uint8_t> answer(kHeader + query.question.size());
  answer[0] = static_cast<uint8_t>(query.id >> 8);
  answer[1] = static_cast<uint8_t>(query.id);
  answer[2] = static_cast<uint8_t>(0x80 | (query.recursion_desired ? 0x01 : 0x00));  // QR, RD
  answer[3] = static_cast<uint8_t>(0x80 | rcode);                                    // RA, the code
  answer[5] = 1;                                                                     // one question
  std::copy(query.question.begin(), query.question.end(), answer.begin() + kHeader);
  return answer;
}

}  // namespace

std::vector<uint8_t> NxdomainAnswer(const DnsQuery& query) { return AnswerHead(query, 0x03); }

std::vector<uint8_t> NoDataAnswer(const DnsQuery& query) { return AnswerHead(query, 0x00); }

std::vector<uint8_t> AddressAnswer(const DnsQuery& query, const std::array<uint8_t, 4>& address) {
  std::vector<uint8_t> answer = AnswerHead(query, 0x00);
  answer[7] = 1;  // one answer
  const uint8_t record[] = {
      0xc0, kHeader,            // the name: a pointer to the question's
      0x00, 0x01, 0x00, 0x01,   // type A, class IN
      0x00, 0x00, 0x00, 0x3c,   // TTL 60 s
      0x00, 0x04,               // four bytes of data
      address[0], address[1], address[2], address[3],
  };
  answer.insert(answer.end(), std::begin(record), std::end(record));
  return answer;
}

}  // namespace corral
