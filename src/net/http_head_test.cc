// ReadHttpHead on heads as proxy clients send them, on every smuggling and
// target case it refuses, on Host agreement and on partial input; and
// UpstreamHead's rewrite.
#include "net/http_head.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace corral {
namespace {

HttpHead Read(const std::string& text) {
  Result<ReadStep<HttpHead>> step = ReadHttpHead(text);
  EXPECT_TRUE(step.ok()) << text << "\n" << (step.ok() ? "" : step.error().message());
  if (!step.ok()) return {};
  EXPECT_FALSE(step->need_more()) << text;
  if (step->need_more()) return {};
  EXPECT_EQ(step->used(), text.size()) << text;
  return step->value();
}

// The message ReadHttpHead refuses `text` with ("" when it does not).
std::string Refusal(const std::string& text) {
  Result<ReadStep<HttpHead>> step = ReadHttpHead(text);
  return step.ok() ? "" : step.error().message();
}

TEST(HttpHead, AnAbsoluteFormGetIsRead) {
  HttpHead head = Read(
      "GET http://Example.COM/a/b?c=d HTTP/1.1\r\nHost: example.com\r\nUser-Agent:  curl/8 \t\r\n"
      "Accept:*/*\r\n\r\n");
  EXPECT_EQ(head.method, "GET");
  EXPECT_EQ(head.form, HttpTargetForm::kAbsolute);
  EXPECT_EQ(head.version, HttpVersion::k11);
  EXPECT_EQ(head.host, "example.com");
  EXPECT_EQ(head.port, 80);
  EXPECT_EQ(head.path, "/a/b?c=d");
  ASSERT_EQ(head.headers.size(), 3u);
  EXPECT_EQ(head.headers[1].name, "User-Agent");
  EXPECT_EQ(head.headers[1].value, "curl/8");
  EXPECT_EQ(head.headers[2].value, "*/*");
  EXPECT_EQ(head.body, HttpBody::kNone);
}

TEST(HttpHead, TargetForms) {
  HttpHead connect = Read("CONNECT registry.npmjs.org:443 HTTP/1.1\r\nHost: registry.npmjs.org:443\r\n\r\n");
  EXPECT_EQ(connect.form, HttpTargetForm::kAuthority);
  EXPECT_EQ(connect.host, "registry.npmjs.org");
  EXPECT_EQ(connect.port, 443);
  EXPECT_EQ(connect.path, "");
  HttpHead v6 = Read("CONNECT [2001:DB8::1]:8443 HTTP/1.1\r\nHost: [2001:db8::1]:8443\r\n\r\n");
  EXPECT_EQ(v6.host, "2001:db8::1");
  EXPECT_EQ(v6.port, 8443);
  HttpHead empty_path = Read("GET HTTP://example.com:8080 HTTP/1.0\r\n\r\n");
  EXPECT_EQ(empty_path.version, HttpVersion::k10);
  EXPECT_EQ(empty_path.port, 8080);
  EXPECT_EQ(empty_path.path, "/");
  EXPECT_EQ(Read("GET http://example.com?q HTTP/1.0\r\n\r\n").path, "/?q");
  EXPECT_EQ(Read("DELETE http://10.0.0.1/x HTTP/1.0\r\n\r\n").host, "10.0.0.1");
}

TEST(HttpHead, RefusedTargets) {
  struct Case {
    std::string request_line;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"GET /index.html HTTP/1.1", "the proxy needs an absolute URL"},
      {"OPTIONS * HTTP/1.1", "asterisk-form"},
      {"GET https://example.com/ HTTP/1.1", "https:// URL"},
      {"GET HTTPS://example.com/ HTTP/1.1", "https:// URL"},
      {"GET ftp://example.com/ HTTP/1.1", "not an http:// URL"},
      {"GET http://user:pw@example.com/ HTTP/1.1", "userinfo"},
      {"GET http://example.com/#top HTTP/1.1", "fragment"},
      {"GET http:///x HTTP/1.1", "empty host"},
      {"GET http://example.com:0/ HTTP/1.1", "port outside"},
      {"GET http://example.com:65536/ HTTP/1.1", "port outside"},
      {"GET http://example.com:+80/ HTTP/1.1", "port with a byte"},
      {"GET http://example.com:080080/ HTTP/1.1", "1 to 5 digits"},
      {"GET http://example.com:/ HTTP/1.1", "1 to 5 digits"},
      {"GET http://exa_mple%2e.com/ HTTP/1.1", "byte other than"},
      {"GET http://[::1/ HTTP/1.1", "without its ']'"},
      {"GET http://[fe80::1%25eth0]/ HTTP/1.1", "IPv6"},
      {"GET http://127.1/ HTTP/1.1", "IPv4"},
      {"GET example.com:443 HTTP/1.1", "not an http:// URL"},
      {"CONNECT example.com HTTP/1.1", "without a port"},
      {"CONNECT http://example.com:443 HTTP/1.1", "not host:port"},
      {"CONNECT /x HTTP/1.1", "not host:port"},
      {"CONNECT u@example.com:443 HTTP/1.1", "userinfo"},
      {"get http://example.com/ HTTP/1.1", "uppercase letters"},
      {"G3T http://example.com/ HTTP/1.1", "uppercase letters"},
      {"GET http://example.com/ HTTP/2.0", "version other than"},
      {"GET http://example.com/ http/1.1", "version other than"},
      {"GET  http://example.com/ HTTP/1.1", "single spaces"},
      {"GET http://example.com/  HTTP/1.1", "single spaces"},
      {"GET http://example.com/ HTTP/1.1 ", "single spaces"},
      {" GET http://example.com/ HTTP/1.1", "single spaces"},
      {"GET http://example.com/", "single spaces"},
      {"GET\thttp://example.com/ HTTP/1.1", "control"},
      {"GET http://example.com/\x7f HTTP/1.1", "control"},
      {"GET http://example.com/\xc3\xa9 HTTP/1.1", "non-ASCII"},
      {"", "empty request line"},
  };
  for (const Case& c : cases) {
    std::string message = Refusal(c.request_line + "\r\nHost: example.com\r\n\r\n");
    EXPECT_NE(message.find(c.why), std::string::npos) << c.request_line << " -> " << message;
    EXPECT_EQ(message.rfind("http request: ", 0), 0u) << message;
  }
}

