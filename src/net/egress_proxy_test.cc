// EgressProxy on real loopback sockets of the test's own network namespace:
// listeners on ephemeral ports stand in for the ones the sandbox's init
// passes out, a fake gate allows named places, the static names table maps
// test names to a destination server run here, and every negative case is
// judged at that server: it saw no connection.
#include "net/egress_proxy.h"

#include "net/asking_gate.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <map>
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
  std::set<std::string> denied;  // names a deny rule matches
  std::set<std::string> refused_addresses;

  EgressRuling Decide(const std::string& host, uint16_t port) const override {
    if (denied.count(host)) return {EgressVerdict::kDenied, "--deny-host " + host};
    if (allowed.count({host, port})) return {EgressVerdict::kAllowed, "--allow-host " + host};
    return {EgressVerdict::kDenied, "not in --allow-host", EgressBasis::kNotListed};
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
  void StartProxy(Destination& destination, EgressOptions options = {},
                  std::function<std::shared_ptr<const EgressGate>(std::shared_ptr<FakeGate>)> wrap = nullptr) {
    gate_ = std::make_shared<FakeGate>();
    gate_->allowed = {{"allowed.test", destination.port()}, {"inside.test", destination.port()}};
    gate_->denied = {"evil.test"};
    gate_->refused_addresses = {"127.0.0.2"};
    std::shared_ptr<const EgressGate> gate = wrap ? wrap(gate_) : gate_;
    options.names["allowed.test"] = {*ParseAddress("127.0.0.1")};
    options.names["inside.test"] = {*ParseAddress("127.0.0.2")};
    options.names["asked.test"] = {*ParseAddress("127.0.0.1")};
    options.names["evil.test"] = {*ParseAddress("127.0.0.1")};
    options.on_decision = [this](const EgressDecision& decision) {
      std::lock_guard<std::mutex> lock(mutex_);
      decisions_.push_back(decision);
    };
    EgressListeners listeners;
    listeners.http = Listener(&http_port_);
    listeners.socks = Listener(&socks_port_);
    Result<std::unique_ptr<EgressProxy>> proxy = EgressProxy::Start(std::move(listeners), gate, std::move(options));
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

// The congestion control of the TCP socket of this process whose local and
// peer ports are these (0: any), or empty when there is none: the proxy's
// own sockets are in this process.
std::string CongestionControlOf(uint16_t local_port, uint16_t peer_port) {
  auto port_of = [](int fd, int (*get)(int, sockaddr*, socklen_t*)) {
    struct sockaddr_in address = {};
    socklen_t length = sizeof address;
    if (get(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 || address.sin_family != AF_INET) return -1;
    return static_cast<int>(ntohs(address.sin_port));
  };
  DIR* fds = ::opendir("/proc/self/fd");
  if (fds == nullptr) return "";
  std::string found;
  while (struct dirent* entry = ::readdir(fds)) {
    int fd = std::atoi(entry->d_name);
    if (fd == ::dirfd(fds) || entry->d_name[0] == '.') continue;
    if (local_port != 0 && port_of(fd, ::getsockname) != local_port) continue;
    if (port_of(fd, ::getpeername) != peer_port) continue;
    char name[16] = {};
    socklen_t length = sizeof name;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &length) == 0) found = name;
  }
  ::closedir(fds);
  return found;
}

// Both sides of this tunnel are on loopback, where nothing can be congested:
// the proxy sends on each without the pacing of the host's default (BBR
// where the host has it; on a host whose default is reno this cannot fail).
TEST_F(EgressProxyTest, ATunnelsLoopbackSocketsAreNeverPaced) {
  Destination echo("");
  StartProxy(echo);
  UniqueFd client = Connect(http_port_);
  SendAll(client.get(), ConnectHead("allowed.test:" + std::to_string(echo.port()), "ping"));
  ASSERT_EQ(ReadUntil(client.get(), "ping"), "HTTP/1.1 200 Connection established\r\n\r\nping");
  struct sockaddr_in mine = {};
  socklen_t length = sizeof mine;
  ASSERT_EQ(::getsockname(client.get(), reinterpret_cast<sockaddr*>(&mine), &length), 0);
  EXPECT_EQ(CongestionControlOf(http_port_, ntohs(mine.sin_port)), "reno") << "the sandbox's side";
  EXPECT_EQ(CongestionControlOf(0, echo.port()), "reno") << "the destination's side";
  client.Reset();
  StopAndDecisions();
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

// Network approval on demand (net/asking_gate.h) in front of the proxy: a
// scripted asker stands in for the approval channel. Every refusal is judged
// at the destination: it saw no connection.
class ScriptedAsker {
 public:
  // The answer for each host:port; a place with none waits until Release.
  std::map<std::pair<std::string, uint16_t>, EgressAnswer> answers;

  EgressAsker Asker() {
    return [this](const std::string& host, uint16_t port, std::chrono::steady_clock::time_point deadline) {
      std::unique_lock<std::mutex> lock(mutex_);
      asked_.push_back(host + ":" + std::to_string(port));
      changed_.notify_all();
      auto answer = answers.find({host, port});
      if (answer == answers.end()) {
        changed_.wait_until(lock, deadline, [this] { return released_; });
        if (!released_) return EgressAnswerGiven{EgressAnswer::kDeny, "the script", "no answer in time"};
        return EgressAnswerGiven{EgressAnswer::kAllowConnection, "the script", ""};
      }
      return EgressAnswerGiven{answer->second, "the script", ""};
    };
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }
  // Waits up to two seconds for `count` questions.
  bool WaitAsked(size_t count) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::seconds(2), [&] { return asked_.size() >= count; });
  }
  std::vector<std::string> asked() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::string> asked_;
  bool released_ = false;
};

