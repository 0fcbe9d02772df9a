// The property the HTTP request head reader (http_head.h) must hold on any
// bytes, shared by the libFuzzer harness (http_head_fuzz.cc) and its
// deterministic smoke test:
//   - it never crashes or reads out of bounds (sanitizers judge that);
//   - a refusal's message starts "http request: " and is printable ASCII;
//   - an accepted head used no more bytes than given, at most kHttpMaxHead,
//     and they end in the empty line; its host is in normal form and its
//     path starts with '/' (empty only for CONNECT);
//   - the head as UpstreamHead writes it with the absolute target reads
//     again, whole, to the same method, version, host, port, path and body;
//   - the bytes fed in two pieces split at `split` give the same answer as
//     whole: when the first piece alone is refused or read, the whole is
//     refused with the same message or read to the same head.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "net/host_port.h"
#include "net/http_head.h"
#include "net/read_step_fuzz_check.h"

namespace corral::testing {

inline bool HttpTextPrintable(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) > 0x7e) return false;
  }
  return true;
}

inline bool SameHttpHead(const HttpHead& a, const HttpHead& b) {
  if (a.headers.size() != b.headers.size()) return false;
  for (size_t i = 0; i < a.headers.size(); ++i) {
    if (a.headers[i].name != b.headers[i].name || a.headers[i].value != b.headers[i].value) return false;
  }
  return a.method == b.method && a.form == b.form && a.version == b.version && a.host == b.host &&
         a.port == b.port && a.path == b.path && a.body == b.body && a.content_length == b.content_length;
}

inline std::optional<std::string> CheckAcceptedHttpHead(std::string_view text, const ReadStep<HttpHead>& step) {
  const HttpHead& head = step.value();
  if (step.used() > text.size() || step.used() > kHttpMaxHead || step.used() < 4) {
    return "used " + std::to_string(step.used()) + " of " + std::to_string(text.size()) + " bytes";
  }
  if (text.substr(step.used() - 4, 4) != "\r\n\r\n") return "a head that does not end in the empty line";
  Result<std::string> host = head.host.find(':') == std::string::npos ? NormalHostName(head.host)
                                                                       : NormalIpv6(head.host);
  if (!host.ok() || *host != head.host) return "a host not in normal form";
  if (head.port == 0) return "port 0";
  bool connect = head.form == HttpTargetForm::kAuthority;
  if (connect != (head.method == "CONNECT") || connect != head.path.empty() ||
      (!connect && head.path.front() != '/')) {
    return "a path or form that does not fit the method";
  }
  std::string upstream = UpstreamHead(head, HttpTargetForm::kAbsolute);
  Result<ReadStep<HttpHead>> again = ReadHttpHead(upstream);
  if (!again.ok()) {
    const std::string& message = again.error().message();
    // Only a head at its cap may grow past it (an explicit port, an added Host).
    if (message.find("longer than 16384") != std::string::npos ||
        message.find("more than 100 header lines") != std::string::npos) {
      return std::nullopt;
    }
    return "the upstream head is refused: " + message;
  }
  if (again->need_more() || again->used() != upstream.size()) return "the upstream head is not read whole";
  const HttpHead& read = again->value();
  if (read.method != head.method || read.version != head.version || read.host != head.host ||
      read.port != head.port || read.path != head.path || read.body != head.body ||
      read.content_length != head.content_length) {
    return "the upstream head reads to another request";
  }
  return std::nullopt;
}

inline std::optional<std::string> CheckHttpHeadReader(std::span<const uint8_t> bytes, size_t split) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  Result<ReadStep<HttpHead>> step = ReadHttpHead(text);
  if (!step.ok()) {
    const std::string& message = step.error().message();
    if (message.rfind("http request: ", 0) != 0) return "a refusal not naming the reader: " + message;
    if (!HttpTextPrintable(message)) return "a refusal message that is not printable ASCII";
  } else if (!step->need_more()) {
    if (std::optional<std::string> broken = CheckAcceptedHttpHead(text, *step)) return broken;
  } else if (text.size() > kHttpMaxHead) {
    return "more needed after " + std::to_string(text.size()) + " bytes";
  }
  return CheckSplitAgrees(ReadHttpHead(text.substr(0, std::min(split, text.size()))), step, split, SameHttpHead);
}

}  // namespace corral::testing