TEST(HttpHead, SmugglingIsRefused) {
  const std::string line = "POST http://example.com/ HTTP/1.1\r\n";
  struct Case {
    std::string head;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"POST http://example.com/ HTTP/1.1\nHost: example.com\r\n\r\n", "bare LF"},
      {line + "Host: example.com\n\r\n", "bare LF"},
      {line + "Host: example.com\r\n\n", "bare LF"},
      {line + "Host: example.com\r\nX-A: 1\r\n continued\r\n\r\n", "obs-fold"},
      {line + "Host: example.com\r\nX-A: 1\r\n\tcontinued\r\n\r\n", "obs-fold"},
      {line + "Host: example.com\r\nContent-Length : 5\r\n\r\n", "between a header name and its colon"},
      {line + "Host: example.com\r\nContent-Length\t: 5\r\n\r\n", "between a header name and its colon"},
      {line + "Host: example.com\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "both"},
      {line + "Host: example.com\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", "both"},
      {line + "Host: example.com\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "differ"},
      {line + "Host: example.com\r\nContent-Length: 5\r\ncontent-length: 05\r\n\r\n", "differ"},
      {line + "Host: example.com\r\nTransfer-Encoding: gzip\r\n\r\n", "other than chunked"},
      {line + "Host: example.com\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "other than chunked"},
      {line + "Host: example.com\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", "other than chunked"},
      {line + "Host: example.com\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
       "more than once"},
      {line + "Host: example.com\r\nTransfer-Encoding: \"chunked\"\r\n\r\n", "other than chunked"},
      {"POST http://example.com/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", "HTTP/1.0"},
      {line + "Host: example.com\r\nContent-Length: -1\r\n\r\n", "not digits"},
      {line + "Host: example.com\r\nContent-Length: 1,1\r\n\r\n", "not digits"},
      {line + "Host: example.com\r\nContent-Length: 0x10\r\n\r\n", "not digits"},
      {line + "Host: example.com\r\nContent-Length:\r\n\r\n", "1 to 18 digits"},
      {line + "Host: example.com\r\nContent-Length: 1234567890123456789\r\n\r\n", "1 to 18 digits"},
      {line + "Host: example.com\r\nConnection: close, Content-Length\r\nContent-Length: 3\r\n\r\n",
       "Connection header naming"},
      {line + "Host: example.com\r\nConnection: host\r\n\r\n", "Connection header naming"},
      {line + "Host: example.com\r\nConnection: a/b\r\n\r\n", "not a token"},
      {line + "Host: example.com\r\nX\rY: 1\r\n\r\n", "not a token"},
      {line + "Host: example.com\r\nX-A: 1\rY\r\n\r\n", "control byte"},
      {line + "Host: example.com\r\nX-A: a" + std::string(1, '\0') + "b\r\n\r\n", "control byte"},
      {line + "Host: example.com\r\nX-A: a\x7f\r\n\r\n", "control byte"},
      {line + "Host: example.com\r\n: empty\r\n\r\n", "empty name"},
      {line + "Host: example.com\r\nno colon\r\n\r\n", "without a colon"},
      {line + "Host: example.com\r\nX(A): 1\r\n\r\n", "not a token"},
      {"\r\n" + line + "Host: example.com\r\n\r\n", "empty request line"},
  };
  for (const Case& c : cases) {
    std::string message = Refusal(c.head);
    EXPECT_NE(message.find(c.why), std::string::npos) << c.head << " -> " << message;
  }
}

TEST(HttpHead, BodiesAreRecorded) {
  const std::string line = "POST http://example.com/ HTTP/1.1\r\nHost: example.com\r\n";
  HttpHead length = Read(line + "Content-Length: 12\r\ncontent-length: 12\r\n\r\n");
  EXPECT_EQ(length.body, HttpBody::kContentLength);
  EXPECT_EQ(length.content_length, 12u);
  EXPECT_EQ(Read(line + "Content-Length: 0\r\n\r\n").body, HttpBody::kContentLength);
  EXPECT_EQ(Read(line + "Transfer-Encoding: Chunked\r\n\r\n").body, HttpBody::kChunked);
}

TEST(HttpHead, TheHostHeaderMustAgreeWithTheTarget) {
  auto head = [](const std::string& target, const std::string& host) {
    return "GET " + target + " HTTP/1.1\r\nHost: " + host + "\r\n\r\n";
  };
  for (const auto& [target, host] : std::vector<std::pair<std::string, std::string>>{
           {"http://example.com/", "example.com"},
           {"http://example.com/", "example.com:80"},
           {"http://example.com:80/", "example.com"},
           {"http://example.com:8080/", "example.com:8080"},
           {"http://EXAMPLE.com/", "example.COM"},
           {"http://example.com./", "example.com"},
           {"http://example.com/", "example.com.:80"},
           {"http://[::1]/", "[0:0::1]"},
           {"http://[2001:db8::1]:81/", "[2001:DB8::1]:81"},
       }) {
    EXPECT_EQ(Refusal(head(target, host)), "") << target << " " << host;
  }
  EXPECT_EQ(Refusal(head("http://example.com/", "example.com:8080")),
            "http request: the Host header names example.com:8080 but the target is example.com:80");
  EXPECT_EQ(Refusal(head("http://example.com:8080/", "example.com")),
            "http request: the Host header names example.com:80 but the target is example.com:8080");
  EXPECT_EQ(Refusal(head("http://example.com/", "evil.example")),
            "http request: the Host header names evil.example:80 but the target is example.com:80");
  EXPECT_EQ(Refusal(head("http://[::1]/", "[::2]")),
            "http request: the Host header names [::2]:80 but the target is [::1]:80");
  EXPECT_NE(Refusal(head("http://[::1]/", "::1")).find("not host[:port]"), std::string::npos);
  EXPECT_NE(Refusal(head("http://a.com/", "a.com:x")).find("not host[:port]"), std::string::npos);
  EXPECT_NE(Refusal(head("http://a.com/", "")).find("not host[:port]"), std::string::npos);
  // CONNECT: an omitted port is 443.
  EXPECT_EQ(Refusal("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com\r\n\r\n"), "");
  EXPECT_NE(Refusal("CONNECT example.com:8443 HTTP/1.1\r\nHost: example.com\r\n\r\n").find("example.com:443 but"),
            std::string::npos);
  // HTTP/1.1 needs exactly one; HTTP/1.0 at most one, and it must agree too.
  EXPECT_NE(Refusal("GET http://a.com/ HTTP/1.1\r\n\r\n").find("without a Host"), std::string::npos);
  EXPECT_NE(Refusal("GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\nhost: a.com\r\n\r\n").find("2 Host headers"),
            std::string::npos);
  EXPECT_NE(Refusal("GET http://a.com/ HTTP/1.0\r\nHost: a.com\r\nHost: a.com\r\n\r\n").find("2 Host headers"),
            std::string::npos);
  EXPECT_EQ(Refusal("GET http://a.com/ HTTP/1.0\r\n\r\n"), "");
  EXPECT_NE(Refusal("GET http://a.com/ HTTP/1.0\r\nHost: b.com\r\n\r\n").find("names b.com:80"), std::string::npos);
}

TEST(HttpHead, PartialInputNeedsMoreAtEverySplit) {
  const std::string whole =
      "POST http://example.com/upload HTTP/1.1\r\nHost: example.com\r\nContent-Length: 3\r\n\r\n";
  const std::string body = "abc";
  for (size_t split = 0; split < whole.size(); ++split) {
    Result<ReadStep<HttpHead>> step = ReadHttpHead(whole.substr(0, split));
    ASSERT_TRUE(step.ok()) << split << ": " << step.error().message();
    EXPECT_TRUE(step->need_more()) << split;
    EXPECT_EQ(step->used(), 0u);
  }
  Result<ReadStep<HttpHead>> step = ReadHttpHead(whole + body);
  ASSERT_TRUE(step.ok());
  ASSERT_FALSE(step->need_more());
  EXPECT_EQ(step->used(), whole.size());
  // A refusal comes as soon as the line that earns it is complete.
  const std::string bad = "GET /x HTTP/1.1\r\nHost: a\r\n\r\n";
  EXPECT_TRUE(ReadHttpHead(bad.substr(0, 16))->need_more());
  EXPECT_FALSE(ReadHttpHead(bad.substr(0, 17)).ok());
  // Not HTTP at all: refused at the first byte that cannot be a method's.
  Result<ReadStep<HttpHead>> tls = ReadHttpHead(std::string("\x16\x03\x01", 3));
  ASSERT_FALSE(tls.ok());
  EXPECT_EQ(tls.error().message(), "http request: a control or non-ASCII byte in the request line");
  Result<ReadStep<HttpHead>> lower = ReadHttpHead(std::string("get"));
  ASSERT_FALSE(lower.ok());
  EXPECT_EQ(lower.error().message(), "http request: a method that is not uppercase letters");
  EXPECT_TRUE(ReadHttpHead(std::string("GET"))->need_more());
}

TEST(HttpHead, TheHeadHasACap) {
  const std::string line = "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\n";
  std::string filler = "X-Filler: " + std::string(kHttpMaxHead, 'x');
  EXPECT_TRUE(ReadHttpHead((line + filler).substr(0, kHttpMaxHead))->need_more());
  EXPECT_NE(Refusal((line + filler).substr(0, kHttpMaxHead + 1)).find("longer than 16384"), std::string::npos);
  EXPECT_NE(Refusal(std::string(kHttpMaxHead + 1, 'G')).find("longer than 16384"), std::string::npos);
  // Exactly at the cap is read.
  std::string fitting = line + "X-Filler: ";
  fitting += std::string(kHttpMaxHead - fitting.size() - 4, 'x') + "\r\n\r\n";
  ASSERT_EQ(fitting.size(), kHttpMaxHead);
  EXPECT_EQ(Refusal(fitting), "");
  EXPECT_NE(Refusal(fitting.substr(0, fitting.size() - 4) + "x\r\n\r\n").find("longer than 16384"),
            std::string::npos);

  std::string many = line;
  for (size_t i = 1; i < kHttpMaxHeaderLines; ++i) many += "X-A: 1\r\n";
  EXPECT_EQ(Refusal(many + "\r\n"), "");
  EXPECT_NE(Refusal(many + "X-A: 1\r\n").find("more than 100 header lines"), std::string::npos);
}

TEST(HttpHead, BytesAfterTheHeadAreLeft) {
  const std::string head = "GET http://a.com/ HTTP/1.1\r\nHost: a.com\r\n\r\n";
  Result<ReadStep<HttpHead>> step = ReadHttpHead(head + "GET http://b.com/ HTTP/1.1\r\n");
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->used(), head.size());
  const std::vector<uint8_t> bytes(head.begin(), head.end());
  EXPECT_EQ(ReadHttpHead(std::span<const uint8_t>(bytes))->used(), head.size());
}

TEST(HttpHead, TheUpstreamHeadIsOriginFormWithoutHopByHopHeaders) {
  HttpHead head = Read(
      "GET http://example.com:8080/a?b HTTP/1.1\r\nHost: example.com:8080\r\nProxy-Authorization: Basic eA==\r\n"
      "Proxy-Connection: keep-alive\r\nConnection: keep-alive, X-Secret ,\r\nKeep-Alive: 5\r\nTE: trailers\r\n"
      "Trailer: X-T\r\nUpgrade: h2c\r\nx-secret: 1\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(UpstreamHead(head, HttpTargetForm::kOrigin),
            "GET /a?b HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(UpstreamHead(head, HttpTargetForm::kAbsolute),
            "GET http://example.com:8080/a?b HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\n\r\n");
  HttpHead old = Read("GET http://[::1]/ HTTP/1.0\r\nUser-Agent: x\r\n\r\n");
  EXPECT_EQ(UpstreamHead(old, HttpTargetForm::kOrigin), "GET / HTTP/1.0\r\nHost: [::1]:80\r\nUser-Agent: x\r\n\r\n");
  HttpHead connect = Read("CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:443\r\nProxy-Authorization: x\r\n\r\n");
  EXPECT_EQ(UpstreamHead(connect, HttpTargetForm::kOrigin), "CONNECT a.com:443 HTTP/1.1\r\nHost: a.com:443\r\n\r\n");
}

}  // namespace
}  // namespace corral
