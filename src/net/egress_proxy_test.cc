// EgressProxy on real loopback sockets of the test's own network namespace:
// listeners on ephemeral ports stand in for the ones the sandbox's init
// passes out, a fake gate allows named places, the static names table maps
// test names to a destination server run here, and every negative case is
// judged at that server: it saw no connection.
#include "net/egress_proxy.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace corral {
namespace {

class FakeGate : public EgressGate {
 public:
  std::set<std::pair<std::string, uint16_t>> allowed;
  std::set<std::string> refused_addresses;

  EgressRuling Decide(const std::string& host, uint16_t port) const override {
    if (allowed.count({host, port})) return {EgressVerdict::kAllowed, "--allow-host " + host};
    return {EgressVerdict::kDenied, "not in --allow-host"};
  }
  Result<void> CheckAddress(const Address& address) const override {
    if (refused_addresses.count(address.ToString())) {
      return Error(ErrorKind::kDenied, address.ToString() + " is the loopback address");
    }
    return {};
  }
};

UniqueFd Listener(uint16_t* port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  EXPECT_EQ(::listen(fd.get(), 64), 0);
  socklen_t length = sizeof address;
  EXPECT_EQ(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  *port = ntohs(address.sin_port);
  return fd;
}

UniqueFd Connect(uint16_t port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  struct sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(port);
  EXPECT_EQ(::connect(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  return fd;
}

void SendAll(int fd, const std::string& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
}

// A CONNECT head for `authority`, then `after`.
std::string ConnectHead(const std::string& authority, const std::string& after = "") {
  return "CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n" + after;
}

// Reads until `until` is seen, end of input, or two seconds without a byte.
std::string ReadUntil(int fd, const std::string& until = "") {
  std::string got;
  for (;;) {
    if (!until.empty() && got.find(until) != std::string::npos) return got;
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 2000) != 1) return got;
    char buffer[65536];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return got;
    got.append(buffer, static_cast<size_t>(n));
  }
}

// True when the peer closes within two seconds, sending nothing.
bool ClosedWithNothing(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  if (::poll(&p, 1, 2000) != 1) return false;
  char byte;
  return ::recv(fd, &byte, 1, 0) <= 0;
}

// The destination: each connection gets `greeting`, then its bytes are
// echoed back until it closes; what it received is kept.
class Destination {
 public:
  explicit Destination(std::string greeting) : greeting_(std::move(greeting)) {
    listener_ = Listener(&port_);
    thread_ = std::thread([this] { Serve(); });
  }
  ~Destination() {
    ::shutdown(listener_.get(), SHUT_RDWR);
    thread_.join();
  }
  uint16_t port() const { return port_; }
  int connections() const { return connections_; }
  std::string received() {
    std::lock_guard<std::mutex> lock(mutex_);
    return received_;
  }

 private:
  void Serve() {
    for (;;) {
      UniqueFd client(::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC));
      if (!client) return;
      ++connections_;
      if (!greeting_.empty()) ::send(client.get(), greeting_.data(), greeting_.size(), MSG_NOSIGNAL);
      for (;;) {
        struct pollfd p = {client.get(), POLLIN, 0};
        if (::poll(&p, 1, 10000) != 1) break;
        char buffer[65536];
        ssize_t n = ::recv(client.get(), buffer, sizeof buffer, 0);
        if (n <= 0) break;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          received_.append(buffer, static_cast<size_t>(n));
        }
        if (greeting_.empty()) ::send(client.get(), buffer, static_cast<size_t>(n), MSG_NOSIGNAL);
        if (!greeting_.empty()) break;  // an HTTP server: one answer, then close
      }
    }
  }

  std::string greeting_;
  UniqueFd listener_;
  uint16_t port_ = 0;
  std::atomic<int> connections_ = 0;
  std::mutex mutex_;
  std::string received_;
  std::thread thread_;
};