class AskingProxyTest : public EgressProxyTest {
 protected:
  void StartAsking(Destination& destination, std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
    EgressOptions options;
    options.ask_timeout = timeout;
    StartProxy(destination, std::move(options), [this, timeout](std::shared_ptr<FakeGate> inner) {
      asking_ = std::make_shared<AskingGate>(std::move(inner), asker_.Asker(), timeout);
      return asking_;
    });
  }
  std::string Tunnel(const std::string& authority) {
    UniqueFd client = Connect(http_port_);
    SendAll(client.get(), ConnectHead(authority, "ping"));
    return ReadUntil(client.get(), "ping");
  }
  ScriptedAsker asker_;
  std::shared_ptr<AskingGate> asking_;
};

TEST_F(AskingProxyTest, AnAllowedAnswerLetsTheHeldConnectionThroughAndTheTrailSaysWho) {
  Destination echo("");
  asker_.answers[{"asked.test", echo.port()}] = EgressAnswer::kAllowConnection;
  StartAsking(echo);
  const std::string authority = "asked.test:" + std::to_string(echo.port());
  EXPECT_EQ(Tunnel(authority), "HTTP/1.1 200 Connection established\r\n\r\nping");
  EXPECT_EQ(echo.connections(), 1);
  std::vector<EgressDecision> decisions = StopAndDecisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].verdict, EgressVerdict::kAllowed);
  EXPECT_EQ(decisions[0].answered_by, "the script");
  ASSERT_TRUE(decisions[0].scope.has_value());
  EXPECT_EQ(*decisions[0].scope, EgressScope::kConnection);
  EXPECT_EQ(decisions[0].rule, "allowed by the script for this connection (not in --allow-host)");
}

TEST_F(AskingProxyTest, ADeniedAnswerRefusesAndTheDestinationSeesNothing) {
  Destination echo("");
  asker_.answers[{"asked.test", echo.port()}] = EgressAnswer::kDeny;
  StartAsking(echo);
  const std::string authority = "asked.test:" + std::to_string(echo.port());
  std::string reply = Tunnel(authority);
  EXPECT_EQ(reply.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("corral: blocked connection to " + authority + ": not in --allow-host; denied by the script"),
            std::string::npos)
      << reply;
  EXPECT_EQ(echo.connections(), 0);
  std::vector<EgressDecision> decisions = StopAndDecisions();
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].verdict, EgressVerdict::kDenied);
  EXPECT_EQ(decisions[0].answered_by, "the script");
  EXPECT_FALSE(decisions[0].scope.has_value());
}

// The held connection waits on the asking thread; the proxy serves an
// allowed place meanwhile, and no answer within the timeout is a refusal.
TEST_F(AskingProxyTest, AHeldConnectionStallsNoOtherAndNoAnswerInTimeIsARefusal) {
  Destination echo("");
  StartAsking(echo, std::chrono::milliseconds(1500));
  UniqueFd held = Connect(http_port_);
  const std::string asked = "asked.test:" + std::to_string(echo.port());
  SendAll(held.get(), ConnectHead(asked));
  ASSERT_TRUE(asker_.WaitAsked(1));
  EXPECT_EQ(Tunnel("allowed.test:" + std::to_string(echo.port())), "HTTP/1.1 200 Connection established\r\n\r\nping");
  std::string reply = ReadUntil(held.get(), "\n403");
  reply += ReadUntil(held.get());
  EXPECT_EQ(reply.rfind("HTTP/1.1 403 Forbidden\r\n", 0), 0u) << reply;
  EXPECT_NE(reply.find("not in --allow-host; no answer"), std::string::npos) << reply;
  EXPECT_EQ(echo.connections(), 1);  // the allowed tunnel only
  StopAndDecisions();
}

