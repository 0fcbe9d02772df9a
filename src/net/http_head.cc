#include "net/http_head.h"

#include "net/host_port.h"

namespace corral {
namespace {

constexpr uint16_t kHttpPort = 80;
constexpr uint16_t kConnectDefaultPort = 443;
constexpr size_t kMaxContentLengthDigits = 18;

Error Refused(const std::string& why) { return Error(ErrorKind::kUsage, "http request: " + why); }

bool Digit(char c) { return c >= '0' && c <= '9'; }
bool Letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool Blank(char c) { return c == ' ' || c == '\t'; }

bool TokenByte(char c) {
  static constexpr std::string_view kSymbols = "!#$%&'*+-.^_`|~";
  return Letter(c) || Digit(c) || kSymbols.find(c) != std::string_view::npos;
}

char LowerByte(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string Lower(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = LowerByte(c);
  return lower;
}

bool SameIgnoringCase(std::string_view a, std::string_view b) { return a.size() == b.size() && Lower(a) == Lower(b); }

bool StartsIgnoringCase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && SameIgnoringCase(text.substr(0, prefix.size()), prefix);
}

std::string_view Trimmed(std::string_view text) {
  while (!text.empty() && Blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && Blank(text.back())) text.remove_suffix(1);
  return text;
}

// The elements of a comma-separated header value, trimmed, empty ones skipped.
std::vector<std::string_view> ListElements(std::string_view value) {
  std::vector<std::string_view> elements;
  while (true) {
    size_t comma = value.find(',');
    std::string_view element = Trimmed(value.substr(0, comma));
    if (!element.empty()) elements.push_back(element);
    if (comma == std::string_view::npos) return elements;
    value.remove_prefix(comma + 1);
  }
}

Status ReadTarget(std::string_view target, HttpHead& head) {
  if (head.method == "CONNECT") {
    head.form = HttpTargetForm::kAuthority;
    Result<HostPort> place = ParseAuthority(target);
    if (!place.ok()) return Refused("a CONNECT target that is not host:port: " + place.error().message());
    if (!place->port) return Refused("a CONNECT target without a port");
    head.host = std::move(place->host);
    head.port = *place->port;
    return Ok();
  }
  head.form = HttpTargetForm::kAbsolute;
  if (target == "*") return Refused("an asterisk-form target (*): the proxy needs an absolute URL (http://host/path)");
  if (target.front() == '/') return Refused("an origin-form target: the proxy needs an absolute URL (http://host/path)");
  if (StartsIgnoringCase(target, "https://")) return Refused("an https:// URL: tunnel https with CONNECT host:443");
  if (!StartsIgnoringCase(target, "http://")) return Refused("a target that is not an http:// URL");
  if (target.find('#') != std::string_view::npos) return Refused("a target with a fragment ('#')");
  std::string_view rest = target.substr(7);
  size_t path_start = rest.find_first_of("/?");
  Result<HostPort> place = ParseAuthority(rest.substr(0, path_start));
  if (!place.ok()) return Refused("the target URL's host: " + place.error().message());
  head.host = std::move(place->host);
  head.port = place->port.value_or(kHttpPort);
  std::string_view path = path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
  head.path = path.empty() || path.front() == '?' ? "/" + std::string(path) : std::string(path);
  return Ok();
}

Status ReadRequestLine(std::string_view line, HttpHead& head) {
  if (line.empty()) return Refused("an empty request line");
  for (char c : line) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e) return Refused("a control or non-ASCII byte in the request line");
  }
  size_t first = line.find(' ');
  size_t second = first == std::string_view::npos ? first : line.find(' ', first + 1);
  if (second == std::string_view::npos || line.find(' ', second + 1) != std::string_view::npos || first == 0 ||
      second == first + 1 || second + 1 == line.size()) {
    return Refused("a request line that is not METHOD, target and version with single spaces");
  }
  head.method = std::string(line.substr(0, first));
  for (char c : head.method) {
    if (c < 'A' || c > 'Z') return Refused("a method that is not uppercase letters");
  }
  std::string_view version = line.substr(second + 1);
  if (version == "HTTP/1.1") {
    head.version = HttpVersion::k11;
  } else if (version == "HTTP/1.0") {
    head.version = HttpVersion::k10;
  } else {
    return Refused("a version other than HTTP/1.1 or HTTP/1.0");
  }
  return ReadTarget(line.substr(first + 1, second - first - 1), head);
}

