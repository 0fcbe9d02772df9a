// DnsStub on real loopback sockets of the test's own network namespace (an
// ephemeral port, not 53): UDP and TCP queries get NXDOMAIN, the names are
// kept once each, in order, and a malformed query gets nothing; a peer can
// hold at most DnsStub::kMaxConnections connections, and one that stops
// reading its answers is dropped without ever making the stub wait.
#include "net/dns_stub.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace corral {
namespace {

std::vector<uint8_t> Query(uint16_t id, const std::vector<std::string>& labels) {
  std::vector<uint8_t> bytes = {static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  for (const std::string& label : labels) {
    bytes.push_back(static_cast<uint8_t>(label.size()));
    bytes.insert(bytes.end(), label.begin(), label.end());
  }
  bytes.insert(bytes.end(), {0, 0, 1, 0, 1});
  return bytes;
}

class DnsStubTest : public ::testing::Test {
 protected:
  DnsStubTest() {
    address_.sin_family = AF_INET;
    address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    UniqueFd udp(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    UniqueFd tcp(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    socklen_t length = sizeof address_;
    EXPECT_EQ(::bind(udp.get(), reinterpret_cast<sockaddr*>(&address_), sizeof address_), 0);
    EXPECT_EQ(::getsockname(udp.get(), reinterpret_cast<sockaddr*>(&udp_address_), &length), 0);
    EXPECT_EQ(::bind(tcp.get(), reinterpret_cast<sockaddr*>(&address_), sizeof address_), 0);
    EXPECT_EQ(::getsockname(tcp.get(), reinterpret_cast<sockaddr*>(&tcp_address_), &length), 0);
    // Small send buffers (the accepted sockets inherit them), so a peer
    // that stops reading fills them after a few answers.
    int small = 4096;
    EXPECT_EQ(::setsockopt(tcp.get(), SOL_SOCKET, SO_SNDBUF, &small, sizeof small), 0);
    EXPECT_EQ(::listen(tcp.get(), 8), 0);
    stub_ = std::make_unique<DnsStub>(std::move(udp), std::move(tcp));
  }

  // One poll and one Handle, waiting up to `ms`.
  void Turn(int ms = 1000) {
    struct pollfd fds[DnsStub::kSlots];
    stub_->Fill(fds);
    ::poll(fds, DnsStub::kSlots, ms);
    stub_->Handle(fds);
  }

  struct sockaddr_in address_ = {};
  struct sockaddr_in udp_address_ = {};
  struct sockaddr_in tcp_address_ = {};
  std::unique_ptr<DnsStub> stub_;
};

TEST_F(DnsStubTest, UdpQueriesGetNxdomainAndAreNamedOnce) {
  UniqueFd client(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(client.get(), reinterpret_cast<sockaddr*>(&udp_address_), sizeof udp_address_), 0);
  for (auto [id, name] : {std::pair{7, "registry"}, std::pair{8, "registry"}, std::pair{9, "other"}}) {
    std::vector<uint8_t> query = Query(static_cast<uint16_t>(id), {name, "test"});
    ASSERT_EQ(::send(client.get(), query.data(), query.size(), 0), static_cast<ssize_t>(query.size()));
    Turn();
    uint8_t answer[512];
    ssize_t n = ::recv(client.get(), answer, sizeof answer, MSG_DONTWAIT);
    ASSERT_EQ(n, static_cast<ssize_t>(query.size()));
    EXPECT_EQ(answer[1], id);
    EXPECT_EQ(answer[3] & 0x0f, 3) << "NXDOMAIN";
  }
  EXPECT_EQ(stub_->names(), (std::vector<std::string>{"registry.test", "other.test"}));
  EXPECT_EQ(stub_->Summary("--network none"), "no network: lookup of registry.test and 1 more refused (--network none)");
}

TEST_F(DnsStubTest, ATcpQueryGetsItsAnswerOnTheSameConnection) {
  UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(client.get(), reinterpret_cast<sockaddr*>(&tcp_address_), sizeof tcp_address_), 0);
  Turn();  // the accept
  std::vector<uint8_t> query = Query(0x4242, {"example", "com"});
  std::vector<uint8_t> framed = {0, static_cast<uint8_t>(query.size())};
  framed.insert(framed.end(), query.begin(), query.end());
  ASSERT_EQ(::send(client.get(), framed.data(), framed.size(), 0), static_cast<ssize_t>(framed.size()));
  Turn();
  uint8_t answer[512];
  ssize_t n = ::recv(client.get(), answer, sizeof answer, MSG_DONTWAIT);
  ASSERT_EQ(n, static_cast<ssize_t>(framed.size()));
  EXPECT_EQ(answer[1], query.size());
  EXPECT_EQ(answer[2], 0x42);
  EXPECT_EQ(answer[5] & 0x0f, 3) << "NXDOMAIN";
  EXPECT_EQ(stub_->Summary("--network none"), "no network: lookup of example.com refused (--network none)");
}

TEST_F(DnsStubTest, AMalformedQueryGetsNothing) {
  UniqueFd client(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ASSERT_EQ(::connect(client.get(), reinterpret_cast<sockaddr*>(&udp_address_), sizeof udp_address_), 0);
  std::vector<uint8_t> query = Query(1, {"example"});
  query[2] |= 0x80;  // a response
  ASSERT_EQ(::send(client.get(), query.data(), query.size(), 0), static_cast<ssize_t>(query.size()));
  Turn();
  uint8_t answer[512];
  EXPECT_LT(::recv(client.get(), answer, sizeof answer, MSG_DONTWAIT), 0);
  EXPECT_FALSE(stub_->Summary("--network none").has_value());
}

UniqueFd ConnectTcp(const struct sockaddr_in& to) {
  UniqueFd client(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  EXPECT_EQ(::connect(client.get(), reinterpret_cast<const sockaddr*>(&to), sizeof to), 0);
  return client;
}

// Reads what is queued until end of input or an error (the stub dropped the
// connection), waiting at most `ms` for each read.
bool ClosedByThePeer(int fd, int ms) {
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, ms) != 1) return false;
    uint8_t buffer[65536];
    ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

TEST_F(DnsStubTest, AConnectionPastTheLimitIsClosedAtOnceAndTheOthersAreServed) {
  std::vector<UniqueFd> clients;
  for (size_t i = 0; i <= DnsStub::kMaxConnections; ++i) clients.push_back(ConnectTcp(tcp_address_));
  Turn();  // the accepts, all in one
  EXPECT_TRUE(ClosedByThePeer(clients.back().get(), 1000)) << "the connection past the limit";
  std::vector<uint8_t> query = Query(0x0101, {"held", "test"});
  std::vector<uint8_t> framed = {0, static_cast<uint8_t>(query.size())};
  framed.insert(framed.end(), query.begin(), query.end());
  ASSERT_EQ(::send(clients.front().get(), framed.data(), framed.size(), 0), static_cast<ssize_t>(framed.size()));
  Turn();
  uint8_t answer[512];
  EXPECT_EQ(::recv(clients.front().get(), answer, sizeof answer, MSG_DONTWAIT), static_cast<ssize_t>(framed.size()));
}

TEST_F(DnsStubTest, APeerThatStopsReadingIsDroppedAndNeverBlocksTheStub) {
  UniqueFd client = ConnectTcp(tcp_address_);
  int small = 4096;
  ASSERT_EQ(::setsockopt(client.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
  Turn();  // the accept
  std::vector<uint8_t> query = Query(0x0202, {"flood", "test"});
  std::vector<uint8_t> block;
  while (block.size() < 16384) {
    block.push_back(0);
    block.push_back(static_cast<uint8_t>(query.size()));
    block.insert(block.end(), query.begin(), query.end());
  }
  // Pipelined queries, never an answer read: each Turn returns (the stub
  // never waits on the peer), and the stub drops the connection once an
  // answer does not fit.
  bool refused = false;
  for (int i = 0; i < 1024 && !refused; ++i) {
    ssize_t sent = ::send(client.get(), block.data(), block.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    refused = sent < 0 && errno != EAGAIN;
    Turn(50);
  }
  EXPECT_TRUE(refused || ClosedByThePeer(client.get(), 1000));
}

}  // namespace
}  // namespace corral