class EgressProxyTest : public ::testing::Test {
 protected:
  void StartProxy(Destination& destination, EgressOptions options = {}) {
    gate_ = std::make_shared<FakeGate>();
    gate_->allowed = {{"allowed.test", destination.port()}, {"inside.test", destination.port()}};
    gate_->refused_addresses = {"127.0.0.2"};
    options.names["allowed.test"] = {*ParseAddress("127.0.0.1")};
    options.names["inside.test"] = {*ParseAddress("127.0.0.2")};
    options.on_decision = [this](const EgressDecision& decision) {
      std::lock_guard<std::mutex> lock(mutex_);
      decisions_.push_back(decision);
    };
    EgressListeners listeners;
    listeners.http = Listener(&http_port_);
    listeners.socks = Listener(&socks_port_);
    Result<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(listeners), gate_, std::move(options));
    ASSERT_TRUE(proxy.ok()) << proxy.error().ToString();
    proxy_ = std::move(*proxy);
  }

  std::vector<EgressDecision> StopAndDecisions() {
    proxy_->Stop();
    std::lock_guard<std::mutex> lock(mutex_);
    return decisions_;
  }

  std::shared_ptr<FakeGate> gate_;
  uint16_t http_port_ = 0;
  uint16_t socks_port_ = 0;
  std::unique_ptr<EgressProxy> proxy_;
  std::mutex mutex_;
  std::vector<EgressDecision> decisions_;
};

TEST_F(EgressProxyTest, AConnectTunnelToAnAllowedPlaceCarriesBytesBothWays) {
  Destination echo("");
  StartProxy(echo);
  UniqueFd client = Connect(http_port_);
  std::string authority = "allowed.test:" + std::to_string(echo.port());
  SendAll(client.get(), ConnectHead(authority, "early"));
  EXPECT_EQ(ReadUntil(client.get(), "\r\n\r\nearly"), "HTTP/1.1 200 Connection established\r\n\r\nearly");
  SendAll(client.get(), "ping");
  EXPECT_EQ(ReadUntil(client.get(), "ping"), "ping");
  client.Reset();
  std::vector<EgressDecision> decisions = StopAndDecisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].protocol, EgressProtocol::kHttpConnect);
  EXPECT_EQ(decisions[0].verdict, EgressVerdict::kAllowed);
  EXPECT_EQ(decisions[0].host, "allowed.test");
  EXPECT_EQ(decisions[0].address, "127.0.0.1");
  EXPECT_EQ(decisions[0].bytes_sent, 9u);
  EXPECT_EQ(decisions[0].bytes_received, 9u);
  EXPECT_EQ(echo.received(), "earlyping");
}

TEST_F(EgressProxyTest, APlaceNotAllowedGets403AndTheDestinationSeesNothing) {
  Destination echo("");
  StartProxy(echo);
  for (std::string authority : {"denied.test:" + std::to_string(echo.port()), std::string("allowed.test:1"),
                                "127.0.0.1:" + std::to_string(echo.port())}) {
    UniqueFd client = Connect(http_port_);
    SendAll(client.get(), ConnectHead(authority));
    std::string reply = ReadUntil(client.get());
    EXPECT_EQ(reply.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << reply;
    EXPECT_NE(reply.find("corral: blocked connection to " + authority + ": not in --allow-host\n"), std::string::npos)
        << reply;
  }
  std::vector<EgressDecision> decisions = StopAndDecisions();
  EXPECT_EQ(decisions.size(), 3u);
  for (const EgressDecision& decision : decisions) EXPECT_EQ(decision.verdict, EgressVerdict::kDenied);
  EXPECT_EQ(echo.connections(), 0);
}

TEST_F(EgressProxyTest, AnAllowedNameThatLeadsToARefusedAddressIsRefused) {
  Destination echo("");
  StartProxy(echo);
  UniqueFd client = Connect(http_port_);
  std::string authority = "inside.test:" + std::to_string(echo.port());
  SendAll(client.get(), ConnectHead(authority));
  std::string reply = ReadUntil(client.get());
  EXPECT_NE(reply.find("403 Forbidden"), std::string::npos) << reply;
  EXPECT_NE(reply.find("127.0.0.2 is the loopback address"), std::string::npos) << reply;
  StopAndDecisions();
  EXPECT_EQ(echo.connections(), 0);
}

TEST_F(EgressProxyTest, APlainRequestIsForwardedInOriginFormAndClosed) {
  Destination server("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  StartProxy(server);
  UniqueFd client = Connect(http_port_);
  std::string authority = "allowed.test:" + std::to_string(server.port());
  SendAll(client.get(), "POST http://" + authority + "/upload?x=1 HTTP/1.1\r\nHost: " + authority +
                            "\r\nProxy-Authorization: Basic c2VjcmV0\r\nContent-Length: 4\r\n\r\nbody");
  EXPECT_EQ(ReadUntil(client.get()), "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi");
  std::vector<EgressDecision> decisions = StopAndDecisions();
  std::string sent = server.received();
  EXPECT_EQ(sent.rfind("POST /upload?x=1 HTTP/1.1\r\n", 0), 0u) << sent;
  EXPECT_EQ(sent.find("Proxy-Authorization"), std::string::npos) << sent;
  EXPECT_NE(sent.find("Connection: close\r\n"), std::string::npos) << sent;
  EXPECT_EQ(sent.substr(sent.size() - 8), "\r\n\r\nbody") << sent;
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].protocol, EgressProtocol::kHttpForward);
}