Result<HttpHeader> ReadHeaderLine(std::string_view line) {
  if (Blank(line.front())) return Refused("a header line starting with a space or tab (obs-fold)");
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return Refused("a header line without a colon");
  std::string_view name = line.substr(0, colon);
  if (name.empty()) return Refused("a header line with an empty name");
  if (Blank(name.back())) return Refused("whitespace between a header name and its colon");
  for (char c : name) {
    if (!TokenByte(c)) return Refused("a header name that is not a token");
  }
  std::string_view value = Trimmed(line.substr(colon + 1));
  for (char c : value) {
    auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t') || byte == 0x7f) return Refused("a control byte in a header value");
  }
  return HttpHeader{std::string(name), std::string(value)};
}

Status CheckHost(const HttpHead& head) {
  const HttpHeader* host = nullptr;
  size_t hosts = 0;
  for (const HttpHeader& header : head.headers) {
    if (SameIgnoringCase(header.name, "Host")) {
      host = &header;
      ++hosts;
    }
  }
  if (hosts > 1) return Refused(std::to_string(hosts) + " Host headers");
  if (hosts == 0) {
    if (head.version == HttpVersion::k11) return Refused("an HTTP/1.1 request without a Host header");
    return Ok();
  }
  Result<HostPort> place = ParseAuthority(host->value);
  if (!place.ok()) return Refused("a Host header that is not host[:port]: " + place.error().message());
  uint16_t default_port = head.form == HttpTargetForm::kAuthority ? kConnectDefaultPort : kHttpPort;
  uint16_t port = place->port.value_or(default_port);
  if (place->host != head.host || port != head.port) {
    return Refused("the Host header names " + AuthorityText(place->host, port) + " but the target is " +
                   AuthorityText(head.host, head.port));
  }
  return Ok();
}

Status CheckConnectionOptions(const HttpHead& head) {
  for (const HttpHeader& header : head.headers) {
    if (!SameIgnoringCase(header.name, "Connection")) continue;
    for (std::string_view option : ListElements(header.value)) {
      for (char c : option) {
        if (!TokenByte(c)) return Refused("a Connection option that is not a token");
      }
      if (SameIgnoringCase(option, "Host") || SameIgnoringCase(option, "Content-Length") ||
          SameIgnoringCase(option, "Transfer-Encoding")) {
        return Refused("a Connection header naming Host, Content-Length or Transfer-Encoding");
      }
    }
  }
  return Ok();
}

Status CheckBody(HttpHead& head) {
  const std::string* length = nullptr;
  size_t encodings = 0;
  for (const HttpHeader& header : head.headers) {
    if (SameIgnoringCase(header.name, "Content-Length")) {
      if (length != nullptr && *length != header.value) return Refused("two Content-Length headers that differ");
      length = &header.value;
    } else if (SameIgnoringCase(header.name, "Transfer-Encoding")) {
      if (!SameIgnoringCase(header.value, "chunked")) return Refused("a Transfer-Encoding other than chunked");
      if (++encodings > 1) return Refused("Transfer-Encoding sent more than once");
    }
  }
  if (length != nullptr && encodings > 0) return Refused("both Content-Length and Transfer-Encoding");
  if (encodings > 0) {
    if (head.version == HttpVersion::k10) return Refused("Transfer-Encoding in an HTTP/1.0 request");
    head.body = HttpBody::kChunked;
    return Ok();
  }
  if (length == nullptr) return Ok();
  if (length->empty() || length->size() > kMaxContentLengthDigits) {
    return Refused("a Content-Length of other than 1 to 18 digits");
  }
  uint64_t value = 0;
  for (char c : *length) {
    if (!Digit(c)) return Refused("a Content-Length that is not digits");
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  head.body = HttpBody::kContentLength;
  head.content_length = value;
  return Ok();
}

bool HopByHop(std::string_view name, const std::vector<std::string>& named_by_connection) {
  static constexpr std::string_view kHopByHop[] = {"connection", "proxy-connection", "proxy-authorization",
                                                   "keep-alive", "te",               "trailer",
                                                   "upgrade"};
  std::string lower = Lower(name);
  for (std::string_view hop : kHopByHop) {
    if (lower == hop) return true;
  }
  for (const std::string& named : named_by_connection) {
    if (lower == named) return true;
  }
  return false;
}

}  // namespace

