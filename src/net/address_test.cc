// ParseAddress, ParseCidr and the canonical text on every form taken and a
// table of forms refused; Contains, Covers and Unmapped at their edges.
#include "net/address.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "testing/refusal_table.h"


namespace corral {
namespace {

Address Parsed(std::string_view text) {
  Result<Address> address = ParseAddress(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.error().message();
  return address.ok() ? *address : Address::Ipv4({0, 0, 0, 0});
}

Cidr ParsedRange(std::string_view text) {
  Result<Cidr> range = ParseCidr(text);
  EXPECT_TRUE(range.ok()) << text << ": " << range.error().message();
  return range.ok() ? *range : Cidr{Address::Ipv4({0, 0, 0, 0}), 0};
}

TEST(Address, AcceptedFormsAndTheirCanonicalText) {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"10.0.0.1", "10.0.0.1"},
      {"0.0.0.0", "0.0.0.0"},
      {"255.255.255.255", "255.255.255.255"},
      {"::", "::"},
      {"::1", "::1"},
      {"FD00::1", "fd00::1"},
      {"2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
      {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},  // the first of two equal runs
      {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},  // one zero group stays
      {"1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"},
      {"::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"},
      {"::ffff:10.0.0.1", "::ffff:10.0.0.1"},
      {"::FFFF:0a00:0001", "::ffff:10.0.0.1"},
      {"64:ff9b::192.0.2.33", "64:ff9b::c000:221"},
      {"fe80:0:0:0:0:0:0:0", "fe80::"},
  };
  for (const auto& [text, canonical] : table) {
    Address address = Parsed(text);
    EXPECT_EQ(address.ToString(), canonical) << text;
    EXPECT_EQ(Parsed(canonical), address) << canonical;
  }
  EXPECT_EQ(Parsed("10.0.0.1").family(), AddressFamily::kIpv4);
  EXPECT_EQ(Parsed("10.0.0.1").bytes().size(), 4u);
  EXPECT_EQ(Parsed("::1").family(), AddressFamily::kIpv6);
  EXPECT_EQ(Parsed("::1").bit_count(), 128);
}

TEST(Address, RefusedForms) {
  const testing::RefusalTable table = {
      {"", "it is empty"},
      {"10.1", "four parts"},
      {"10.0.0.1.2", "four parts"},
      {"010.0.0.1", "without leading zeros"},
      {"0x0a.0.0.1", "without leading zeros"},
      {"256.0.0.1", "0 to 255"},
      {"10.0.0.", "0 to 255"},
      {"-1.0.0.0", "0 to 255"},
      {"1:2:3:4:5:6:7", "eight groups"},
      {"1:2:3:4:5:6:7:8:9", "eight groups"},
      {"1:2:3:4::5:6:7:8", "eight groups"},
      {"1::2::3", "more than one '::'"},
      {"1:::2", "1 to 4 hex digits"},
      {":1:2:3:4:5:6:7", "1 to 4 hex digits"},
      {"12345::", "1 to 4 hex digits"},
      {"g::", "1 to 4 hex digits"},
      {"fe80::1%eth0", "a zone"},
      {"1.2.3.4::", "only at the end"},
      {"::1.2.3.4:5", "only at the end"},
      {"::1.2.3", "four parts"},
      {"[::1]", "1 to 4 hex digits"},
  };
  testing::ExpectRefusals(ParseAddress, table);
  EXPECT_EQ(ParseAddress("a\x1b[1m").error().message().find('\x1b'), std::string::npos) << "quoted printably";
}

TEST(Address, UnmappedGivesTheIpv4OfAMappedAddressOnly) {
  EXPECT_EQ(Unmapped(Parsed("::ffff:10.1.2.3")), Parsed("10.1.2.3"));
  EXPECT_EQ(Unmapped(Parsed("::10.1.2.3")), Parsed("::10.1.2.3"));
  EXPECT_EQ(Unmapped(Parsed("::fffe:10.1.2.3")), Parsed("::fffe:10.1.2.3"));
  EXPECT_EQ(Unmapped(Parsed("10.1.2.3")), Parsed("10.1.2.3"));
}

TEST(Cidr, ParsedWithItsCanonicalText) {
  EXPECT_EQ(ParsedRange("10.1.0.0/16").ToString(), "10.1.0.0/16");
  EXPECT_EQ(ParsedRange("FD00::/8").ToString(), "fd00::/8");
  EXPECT_EQ(ParsedRange("0.0.0.0/0").prefix_length, 0);
  EXPECT_EQ(ParsedRange("::1/128").prefix_length, 128);
  EXPECT_EQ(HostRange(Parsed("10.0.0.1")), ParsedRange("10.0.0.1/32"));
  EXPECT_EQ(HostRange(Parsed("::1")), ParsedRange("::1/128"));
}

TEST(Cidr, RefusedForms) {
  const testing::RefusalTable table = {
      {"10.0.0.0", "not a CIDR range"},
      {"10.0.0.0/", "no prefix length 0 to 32"},
      {"10.0.0.0/33", "no prefix length 0 to 32"},
      {"10.0.0.0/08", "no prefix length"},
      {"10.0.0.0/+8", "no prefix length"},
      {"::/129", "no prefix length 0 to 128"},
      {"10.1.0.1/16", "bits set past its /16 prefix (the range is 10.1.0.0/16)"},
      {"10.0.0.1/31", "(the range is 10.0.0.0/31)"},
      {"fd00::1/8", "(the range is fd00::/8)"},
      {"fd80::/7", "(the range is fc00::/7)"},
      {"10.0.0/8", "four parts"},
  };
  testing::ExpectRefusals(ParseCidr, table);
}

TEST(Cidr, ContainsAndCoversAtTheEdges) {
  Cidr range = ParsedRange("172.16.0.0/12");
  EXPECT_FALSE(range.Contains(Parsed("172.15.255.255")));
  EXPECT_TRUE(range.Contains(Parsed("172.16.0.0")));
  EXPECT_TRUE(range.Contains(Parsed("172.31.255.255")));
  EXPECT_FALSE(range.Contains(Parsed("172.32.0.0")));
  EXPECT_FALSE(range.Contains(Parsed("::ffff:172.16.0.1"))) << "families differ; Unmapped first";
  EXPECT_TRUE(ParsedRange("0.0.0.0/0").Contains(Parsed("1.2.3.4")));
  EXPECT_TRUE(ParsedRange("fe80::/10").Contains(Parsed("febf:ffff::")));
  EXPECT_FALSE(ParsedRange("fe80::/10").Contains(Parsed("fec0::")));
  EXPECT_TRUE(range.Covers(ParsedRange("172.16.4.0/24")));
  EXPECT_TRUE(range.Covers(range));
  EXPECT_FALSE(range.Covers(ParsedRange("172.0.0.0/8")));
  EXPECT_FALSE(range.Covers(ParsedRange("172.32.0.0/16")));
  EXPECT_FALSE((Cidr{Parsed("10.0.0.0"), 33}.Contains(Parsed("10.0.0.0"))));
  EXPECT_FALSE((Cidr{Parsed("10.0.0.0"), -1}.Contains(Parsed("10.0.0.0"))));
}

}  // namespace
}  // namespace corral
