// The synthetic address table of transparent capture, and the name server's
// answers from it: an allowed name gets 127.77.0.N (the same each time,
// never another name's), a name not allowed gets none and NXDOMAIN, AAAA
// gets no data, the table is bounded and an address never moves to another
// name.
#include "net/synthetic_names.h"

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "net/dns_message.h"
#include "net/dns_stub.h"

namespace corral {
namespace {

bool EndsWithTest(const std::string& name) {
  return name.size() > 5 && name.compare(name.size() - 5, 5, ".test") == 0 && name != "denied.test";
}

Address V4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) { return Address::Ipv4(Ipv4Bytes{a, b, c, d}); }

TEST(SyntheticNames, AnAllowedNameGetsOneAddressThatMapsBack) {
  SyntheticNames names(EndsWithTest);
  std::optional<Address> first = names.AddressFor("one.test");
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->ToString(), "127.77.0.1");
  EXPECT_EQ(names.AddressFor("ONE.test.")->ToString(), "127.77.0.1") << "the normal form is the key";
  EXPECT_EQ(names.AddressFor("two.test")->ToString(), "127.77.0.2");
  EXPECT_EQ(names.NameFor(*first), "one.test");
  EXPECT_EQ(names.NameFor(V4(127, 77, 0, 2)), "two.test");
  EXPECT_EQ(names.size(), 2u);
}

TEST(SyntheticNames, ANameNotAllowedAndAnAddressNotGivenMapToNothing) {
  SyntheticNames names(EndsWithTest);
  EXPECT_FALSE(names.AddressFor("denied.test").has_value());
  EXPECT_FALSE(names.AddressFor("example.com").has_value());
  EXPECT_FALSE(names.AddressFor("").has_value());
  ASSERT_TRUE(names.AddressFor("one.test").has_value());
  EXPECT_FALSE(names.NameFor(V4(127, 77, 0, 0)).has_value());
  EXPECT_FALSE(names.NameFor(V4(127, 77, 0, 2)).has_value()) << "not given yet";
  EXPECT_FALSE(names.NameFor(V4(127, 0, 0, 1)).has_value());
  EXPECT_FALSE(names.NameFor(V4(127, 78, 0, 1)).has_value());
  EXPECT_FALSE(names.NameFor(V4(10, 77, 0, 1)).has_value());
  EXPECT_FALSE(names.NameFor(*ParseAddress("::ffff:127.77.0.1")).has_value());
  EXPECT_TRUE(SyntheticNames::InRange(V4(127, 77, 200, 3)));
  EXPECT_FALSE(SyntheticNames::InRange(V4(127, 76, 0, 1)));
}

TEST(SyntheticNames, TheTableIsBoundedAndNeverReusesAnAddress) {
  SyntheticNames names([](const std::string&) { return true; });
  for (size_t i = 0; i < SyntheticNames::kCapacity; ++i) {
    ASSERT_TRUE(names.AddressFor("n" + std::to_string(i) + ".test").has_value()) << i;
  }
  EXPECT_EQ(names.AddressFor("n4095.test")->ToString(), "127.77.16.0");
  EXPECT_FALSE(names.AddressFor("one-more.test").has_value());
  EXPECT_EQ(names.overflowed(), 1u);
  EXPECT_EQ(names.AddressFor("n0.test")->ToString(), "127.77.0.1") << "a name given one keeps it";
  EXPECT_EQ(names.NameFor(V4(127, 77, 0, 1)), "n0.test");
  EXPECT_FALSE(names.NameFor(V4(127, 77, 16, 1)).has_value());
}

TEST(SyntheticNames, ConcurrentCallersGetOneAddressPerName) {
  SyntheticNames names(EndsWithTest);
  std::vector<std::thread> threads;
  std::vector<std::string> seen(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) names.AddressFor("n" + std::to_string(i) + ".test");
      seen[t] = names.AddressFor("n42.test")->ToString();
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(names.size(), 200u);
  for (const std::string& address : seen) EXPECT_EQ(address, seen[0]);
  EXPECT_EQ(names.NameFor(*ParseAddress(seen[0])), "n42.test");
}