TEST_F(AskingProxyTest, ForTheRunCoversTheSamePlaceAgainButNotAnotherPort) {
  Destination echo("");
  Destination other("");
  asker_.answers[{"asked.test", echo.port()}] = EgressAnswer::kAllowRun;
  asker_.answers[{"asked.test", other.port()}] = EgressAnswer::kDeny;
  StartAsking(echo);
  const std::string authority = "asked.test:" + std::to_string(echo.port());
  EXPECT_EQ(Tunnel(authority), "HTTP/1.1 200 Connection established\r\n\r\nping");
  EXPECT_EQ(Tunnel(authority), "HTTP/1.1 200 Connection established\r\n\r\nping");
  EXPECT_NE(Tunnel("asked.test:" + std::to_string(other.port())).find("403 Forbidden"), std::string::npos);
  EXPECT_EQ(echo.connections(), 2);
  EXPECT_EQ(other.connections(), 0);
  EXPECT_EQ(asker_.asked(), (std::vector<std::string>{authority, "asked.test:" + std::to_string(other.port())}));
  std::vector<EgressDecision> decisions = StopAndDecisions();
  ASSERT_EQ(decisions.size(), 3u);
}

TEST_F(AskingProxyTest, IdenticalWaitingQuestionsAreAskedOnce) {
  Destination echo("");
  StartAsking(echo);
  const std::string authority = "asked.test:" + std::to_string(echo.port());
  std::vector<UniqueFd> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(Connect(http_port_));
    SendAll(held.back().get(), ConnectHead(authority, "ping"));
  }
  ASSERT_TRUE(asker_.WaitAsked(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the other two join the open question
  asker_.Release();
  // The destination serves one connection at a time: each is closed once echoed.
  for (UniqueFd& client : held) {
    EXPECT_EQ(ReadUntil(client.get(), "ping"), "HTTP/1.1 200 Connection established\r\n\r\nping");
    client.Reset();
  }
  EXPECT_EQ(asker_.asked().size(), 1u);
  EXPECT_EQ(asking_->questions_asked(), 1u);
  EXPECT_EQ(echo.connections(), 3);
  StopAndDecisions();
}

// The deny list and corral's own address refusals are never asked about,
// and an allowed answer still has its addresses checked.
TEST_F(AskingProxyTest, TheDenyListAndRefusedAddressesAreNeverAskedAndAlwaysWin) {
  Destination echo("");
  asker_.answers[{"evil.test", echo.port()}] = EgressAnswer::kAllowConnection;
  asker_.answers[{"127.0.0.2", echo.port()}] = EgressAnswer::kAllowConnection;
  StartAsking(echo);
  std::string denied = Tunnel("evil.test:" + std::to_string(echo.port()));
  EXPECT_NE(denied.find("--deny-host evil.test"), std::string::npos) << denied;
  std::string inside = Tunnel("127.0.0.2:" + std::to_string(echo.port()));
  EXPECT_NE(inside.find("127.0.0.2 is the loopback address"), std::string::npos) << inside;
  EXPECT_EQ(echo.connections(), 0);
  EXPECT_EQ(asker_.asked(), std::vector<std::string>{});
  StopAndDecisions();
}

TEST(AskingGate, ThePlacesTheSessionAllowedAreAllowedWithoutAsking) {
  auto inner = std::make_shared<FakeGate>();
  inner->denied = {"evil.test"};
  size_t asked = 0;
  AskingGate gate(
      inner,
      [&asked](const std::string&, uint16_t, std::chrono::steady_clock::time_point) {
        ++asked;
        return EgressAnswerGiven{};
      },
      std::chrono::seconds(1), {{"registry.test", 443}});
  EgressRuling known = gate.Decide("registry.test", 443);
  EXPECT_EQ(known.verdict, EgressVerdict::kAllowed);
  EXPECT_EQ(known.answered_by, "the session log");
  EXPECT_EQ(known.scope, EgressScope::kSession);
  EgressRuling other = gate.Decide("registry.test", 80);
  EXPECT_EQ(other.verdict, EgressVerdict::kDenied);
  EXPECT_EQ(other.basis, EgressBasis::kAsk);
  EXPECT_EQ(gate.Decide("evil.test", 443).basis, EgressBasis::kRule);  // the inner gate's deny rule
  EXPECT_EQ(asked, 0u);
}

}  // namespace
}  // namespace corral