namespace {

// The method's bytes are checked as they come, before the line is whole:
// something that is not HTTP (a TLS hello sent to the proxy's port) is
// refused at once instead of waiting for a line end that never comes. The
// same bytes give the same refusal however the input was split.
Status CheckMethodSoFar(std::string_view received) {
  for (char c : received) {
    if (c == ' ' || c == '\r' || c == '\n') break;
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte > 0x7e) return Refused("a control or non-ASCII byte in the request line");
    if (c < 'A' || c > 'Z') return Refused("a method that is not uppercase letters");
  }
  return Ok();
}

}  // namespace

Result<ReadStep<HttpHead>> ReadHttpHead(std::string_view received) {
  CORRAL_TRY(CheckMethodSoFar(received));
  HttpHead head;
  size_t at = 0;
  size_t header_lines = 0;
  bool request_line_read = false;
  while (true) {
    size_t newline = received.find('\n', at);
    if (newline == std::string_view::npos ? received.size() > kHttpMaxHead : newline + 1 > kHttpMaxHead) {
      return Refused("a head longer than 16384 bytes");
    }
    if (newline == std::string_view::npos) return ReadStep<HttpHead>::NeedMore();
    if (newline == at || received[newline - 1] != '\r') return Refused("a line ending in a bare LF, not CRLF");
    std::string_view line = received.substr(at, newline - 1 - at);
    at = newline + 1;
    if (!request_line_read) {
      CORRAL_TRY(ReadRequestLine(line, head));
      request_line_read = true;
      continue;
    }
    if (line.empty()) break;
    if (++header_lines > kHttpMaxHeaderLines) return Refused("more than 100 header lines");
    CORRAL_ASSIGN_OR_RETURN(HttpHeader header, ReadHeaderLine(line));
    head.headers.push_back(std::move(header));
  }
  CORRAL_TRY(CheckHost(head));
  CORRAL_TRY(CheckConnectionOptions(head));
  CORRAL_TRY(CheckBody(head));
  return ReadStep<HttpHead>(std::move(head), at);
}

Result<ReadStep<HttpHead>> ReadHttpHead(std::span<const uint8_t> received) {
  return ReadHttpHead(std::string_view(reinterpret_cast<const char*>(received.data()), received.size()));
}

std::string UpstreamHead(const HttpHead& head, HttpTargetForm form) {
  std::vector<std::string> named_by_connection;
  bool has_host = false;
  for (const HttpHeader& header : head.headers) {
    has_host = has_host || SameIgnoringCase(header.name, "Host");
    if (!SameIgnoringCase(header.name, "Connection")) continue;
    for (std::string_view option : ListElements(header.value)) named_by_connection.push_back(Lower(option));
  }
  std::string authority = AuthorityText(head.host, head.port);
  std::string target;
  if (head.form == HttpTargetForm::kAuthority) {
    target = authority;
  } else if (form == HttpTargetForm::kOrigin) {
    target = head.path;
  } else {
    target = "http://" + authority + head.path;
  }
  std::string text = head.method + " " + target + (head.version == HttpVersion::k11 ? " HTTP/1.1" : " HTTP/1.0");
  text += "\r\n";
  if (!has_host) text += "Host: " + authority + "\r\n";
  for (const HttpHeader& header : head.headers) {
    if (HopByHop(header.name, named_by_connection)) continue;
    text += header.name + ": " + header.value + "\r\n";
  }
  text += "\r\n";
  return text;
}

}  // namespace corral