TEST_F(EgressProxyTest, AHostHeaderThatDisagreesWithTheTargetIsRefusedAndNothingIsSent) {
  Destination server("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
  StartProxy(server);
  UniqueFd client = Connect(http_port_);
  std::string authority = "allowed.test:" + std::to_string(server.port());
  SendAll(client.get(), "GET http://" + authority + "/ HTTP/1.1\r\nHost: denied.test\r\n\r\n");
  std::string reply = ReadUntil(client.get());
  EXPECT_EQ(reply.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << reply;
  StopAndDecisions();
  EXPECT_EQ(server.connections(), 0);
}

TEST_F(EgressProxyTest, Socks5WithARemoteNameReachesAnAllowedPlaceAndIsRefusedOtherwise) {
  Destination echo("");
  StartProxy(echo);
  auto request = [&](const std::string& name) {
    std::string bytes = {5, 1, 0, 5, 1, 0, 3, static_cast<char>(name.size())};
    bytes += name;
    bytes.push_back(static_cast<char>(echo.port() >> 8));
    bytes.push_back(static_cast<char>(echo.port() & 0xff));
    return bytes;
  };
  UniqueFd allowed = Connect(socks_port_);
  SendAll(allowed.get(), request("allowed.test") + "ping");
  std::string reply = ReadUntil(allowed.get(), "ping");
  ASSERT_EQ(reply.size(), 2u + 10u + 4u) << reply.size();
  EXPECT_EQ(reply[1], 0);  // no authentication
  EXPECT_EQ(reply[3], 0);  // succeeded
  EXPECT_EQ(reply.substr(12), "ping");
  UniqueFd denied = Connect(socks_port_);
  SendAll(denied.get(), request("denied.test"));
  reply = ReadUntil(denied.get());
  ASSERT_EQ(reply.size(), 12u);
  EXPECT_EQ(reply[3], 2) << "not allowed by ruleset";
  allowed.Reset();
  StopAndDecisions();
  EXPECT_EQ(echo.connections(), 1);
}

TEST_F(EgressProxyTest, MalformedInputClosesThatConnectionAloneAndOthersStillWork) {
  Destination echo("");
  StartProxy(echo);
  UniqueFd held = Connect(http_port_);
  std::string authority = "allowed.test:" + std::to_string(echo.port());
  SendAll(held.get(), ConnectHead(authority));
  EXPECT_NE(ReadUntil(held.get(), "\r\n\r\n").find("200"), std::string::npos);
  for (std::string junk : {std::string("GET / HTTP/1.1\n\n"), std::string("\x16\x03\x01\x02\x00", 5),
                           std::string(20000, 'A')}) {
    UniqueFd bad = Connect(http_port_);
    ::send(bad.get(), junk.data(), junk.size(), MSG_NOSIGNAL);
    EXPECT_NE(ReadUntil(bad.get()).find("400 Bad Request"), std::string::npos);
  }
  SendAll(held.get(), "still");
  EXPECT_EQ(ReadUntil(held.get(), "still"), "still");
  held.Reset();
  StopAndDecisions();
}

TEST_F(EgressProxyTest, AConnectionPastTheLimitIsClosedAtOnce) {
  Destination echo("");
  EgressOptions options;
  options.max_connections = 2;
  StartProxy(echo, std::move(options));
  UniqueFd first = Connect(http_port_);
  UniqueFd second = Connect(http_port_);
  UniqueFd third = Connect(http_port_);
  EXPECT_TRUE(ClosedWithNothing(third.get()));
  SendAll(first.get(), "GET / HTTP/1.1\n\n");
  EXPECT_NE(ReadUntil(first.get()).find("400"), std::string::npos) << "the first two are served";
  StopAndDecisions();
}

TEST_F(EgressProxyTest, AHeadThatNeverEndsIsDroppedAfterTheTimeout) {
  Destination echo("");
  EgressOptions options;
  options.head_timeout = std::chrono::milliseconds(200);
  StartProxy(echo, std::move(options));
  UniqueFd slow = Connect(http_port_);
  SendAll(slow.get(), "CONNECT allowed.test:1 HTTP/1.1\r\n");
  EXPECT_TRUE(ClosedWithNothing(slow.get()));
  StopAndDecisions();
}

TEST_F(EgressProxyTest, ATunnelCarriesALargeStreamBothWaysWhole) {
  Destination echo("");
  StartProxy(echo);
  UniqueFd client = Connect(http_port_);
  SendAll(client.get(), ConnectHead("allowed.test:" + std::to_string(echo.port())));
  ASSERT_EQ(ReadUntil(client.get(), "\r\n\r\n"), "HTTP/1.1 200 Connection established\r\n\r\n");
  // Past the pipe's first 64 KiB and many turns: the pipe grows, and the
  // echo's answers come back while more is sent.
  std::string sent(8 << 20, '\0');
  for (size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<char>(i % 251);
  std::thread sender([&] { SendAll(client.get(), sent); });
  std::string got;
  char buffer[65536];
  while (got.size() < sent.size()) {
    struct pollfd p = {client.get(), POLLIN, 0};
    if (::poll(&p, 1, 5000) != 1) break;
    ssize_t n = ::recv(client.get(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    got.append(buffer, static_cast<size_t>(n));
  }
  sender.join();
  EXPECT_TRUE(got == sent) << got.size() << " of " << sent.size() << " bytes came back";
  client.Reset();
  std::vector<EgressDecision> decisions = StopAndDecisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].bytes_sent, sent.size());
  EXPECT_EQ(decisions[0].bytes_received, sent.size());
}

// The file limit is the process's: the whole case runs in a child of its own.
TEST_F(EgressProxyTest, WithNoDescriptorLeftForAPipeATunnelCopiesItsBytesInstead) {
  pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Destination echo("");
    StartProxy(echo);
    UniqueFd client = Connect(http_port_);
    SendAll(client.get(), ConnectHead("allowed.test:" + std::to_string(echo.port()), "ping"));
    bool ok = ReadUntil(client.get(), "ping") == "HTTP/1.1 200 Connection established\r\n\r\nping";
    // Both directions wait for input now, holding no pipe, and none can be
    // made: no descriptor past 0 (poll's one entry is still within the
    // limit).
    struct rlimit files;
    ok = ok && ::getrlimit(RLIMIT_NOFILE, &files) == 0;
    files.rlim_cur = 1;
    ok = ok && ::setrlimit(RLIMIT_NOFILE, &files) == 0;
    int ends[2];
    ok = ok && ::pipe(ends) != 0;
    SendAll(client.get(), "pong");
    ok = ok && ReadUntil(client.get(), "pong") == "pong";
    client.Reset();
    std::vector<EgressDecision> decisions = StopAndDecisions();
    ok = ok && decisions.size() == 1 && decisions[0].bytes_sent == 8 && decisions[0].bytes_received == 8;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace corral