std::vector<uint8_t> Query(uint16_t type, const std::vector<std::string>& labels) {
  std::vector<uint8_t> bytes = {0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  for (const std::string& label : labels) {
    bytes.push_back(static_cast<uint8_t>(label.size()));
    bytes.insert(bytes.end(), label.begin(), label.end());
  }
  bytes.insert(bytes.end(), {0, static_cast<uint8_t>(type >> 8), static_cast<uint8_t>(type), 0, 1});
  return bytes;
}

TEST(DnsAnswers, AnAddressAnswerHoldsOneARecordPointingAtTheQuestion) {
  std::vector<uint8_t> query = Query(1, {"one", "test"});
  Result<DnsQuery> parsed = ParseDnsQuery(query);
  ASSERT_TRUE(parsed.ok());
  std::vector<uint8_t> answer = AddressAnswer(*parsed, {127, 77, 0, 1});
  ASSERT_EQ(answer.size(), query.size() + 16);
  EXPECT_EQ(answer[0], 0x12);
  EXPECT_EQ(answer[1], 0x34);
  EXPECT_EQ(answer[2], 0x81) << "QR and RD";
  EXPECT_EQ(answer[3], 0x80) << "RA, NOERROR";
  EXPECT_EQ(answer[5], 1) << "one question";
  EXPECT_EQ(answer[7], 1) << "one answer";
  EXPECT_TRUE(std::equal(query.begin() + 12, query.end(), answer.begin() + 12)) << "the question echoed";
  const std::vector<uint8_t> record(answer.begin() + static_cast<std::ptrdiff_t>(query.size()), answer.end());
  EXPECT_EQ(record, (std::vector<uint8_t>{0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 77, 0, 1}));
  std::vector<uint8_t> nodata = NoDataAnswer(*parsed);
  EXPECT_EQ(nodata.size(), query.size());
  EXPECT_EQ(nodata[3], 0x80) << "NOERROR";
  EXPECT_EQ(nodata[7], 0) << "no answer";
}

// The name server with the table: over real loopback sockets.
class SyntheticStub : public ::testing::Test {
 protected:
  SyntheticStub() {
    struct sockaddr_in address = {};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    UniqueFd udp(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    UniqueFd tcp(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    socklen_t length = sizeof address_;
    EXPECT_EQ(::bind(udp.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::getsockname(udp.get(), reinterpret_cast<sockaddr*>(&address_), &length), 0);
    EXPECT_EQ(::bind(tcp.get(), reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(tcp.get(), 8), 0);
    names_ = std::make_shared<SyntheticNames>(EndsWithTest);
    stub_ = std::make_unique<DnsStub>(std::move(udp), std::move(tcp), names_);
    client_ = UniqueFd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    EXPECT_EQ(::connect(client_.get(), reinterpret_cast<sockaddr*>(&address_), sizeof address_), 0);
  }

  std::vector<uint8_t> Ask(const std::vector<uint8_t>& query) {
    EXPECT_EQ(::send(client_.get(), query.data(), query.size(), 0), static_cast<ssize_t>(query.size()));
    struct pollfd fds[DnsStub::kSlots];
    stub_->Fill(fds);
    ::poll(fds, DnsStub::kSlots, 1000);
    stub_->Handle(fds);
    uint8_t answer[512];
    ssize_t n = ::recv(client_.get(), answer, sizeof answer, MSG_DONTWAIT);
    return n < 0 ? std::vector<uint8_t>{} : std::vector<uint8_t>(answer, answer + n);
  }

  struct sockaddr_in address_ = {};
  std::shared_ptr<SyntheticNames> names_;
  std::unique_ptr<DnsStub> stub_;
  UniqueFd client_;
};

TEST_F(SyntheticStub, AnAllowedNameIsAnsweredWithItsAddressAndAaaaWithNoData) {
  std::vector<uint8_t> a = Ask(Query(1, {"one", "test"}));
  ASSERT_EQ(a.size(), Query(1, {"one", "test"}).size() + 16);
  EXPECT_EQ(a[3] & 0x0f, 0);
  EXPECT_EQ(std::vector<uint8_t>(a.end() - 4, a.end()), (std::vector<uint8_t>{127, 77, 0, 1}));
  std::vector<uint8_t> aaaa = Ask(Query(28, {"one", "test"}));
  ASSERT_EQ(aaaa.size(), Query(28, {"one", "test"}).size());
  EXPECT_EQ(aaaa[3] & 0x0f, 0) << "NOERROR";
  EXPECT_EQ(aaaa[7], 0) << "no data";
  std::vector<uint8_t> https = Ask(Query(65, {"one", "test"}));
  EXPECT_EQ(https[7], 0);
  EXPECT_FALSE(stub_->Summary("--allow-host").has_value()) << "an answered name is not a refused lookup";
  EXPECT_EQ(names_->NameFor(Address::Ipv4(Ipv4Bytes{127, 77, 0, 1})), "one.test");
}

TEST_F(SyntheticStub, ANameNotAllowedGetsNxdomainAndNoAddress) {
  for (const std::vector<std::string>& labels :
       std::vector<std::vector<std::string>>{{"denied", "test"}, {"example", "com"}, {"other", "org"}}) {
    std::vector<uint8_t> answer = Ask(Query(1, labels));
    ASSERT_FALSE(answer.empty());
    EXPECT_EQ(answer[3] & 0x0f, 3) << "NXDOMAIN";
    EXPECT_EQ(answer[7], 0);
  }
  EXPECT_EQ(names_->size(), 0u);
  EXPECT_EQ(stub_->Summary("--allow-host"), "no network: lookup of denied.test and 2 more refused (--allow-host)");
}

}  // namespace
}  // namespace corral
