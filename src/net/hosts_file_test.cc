#include "net/hosts_file.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/unique_fd.h"

namespace corral {
namespace {

TEST(HostsFile, NamesMapToTheirAddressesInOrder) {
  auto names = ParseHostsFile(
      "127.0.0.1\tlocalhost\n"
      "::1     localhost ip6-localhost  # the same name twice\n"
      "# a comment\n"
      "10.0.0.5 Build.Internal. build\r\n"
      "fe80::1%eth0 zoned\n"
      "999.1.1.1 bad\n"
      "10.0.0.5 build\n"
      "lonely\n");
  ASSERT_EQ(names.count("localhost"), 1u);
  EXPECT_EQ(names["localhost"], (std::vector<Address>{*ParseAddress("127.0.0.1"), *ParseAddress("::1")}));
  EXPECT_EQ(names["build.internal"], std::vector<Address>{*ParseAddress("10.0.0.5")});
  EXPECT_EQ(names["build"], std::vector<Address>{*ParseAddress("10.0.0.5")}) << "once each";
  EXPECT_EQ(names.count("zoned"), 0u);
  EXPECT_EQ(names.count("bad"), 0u);
  EXPECT_EQ(names.count("lonely"), 0u);
  EXPECT_TRUE(ReadHostsFile("/nonexistent/hosts").empty());
}

// A DNS server on 127.0.0.1 for LookUpAbsoluteAt: it records every name
// asked and answers from a small zone.
//   v4.corral.test     A 192.0.2.1, A 192.0.2.2 (and 192.0.2.1 again)
//   v6.corral.test     AAAA 2001:db8::1 (no A: NODATA)
//   alias.corral.test  CNAME v4.corral.test, then its A record
//   both.corral.test   A 192.0.2.9, AAAA 2001:db8::9
//   stray.corral.test  A 192.0.2.7, and an A record of other.test
//   chainN.corral.test CNAME c1.corral.test, c1 CNAME c2, ... cN A 192.0.2.N
//   anything else      NXDOMAIN
// A DNS server on the loopback, over UDP and over TCP on the same port,
// for a small zone under corral.test. Over UDP, big, empty, servfail and
// stall (.corral.test) come truncated (TC): big, servfail and stall with
// one address, empty with none. Over TCP big has its forty addresses,
// empty two, servfail fails (SERVFAIL), and stall is never answered (its
// connection is closed after three seconds, so a client without a deadline
// of its own fails a test instead of hanging it).
class ZoneServer {
 public:
  // kEveryQuery: no query over TCP is ever answered.
  enum class TcpStall { kStallName, kEveryQuery };
  // Where it listens: 127.0.0.1, or ::1.
  enum class Loopback { kIpv4, kIpv6 };
  explicit ZoneServer(TcpStall stall = TcpStall::kStallName, Loopback loopback = Loopback::kIpv4) : stall_(stall) {
    const int family = loopback == Loopback::kIpv4 ? AF_INET : AF_INET6;
    // A TCP port of the same number as the UDP socket's (a few tries: the
    // number may be taken for TCP).
    for (int attempt = 0; attempt < 50 && !tcp_; ++attempt) {
      socket_ = UniqueFd(::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
      address_ = {};
      address6_ = {};
      address_.sin_family = AF_INET;
      address_.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      address6_.sin6_family = AF_INET6;
      address6_.sin6_addr = in6addr_loopback;
      sockaddr* bound = family == AF_INET ? reinterpret_cast<sockaddr*>(&address_)
                                          : reinterpret_cast<sockaddr*>(&address6_);
      socklen_t size = family == AF_INET ? sizeof address_ : sizeof address6_;
      socklen_t length = size;
      if (::bind(socket_.get(), bound, size) != 0 || ::getsockname(socket_.get(), bound, &length) != 0) continue;
      UniqueFd tcp(::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
      if (::bind(tcp.get(), bound, size) == 0 && ::listen(tcp.get(), 8) == 0) tcp_ = std::move(tcp);
    }
    if (!tcp_) ADD_FAILURE() << "cannot bind the zone server";
    thread_ = std::thread([this] { Serve(); });
  }
  ~ZoneServer() {
    stop_ = true;
    thread_.join();
  }
  sockaddr_in address() const { return address_; }
  sockaddr_in6 address6() const { return address6_; }
  std::vector<std::string> asked() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_;
  }
  // The queries (as asked() names them) that carried an EDNS0 OPT record.
  std::vector<std::string> asked_with_edns() {
    std::lock_guard<std::mutex> lock(mutex_);
    return asked_with_edns_;
  }

 private:
  enum class Over { kUdp, kTcp };

  void Serve() {
    std::vector<UniqueFd> connections;  // held open: a stalled answer never comes
    std::vector<std::chrono::steady_clock::time_point> accepted;
    while (!stop_) {
      for (size_t i = 0; i < connections.size(); ++i) {
        if (std::chrono::steady_clock::now() - accepted[i] > std::chrono::seconds(3)) connections[i].Reset();
      }
      for (size_t i = connections.size(); i-- > 0;) {
        if (connections[i]) continue;
        connections.erase(connections.begin() + static_cast<long>(i));
        accepted.erase(accepted.begin() + static_cast<long>(i));
      }
      std::vector<pollfd> ready = {{socket_.get(), POLLIN, 0}, {tcp_.get(), POLLIN, 0}};
      for (const UniqueFd& connection : connections) ready.push_back({connection.get(), POLLIN, 0});
      if (::poll(ready.data(), ready.size(), 20) <= 0) continue;
      if (ready[0].revents & POLLIN) {
        uint8_t query[512];
        sockaddr_storage from = {};
        socklen_t from_length = sizeof from;
        ssize_t n =
            ::recvfrom(socket_.get(), query, sizeof query, 0, reinterpret_cast<sockaddr*>(&from), &from_length);
        if (std::optional<std::vector<uint8_t>> reply = Answer(query, n, Over::kUdp)) {
          (void)::sendto(socket_.get(), reply->data(), reply->size(), 0, reinterpret_cast<sockaddr*>(&from),
                         from_length);
        }
      }
      if (ready[1].revents & POLLIN) {
        UniqueFd connection(::accept4(tcp_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (connection) {
          connections.push_back(std::move(connection));
          accepted.push_back(std::chrono::steady_clock::now());
        }
      }
      for (size_t i = 2; i < ready.size(); ++i) {
        if ((ready[i].revents & (POLLIN | POLLHUP)) == 0) continue;
        // One query a read: its two bytes of length and the query (the
        // client sends them at once).
        uint8_t framed[514];
        ssize_t n = ::recv(ready[i].fd, framed, sizeof framed, 0);
        if (n < 2) {
          connections[i - 2].Reset();
          continue;
        }
        std::optional<std::vector<uint8_t>> reply = Answer(framed + 2, n - 2, Over::kTcp);
        if (!reply) continue;
        reply->insert(reply->begin(), {static_cast<uint8_t>(reply->size() >> 8), static_cast<uint8_t>(reply->size())});
        (void)::send(ready[i].fd, reply->data(), reply->size(), MSG_NOSIGNAL);
      }
    }
  }

  // The reply to one query, or none (a stalled one).
  std::optional<std::vector<uint8_t>> Answer(const uint8_t* query, ssize_t n, Over over) {
    if (n < 12) return std::nullopt;
    // The question: labels from byte 12, then type and class.
    std::string name;
    size_t at = 12;
    if (over == Over::kTcp && stall_ == TcpStall::kEveryQuery) return std::nullopt;
    while (at < static_cast<size_t>(n) && query[at] != 0) {
      size_t label = query[at++];
      if (!name.empty()) name += '.';
      name.append(reinterpret_cast<const char*>(query + at), label);
      at += label;
    }
    size_t question_end = at + 5;
    if (question_end > static_cast<size_t>(n)) return std::nullopt;
    uint16_t type = static_cast<uint16_t>(query[at + 1] << 8 | query[at + 2]);
    // An OPT record: the additional count, and the record's type right
    // after the question (the root name, then 41).
    const bool edns = (query[10] != 0 || query[11] != 0) && question_end + 3 <= static_cast<size_t>(n) &&
                      query[question_end] == 0 && query[question_end + 1] == 0 && query[question_end + 2] == 41;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::string asked = name + (type == 1 ? "/A" : type == 28 ? "/AAAA" : "/?") + (over == Over::kTcp ? "/tcp" : "");
      asked_.push_back(asked);
      if (edns) asked_with_edns_.push_back(asked);
    }
    std::vector<uint8_t> reply(query, query + question_end);
    reply[2] = 0x81;  // a response, recursion desired
    reply[3] = 0x80;  // recursion available, NOERROR
    reply[6] = reply[7] = 0;
    reply[8] = reply[9] = reply[10] = reply[11] = 0;
    int answers = 0;
    auto record = [&](std::vector<uint8_t> owner, uint16_t record_type, std::vector<uint8_t> data) {
      reply.insert(reply.end(), owner.begin(), owner.end());
      std::vector<uint8_t> fixed = {static_cast<uint8_t>(record_type >> 8), static_cast<uint8_t>(record_type), 0, 1,
                                    0, 0, 0, 60, static_cast<uint8_t>(data.size() >> 8),
                                    static_cast<uint8_t>(data.size())};
      reply.insert(reply.end(), fixed.begin(), fixed.end());
      reply.insert(reply.end(), data.begin(), data.end());
      ++answers;
    };
    const std::vector<uint8_t> question_name = {0xc0, 12};
    std::vector<uint8_t> v6_1(16, 0), v6_9(16, 0);
    v6_1[0] = v6_9[0] = 0x20;
    v6_1[1] = v6_9[1] = 0x01;
    v6_1[2] = v6_9[2] = 0x0d;
    v6_1[3] = v6_9[3] = 0xb8;
    v6_1[15] = 1;
    v6_9[15] = 9;
    if (name == "v4.corral.test") {
      if (type == 1) {
        record(question_name, 1, {192, 0, 2, 1});
        record(question_name, 1, {192, 0, 2, 2});
        record(question_name, 1, {192, 0, 2, 1});
      }
    } else if (name == "v6.corral.test") {
      if (type == 28) record(question_name, 28, v6_1);
    } else if (name == "alias.corral.test") {
      size_t target = reply.size() + 12;  // where the CNAME's data will start
      record(question_name, 5, {2, 'v', '4', 6, 'c', 'o', 'r', 'r', 'a', 'l', 4, 't', 'e', 's', 't', 0});
      if (type == 1) {
        record({static_cast<uint8_t>(0xc0 | target >> 8), static_cast<uint8_t>(target)}, 1, {192, 0, 2, 1});
      }
    } else if (name.rfind("chain", 0) == 0 && type == 1) {
      int links = std::stoi(name.substr(5));
      auto encode = [](const std::string& dotted) {
        std::vector<uint8_t> out;
        size_t at = 0;
        while (at <= dotted.size()) {
          size_t dot = dotted.find('.', at);
          if (dot == std::string::npos) dot = dotted.size();
          out.push_back(static_cast<uint8_t>(dot - at));
          out.insert(out.end(), dotted.begin() + static_cast<long>(at), dotted.begin() + static_cast<long>(dot));
          at = dot + 1;
        }
        out.push_back(0);
        return out;
      };
      std::vector<uint8_t> owner = question_name;
      for (int i = 1; i <= links; ++i) {
        std::vector<uint8_t> target = encode("c" + std::to_string(i) + ".corral.test");
        record(owner, 5, target);
        owner = target;
      }
      record(owner, 1, {192, 0, 2, static_cast<uint8_t>(links)});
    } else if (name == "stray.corral.test") {
      if (type == 1) {
        record(question_name, 1, {192, 0, 2, 7});
        record({5, 'o', 't', 'h', 'e', 'r', 4, 't', 'e', 's', 't', 0}, 1, {203, 0, 113, 66});
      }
    } else if (name == "both.corral.test") {
      if (type == 1) record(question_name, 1, {192, 0, 2, 9});
      if (type == 28) record(question_name, 28, v6_9);
    } else if (name == "old.corral.test") {  // a server that knows no EDNS0
      if (edns) {
        reply[3] = 0x81;  // FORMERR
        return reply;
      }
      if (type == 1) record(question_name, 1, {192, 0, 2, 77});
    } else if (name == "big.corral.test" || name == "stall.corral.test" || name == "servfail.corral.test" ||
               name == "empty.corral.test") {
      if (type == 1 && over == Over::kUdp) {
        reply[2] |= 0x02;  // TC: one address here (none for empty), the rest only over TCP
        if (name != "empty.corral.test") record(question_name, 1, {192, 0, 2, 100});
      } else if (type == 1 && name == "stall.corral.test") {
        return std::nullopt;
      } else if (type == 1 && name == "servfail.corral.test") {
        reply[3] = 0x82;  // SERVFAIL
      } else if (type == 1 && name == "empty.corral.test") {
        record(question_name, 1, {192, 0, 2, 200});
        record(question_name, 1, {192, 0, 2, 201});
      } else if (type == 1) {
        for (uint8_t i = 100; i < 140; ++i) record(question_name, 1, {192, 0, 2, i});
      }
    } else {
      reply[3] = 0x83;  // NXDOMAIN
    }
    reply[7] = static_cast<uint8_t>(answers);
    return reply;
  }

  TcpStall stall_;
  UniqueFd socket_;
  UniqueFd tcp_;
  sockaddr_in address_ = {};
  sockaddr_in6 address6_ = {};
  std::atomic<bool> stop_ = false;
  std::mutex mutex_;
  std::vector<std::string> asked_;
  std::vector<std::string> asked_with_edns_;
  std::thread thread_;
};

std::vector<std::string> Strings(const std::vector<Address>& addresses) {
  std::vector<std::string> out;
  for (const Address& address : addresses) out.push_back(address.ToString());
  return out;
}

TEST(LookUpAbsolute, AsksForTheNameAsAbsoluteAndGivesIpv4ThenIpv6OnceEach) {
  ZoneServer server;
  EXPECT_EQ(Strings(LookUpAbsoluteAt("v4.corral.test", {server.address()})),
            (std::vector<std::string>{"192.0.2.1", "192.0.2.2"}));
  EXPECT_EQ(Strings(LookUpAbsoluteAt("v6.corral.test", {server.address()})), std::vector<std::string>{"2001:db8::1"});
  EXPECT_EQ(Strings(LookUpAbsoluteAt("both.corral.test", {server.address()})),
            (std::vector<std::string>{"192.0.2.9", "2001:db8::9"}));
  EXPECT_EQ(Strings(LookUpAbsoluteAt("alias.corral.test", {server.address()})), std::vector<std::string>{"192.0.2.1"})
      << "the CNAME's target's address, the CNAME itself skipped";
  EXPECT_EQ(Strings(LookUpAbsoluteAt("stray.corral.test", {server.address()})), std::vector<std::string>{"192.0.2.7"})
      << "a record of another owner is not the name's";
  // No search domain was ever appended: the server saw exactly these names.
  EXPECT_EQ(server.asked(), (std::vector<std::string>{"v4.corral.test/A", "v4.corral.test/AAAA", "v6.corral.test/A",
                                                      "v6.corral.test/AAAA", "both.corral.test/A",
                                                      "both.corral.test/AAAA", "alias.corral.test/A",
                                                      "alias.corral.test/AAAA", "stray.corral.test/A",
                                                      "stray.corral.test/AAAA"}));
}

TEST(LookUpAbsolute, ACnameChainIsFollowedFifteenLinksAndNoFurther) {
  ZoneServer server;
  EXPECT_EQ(Strings(LookUpAbsoluteAt("chain3.corral.test", {server.address()})), std::vector<std::string>{"192.0.2.3"});
  EXPECT_EQ(Strings(LookUpAbsoluteAt("chain15.corral.test", {server.address()})),
            std::vector<std::string>{"192.0.2.15"});
  EXPECT_TRUE(LookUpAbsoluteAt("chain16.corral.test", {server.address()}).empty());
}

TEST(LookUpAbsolute, ANameThatDoesNotExistIsAskedOnceAndFindsNothing) {
  ZoneServer server;
  EXPECT_TRUE(LookUpAbsoluteAt("gone.corral.test", {server.address()}).empty());
  EXPECT_EQ(server.asked(), std::vector<std::string>{"gone.corral.test/A"}) << "no AAAA after NXDOMAIN";
}

TEST(LookUpAbsolute, NoServerAnsweringFindsNothingAfterOneQuery) {
  // A bound socket that never reads: the one try of one second times out.
  UniqueFd silent(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  sockaddr_in address = {};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ASSERT_EQ(::bind(silent.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ASSERT_EQ(::getsockname(silent.get(), reinterpret_cast<sockaddr*>(&address), &length), 0);
  EXPECT_TRUE(LookUpAbsoluteAt("v4.corral.test", {address}).empty());
  char buffer[512];
  int queries = 0;
  while (::recv(silent.get(), buffer, sizeof buffer, MSG_DONTWAIT) > 0) ++queries;
  EXPECT_EQ(queries, 1) << "no AAAA query after the A query found no server";
}

// A truncated answer is asked again over TCP, where the whole of it is.
TEST(LookUpAbsolute, ATruncatedAnswerIsAskedAgainOverTcp) {
  ZoneServer server;
  std::vector<std::string> expected;
  for (int i = 100; i < 140; ++i) expected.push_back("192.0.2." + std::to_string(i));
  EXPECT_EQ(Strings(LookUpAbsoluteAt("big.corral.test", {server.address()})), expected);
  EXPECT_EQ(server.asked(),
            (std::vector<std::string>{"big.corral.test/A", "big.corral.test/A/tcp", "big.corral.test/AAAA"}));
}

// The usual truncated reply carries no record at all (BIND, Unbound): it
// too is asked again over TCP.
TEST(LookUpAbsolute, ATruncatedReplyWithNoRecordsIsAskedAgainOverTcp) {
  ZoneServer server;
  EXPECT_EQ(Strings(LookUpAbsoluteAt("empty.corral.test", {server.address()})),
            (std::vector<std::string>{"192.0.2.200", "192.0.2.201"}));
  EXPECT_EQ(server.asked(),
            (std::vector<std::string>{"empty.corral.test/A", "empty.corral.test/A/tcp", "empty.corral.test/AAAA"}));
}

// A server that fails the query over TCP does not take away what the
// truncated reply held.
TEST(LookUpAbsolute, AFailureOverTcpLeavesTheTruncatedAnswer) {
  ZoneServer server;
  EXPECT_EQ(Strings(LookUpAbsoluteAt("servfail.corral.test", {server.address()})),
            std::vector<std::string>{"192.0.2.100"});
}

// A first server that never answers over TCP gets its share of the
// timeout (half of one second), not all of it: the second one answers.
TEST(LookUpAbsolute, AServerSilentOverTcpLeavesTimeForTheNext) {
  ZoneServer silent(ZoneServer::TcpStall::kEveryQuery);
  ZoneServer answering;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> found =
      Strings(LookUpAbsoluteAt("big.corral.test", {silent.address(), answering.address()}));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_EQ(found.size(), 40u);
  EXPECT_EQ(found.back(), "192.0.2.139");
  EXPECT_GE(took, std::chrono::milliseconds(400)) << "the first server was not given its share";
  EXPECT_EQ(silent.asked(), (std::vector<std::string>{"big.corral.test/A", "big.corral.test/AAAA"}))
      << "over TCP it never got as far as reading a name";
  EXPECT_EQ(answering.asked(), std::vector<std::string>{"big.corral.test/A/tcp"});
}

// glibc's own TCP path waits for ever on a server that accepts and never
// answers; corral's gives up at resolv.conf's timeout (one second here)
// and keeps what the truncated answer held. (Without the deadline the
// lookup takes the server's three seconds.)
TEST(LookUpAbsolute, AServerThatNeverAnswersOverTcpCostsOneTimeoutAndTheTruncatedAnswerIsKept) {
  ZoneServer server;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(Strings(LookUpAbsoluteAt("stall.corral.test", {server.address()})),
            std::vector<std::string>{"192.0.2.100"});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_GE(took, std::chrono::milliseconds(900));
  EXPECT_LT(took, std::chrono::milliseconds(2500));
  EXPECT_EQ(server.asked(),
            (std::vector<std::string>{"stall.corral.test/A", "stall.corral.test/A/tcp", "stall.corral.test/AAAA"}));
}

// resolv.conf's use-vc (here through RES_OPTIONS, which glibc reads with
// resolv.conf, once a process): every query goes over corral's own TCP
// path, none over UDP. In a fresh process of this test, so the option is
// read at its first lookup.
// The death test's child: exits 0 when every query went over TCP and the
// answers are right.
[[noreturn]] void LookUpOverTcpAloneAndExit() {
  ZoneServer server;
  std::vector<Address> found = LookUpAbsoluteAt("both.corral.test", {server.address()});
  std::vector<Address> gone = LookUpAbsoluteAt("gone.corral.test", {server.address()});
  bool right = Strings(found) == std::vector<std::string>{"192.0.2.9", "2001:db8::9"} && gone.empty();
  // No AAAA after NXDOMAIN over TCP either.
  const std::vector<std::string> over_tcp = {"both.corral.test/A/tcp", "both.corral.test/AAAA/tcp",
                                             "gone.corral.test/A/tcp"};
  bool only_tcp = server.asked() == over_tcp;
  std::fprintf(stderr, "found %zu, asked:", found.size());
  for (const std::string& asked : server.asked()) std::fprintf(stderr, " %s", asked.c_str());
  std::fprintf(stderr, "\n");
  std::_Exit(right && only_tcp ? 0 : 1);
}

// resolv.conf's edns0 (RES_OPTIONS here, as above): the UDP queries carry
// an OPT record, and a server that refuses it (FORMERR) is asked again
// without one, and is not offered it again in the same lookup.
[[noreturn]] void LookUpWithEdnsAndExit() {
  ZoneServer server;
  std::vector<Address> found = LookUpAbsoluteAt("v4.corral.test", {server.address()});
  std::vector<Address> old = LookUpAbsoluteAt("old.corral.test", {server.address()});
  bool right = Strings(found) == std::vector<std::string>{"192.0.2.1", "192.0.2.2"} &&
               Strings(old) == std::vector<std::string>{"192.0.2.77"};
  const std::vector<std::string> asked = {"v4.corral.test/A", "v4.corral.test/AAAA", "old.corral.test/A",
                                          "old.corral.test/A", "old.corral.test/AAAA"};
  const std::vector<std::string> with_edns = {"v4.corral.test/A", "v4.corral.test/AAAA", "old.corral.test/A"};
  bool as_expected = server.asked() == asked && server.asked_with_edns() == with_edns;
  std::fprintf(stderr, "asked:");
  for (const std::string& one : server.asked()) std::fprintf(stderr, " %s", one.c_str());
  std::fprintf(stderr, "; with EDNS0:");
  for (const std::string& one : server.asked_with_edns()) std::fprintf(stderr, " %s", one.c_str());
  std::fprintf(stderr, "\n");
  std::_Exit(right && as_expected ? 0 : 1);
}

TEST(LookUpAbsoluteDeathTest, Edns0IsOfferedAndDroppedForAServerThatRefusesIt) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_EQ(::setenv("RES_OPTIONS", "edns0", 1), 0);
  EXPECT_EXIT(LookUpWithEdnsAndExit(), ::testing::ExitedWithCode(0), "");
  ::unsetenv("RES_OPTIONS");
}

TEST(LookUpAbsoluteDeathTest, UseVcAsksOverTcpAlone) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_EQ(::setenv("RES_OPTIONS", "use-vc", 1), 0);
  EXPECT_EXIT(LookUpOverTcpAloneAndExit(), ::testing::ExitedWithCode(0), "");
  ::unsetenv("RES_OPTIONS");
}

// resolv.conf's rotate with use-vc (RES_OPTIONS, as above): corral's own
// TCP path starts each query at the next server, so both servers are
// asked. (Without rotate every query goes to the first, which answers.)
[[noreturn]] void LookUpRotatingOverTcpAndExit() {
  ZoneServer first, second;
  bool right = true;
  for (int i = 0; i < 4; ++i) {
    right &= Strings(LookUpAbsoluteAt("v4.corral.test", {first.address(), second.address()})) ==
             std::vector<std::string>{"192.0.2.1", "192.0.2.2"};
  }
  const size_t to_first = first.asked().size(), to_second = second.asked().size();
  std::fprintf(stderr, "right %d, asked of the first %zu, of the second %zu\n", right, to_first, to_second);
  std::_Exit(right && to_first == 4 && to_second == 4 ? 0 : 1);
}

TEST(LookUpAbsoluteDeathTest, RotateStartsEachTcpQueryAtTheNextServer) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  ASSERT_EQ(::setenv("RES_OPTIONS", "use-vc rotate", 1), 0);
  EXPECT_EXIT(LookUpRotatingOverTcpAndExit(), ::testing::ExitedWithCode(0), "");
  ::unsetenv("RES_OPTIONS");
}

// A name server on an IPv6 address (res_ninit keeps it apart from the IPv4
// ones) is asked over UDP and, for a truncated answer, over corral's own
// TCP path. In a network namespace of the child's own, whose lo (brought
// up here) has ::1 whatever the host's IPv6 configuration.
[[noreturn]] void LookUpOverIpv6AndExit() {
  if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "unshare: %s\n", std::strerror(errno));
    std::_Exit(2);
  }
  UniqueFd control(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  ifreq lo = {};
  std::strncpy(lo.ifr_name, "lo", IFNAMSIZ - 1);
  if (!control || ::ioctl(control.get(), SIOCGIFFLAGS, &lo) != 0 ||
      (lo.ifr_flags |= IFF_UP, ::ioctl(control.get(), SIOCSIFFLAGS, &lo) != 0)) {
    std::fprintf(stderr, "lo: %s\n", std::strerror(errno));
    std::_Exit(2);
  }
  ZoneServer server(ZoneServer::TcpStall::kStallName, ZoneServer::Loopback::kIpv6);
  std::vector<std::string> found = Strings(LookUpAbsoluteAt("big.corral.test", {server.address6()}));
  std::vector<std::string> both = Strings(LookUpAbsoluteAt("both.corral.test", {server.address6()}));
  const std::vector<std::string> asked = {"big.corral.test/A", "big.corral.test/A/tcp", "big.corral.test/AAAA",
                                          "both.corral.test/A", "both.corral.test/AAAA"};
  std::fprintf(stderr, "found %zu, asked:", found.size());
  for (const std::string& one : server.asked()) std::fprintf(stderr, " %s", one.c_str());
  std::fprintf(stderr, "\n");
  const bool right = found.size() == 40 && found.back() == "192.0.2.139" &&
                     both == std::vector<std::string>{"192.0.2.9", "2001:db8::9"} && server.asked() == asked;
  std::_Exit(right ? 0 : 1);
}

TEST(LookUpAbsoluteDeathTest, AnIpv6ServerIsAskedOverUdpAndTcp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(LookUpOverIpv6AndExit(), ::testing::ExitedWithCode(0), "");
}

TEST(LookUpAbsolute, AnEmptyNameOrOneEndingInADotFindsNothing) {
  ZoneServer server;
  EXPECT_TRUE(LookUpAbsoluteAt("", {server.address()}).empty());
  EXPECT_TRUE(LookUpAbsoluteAt("v4.corral.test.", {server.address()}).empty());
  EXPECT_TRUE(server.asked().empty());
}

}  // namespace
}  // namespace corral
