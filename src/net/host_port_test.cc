// The normal form of hosts and ports: names, IPv4, IPv6, and what is refused.
#include "net/host_port.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

using namespace std::literals;

TEST(HostPort, NamesAreLoweredAndLoseATrailingDot) {
  EXPECT_EQ(NormalHostName("Registry.NPMjs.org.").value(), "registry.npmjs.org");
  EXPECT_EQ(NormalHostName("my_host-1").value(), "my_host-1");
  EXPECT_EQ(NormalHostName("10.0.0.255").value(), "10.0.0.255");
  EXPECT_EQ(NormalHostName(std::string(63, 'a') + ".b").value(), std::string(63, 'a') + ".b");
}

TEST(HostPort, BadNamesAreRefused) {
  for (std::string_view bad : std::initializer_list<std::string_view>{"", ".", "a..b", ".a", "a b", "a/b", "a\0b"sv, "\xc3\xa9.com", "127.1", "0x7f.0.0.1",
                               "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "1.2.3.", "example.123"}) {
    EXPECT_FALSE(NormalHostName(bad).ok()) << bad;
  }
  EXPECT_FALSE(NormalHostName(std::string(64, 'a')).ok());
  std::string long_name;
  while (long_name.size() < 254) long_name += "abc.";
  EXPECT_FALSE(NormalHostName(long_name.substr(0, 254)).ok());
}

TEST(HostPort, Ipv6IsWrittenOneWay) {
  EXPECT_EQ(NormalIpv6("0:0:0:0:0:0:0:1").value(), "::1");
  EXPECT_EQ(NormalIpv6("2001:DB8::A").value(), "2001:db8::a");
  EXPECT_EQ(NormalIpv6("::ffff:1.2.3.4").value(), "::ffff:1.2.3.4");
  for (std::string_view bad : std::initializer_list<std::string_view>{"", "::1%eth0", "1:2:3", "::1::", "12345::", "::\0" "1"sv}) {
    EXPECT_FALSE(NormalIpv6(bad).ok()) << bad;
  }
  EXPECT_FALSE(NormalIpv6(std::string(60, ':')).ok());
}

TEST(HostPort, PortsAreOneToFiveDigits) {
  EXPECT_EQ(ParsePort("1").value(), 1);
  EXPECT_EQ(ParsePort("65535").value(), 65535);
  EXPECT_EQ(ParsePort("00080").value(), 80);
  for (std::string_view bad : std::initializer_list<std::string_view>{"", "0", "65536", "99999", "000080", "+80", "-1", " 80", "8 0", "0x50"}) {
    EXPECT_FALSE(ParsePort(bad).ok()) << bad;
  }
}

TEST(HostPort, AuthoritiesSplitIntoHostAndPort) {
  Result<HostPort> plain = ParseAuthority("Example.COM");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->host, "example.com");
  EXPECT_FALSE(plain->port.has_value());
  Result<HostPort> v6 = ParseAuthority("[0::1]:8080");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 8080);
  EXPECT_EQ(ParseAuthority("[::1]")->host, "::1");
  for (std::string_view bad : std::initializer_list<std::string_view>{"", ":80", "host:", "user@host:80", "[::1", "[::1]80", "::1", "a:1:2", "[v.1]:80",
                               "host:80/"}) {
    EXPECT_FALSE(ParseAuthority(bad).ok()) << bad;
  }
}

TEST(HostPort, AddressesAsText) {
  const uint8_t v4[4] = {192, 168, 0, 1};
  EXPECT_EQ(Ipv4Text(v4), "192.168.0.1");
  const uint8_t v6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  EXPECT_EQ(Ipv6Text(v6), "2001:db8::1");
  EXPECT_EQ(AuthorityText("2001:db8::1", 443), "[2001:db8::1]:443");
  EXPECT_EQ(AuthorityText("example.com", 80), "example.com:80");
}

}  // namespace
}  // namespace corral
