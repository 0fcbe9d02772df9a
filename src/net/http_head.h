// The head of one HTTP/1.x request as corral's egress proxy receives it from
// a confined program, read strictly: whatever two readers could understand
// differently (request smuggling) is refused, and so is every target a
// forward proxy is not asked for.
//
// The head is the request line and the header lines, each ending in CRLF,
// then an empty line. The request line is `METHOD SP target SP HTTP/1.1` (or
// HTTP/1.0) with single spaces and a method of uppercase letters; the target
// is authority-form (`host:port`, CONNECT only, the port required) or
// absolute-form (`http://host[:port][/path][?query]` for every other
// method; no userinfo, port 80 by default, an empty path read as "/"). A
// header line is `name:value`: the name a token, no space before the colon,
// the value trimmed of spaces and tabs. Refused: a bare LF, a control byte
// (other than a tab in a value), a line starting with a space or tab
// (obs-fold), a head over kHttpMaxHead bytes or kHttpMaxHeaderLines header
// lines, a repeated Host header or a missing one in HTTP/1.1 (HTTP/1.0 may
// omit it), a Host that does not name the target's host and port (an
// omitted port there is the target's default: 80, or 443 for CONNECT), two
// Content-Length values that differ, Content-Length with Transfer-Encoding,
// a Transfer-Encoding other than one `chunked` (or any in HTTP/1.0), and a
// Connection header naming Host, Content-Length or Transfer-Encoding (the
// rewrite would drop them). The method's bytes are judged as they come (a
// TLS hello sent to the proxy's port is refused at its first byte, not
// after a line end that never comes); a line's own faults as soon as it is
// whole, in order; the rest once the whole head has come. A refusal's
// message starts "http request: " and fits a 400 reply.
//
//   Result<ReadStep<HttpHead>> step = ReadHttpHead(received);
//   if (!step.ok()) reply_400(step.error().message());
//   else if (!step->need_more()) {
//     const HttpHead& head = step->value();  // head.host, head.port, head.path
//     send_upstream(UpstreamHead(head, HttpTargetForm::kOrigin));
//     // then the body after step->used() bytes, as head.body says
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "net/read_step.h"

namespace corral {

inline constexpr size_t kHttpMaxHead = 16 * 1024;
inline constexpr size_t kHttpMaxHeaderLines = 100;

enum class HttpVersion { k10, k11 };

// How the request line named its target; kOrigin is only for UpstreamHead.
enum class HttpTargetForm { kAuthority, kAbsolute, kOrigin };

// What follows the head, as its headers say.
enum class HttpBody { kNone, kContentLength, kChunked };

struct HttpHeader {
  std::string name;   // as sent
  std::string value;  // trimmed of spaces and tabs
};

struct HttpHead {
  std::string method;
  HttpTargetForm form = HttpTargetForm::kAbsolute;
  HttpVersion version = HttpVersion::k11;
  std::string host;  // normal form (net/host_port.h): lowercased, no brackets, no trailing dot
  uint16_t port = 0;
  // The origin-form target to send upstream ("/path?query"); empty for CONNECT.
  std::string path;
  std::vector<HttpHeader> headers;  // in order, Host included
  HttpBody body = HttpBody::kNone;
  uint64_t content_length = 0;  // when body is kContentLength
};

// NeedMore until `received` holds a whole head; then the head and its
// length (the request line through the empty line).
Result<ReadStep<HttpHead>> ReadHttpHead(std::span<const uint8_t> received);
Result<ReadStep<HttpHead>> ReadHttpHead(std::string_view received);

// The head to send on: the request line with the target in `form` (kOrigin
// for the upstream server, kAbsolute for another proxy; a CONNECT head keeps
// its authority), the headers in order without the hop-by-hop ones
// (Connection and those it names, Proxy-Connection, Proxy-Authorization,
// Keep-Alive, TE, Trailer, Upgrade), a Host header added to an HTTP/1.0 head
// that had none, and the empty line.
std::string UpstreamHead(const HttpHead& head, HttpTargetForm form);

}  // namespace corral
