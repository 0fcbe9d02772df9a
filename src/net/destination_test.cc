// ClassifyAddress on both sides of every special range's edges and on each
// form that carries an IPv4 address; the sentences; CheckDestination with
// and without --allow-private; ParseAllowedPrivateRange's table;
// CarriedIpv4Ranges on ranges covering, inside and beside those forms.
#include "net/destination.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "testing/refusal_table.h"

namespace corral {
namespace {

using R = AddressRange;

Address Parsed(std::string_view text) {
  Result<Address> address = ParseAddress(text);
  EXPECT_TRUE(address.ok()) << text << ": " << address.error().message();
  return address.ok() ? *address : Address::Ipv4({});
}

Cidr ParsedRange(std::string_view text) {
  Result<Cidr> range = ParseCidr(text);
  EXPECT_TRUE(range.ok()) << text << ": " << range.error().message();
  return range.ok() ? *range : Cidr{Address::Ipv4({}), 32};
}

void ExpectRanges(const std::vector<std::pair<std::string, AddressRange>>& table) {
  for (const auto& [text, range] : table) {
    Address address = Parsed(text);
    Classification classification = ClassifyAddress(address);
    EXPECT_EQ(classification.range, range) << DescribeClassification(address, classification);
  }
}

TEST(Destination, Ipv4RangesAndTheirEdges) {
  ExpectRanges({
      {"0.0.0.0", R::kUnspecified},          {"0.255.255.255", R::kUnspecified},  {"1.0.0.0", R::kPublic},
      {"126.255.255.255", R::kPublic},       {"127.0.0.0", R::kLoopback},         {"127.255.255.255", R::kLoopback},
      {"128.0.0.0", R::kPublic},             {"9.255.255.255", R::kPublic},       {"10.0.0.0", R::kPrivate},
      {"10.255.255.255", R::kPrivate},       {"11.0.0.0", R::kPublic},            {"172.15.255.255", R::kPublic},
      {"172.16.0.0", R::kPrivate},           {"172.31.255.255", R::kPrivate},     {"172.32.0.0", R::kPublic},
      {"192.167.255.255", R::kPublic},       {"192.168.0.0", R::kPrivate},        {"192.168.255.255", R::kPrivate},
      {"192.169.0.0", R::kPublic},           {"169.253.255.255", R::kPublic},     {"169.254.0.0", R::kLinkLocal},
      {"169.254.169.253", R::kLinkLocal},    {"169.254.169.254", R::kCloudMetadata},
      {"169.254.169.255", R::kLinkLocal},    {"169.254.255.255", R::kLinkLocal},  {"169.255.0.0", R::kPublic},
      {"100.63.255.255", R::kPublic},        {"100.64.0.0", R::kSharedAddressSpace},
      {"100.127.255.255", R::kSharedAddressSpace},                                {"100.128.0.0", R::kPublic},
      {"100.100.100.199", R::kSharedAddressSpace},                                {"100.100.100.200", R::kCloudMetadata},
      {"100.100.100.201", R::kSharedAddressSpace},                                {"223.255.255.255", R::kPublic},
      {"224.0.0.0", R::kMulticast},          {"239.255.255.255", R::kMulticast},  {"240.0.0.0", R::kReserved},
      {"255.255.255.254", R::kReserved},     {"255.255.255.255", R::kReserved},   {"198.17.255.255", R::kPublic},
      {"198.18.0.0", R::kBenchmarking},      {"198.19.255.255", R::kBenchmarking},
      {"198.20.0.0", R::kPublic},            {"191.255.255.255", R::kPublic},     {"192.0.0.0", R::kProtocolAssignments},
      {"192.0.0.255", R::kProtocolAssignments},                                   {"192.0.1.0", R::kPublic},
      {"192.0.1.255", R::kPublic},           {"192.0.2.0", R::kDocumentation},    {"192.0.2.255", R::kDocumentation},
      {"192.0.3.0", R::kPublic},             {"198.51.99.255", R::kPublic},       {"198.51.100.0", R::kDocumentation},
      {"198.51.100.255", R::kDocumentation}, {"198.51.101.0", R::kPublic},        {"203.0.112.255", R::kPublic},
      {"203.0.113.0", R::kDocumentation},    {"203.0.113.255", R::kDocumentation},
      {"203.0.114.0", R::kPublic},           {"8.8.8.8", R::kPublic},             {"1.1.1.1", R::kPublic},
  });
}

TEST(Destination, Ipv6RangesAndTheirEdges) {
  ExpectRanges({
      {"::", R::kUnspecified},
      {"::1", R::kLoopback},
      {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kReserved},
      {"fc00::", R::kPrivate},
      {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kPrivate},
      {"fe00::", R::kReserved},
      {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kReserved},
      {"fe80::", R::kLinkLocal},
      {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kLinkLocal},
      {"fec0::", R::kSiteLocal},
      {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kSiteLocal},
      {"ff00::", R::kMulticast},
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kMulticast},
      {"fd00:ec2::253", R::kPrivate},
      {"fd00:ec2::254", R::kCloudMetadata},
      {"fd00:ec2::255", R::kPrivate},
      {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", R::kPublic},
      {"2001:db8::", R::kDocumentation},
      {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", R::kDocumentation},
      {"2001:db9::", R::kPublic},
      {"2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kPublic},
      {"2001::", R::kTeredo},
      {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", R::kTeredo},
      {"2001:1::", R::kPublic},
      {"2001:1:ffff:ffff:ffff:ffff:ffff:ffff", R::kPublic},
      {"2001:2::", R::kBenchmarking},
      {"2001:2:0:ffff:ffff:ffff:ffff:ffff", R::kBenchmarking},
      {"2001:2:1::", R::kPublic},
      {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kPublic},
      {"3fff::", R::kDocumentation},
      {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", R::kDocumentation},
      {"3fff:1000::", R::kPublic},
      {"2606:4700:4700::1111", R::kPublic},
      {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kReserved},
      {"2000::", R::kPublic},
      {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kPublic},
      {"4000::", R::kReserved},
      {"100::", R::kReserved},
      {"::1:0:0:0", R::kReserved},
  });
}

TEST(Destination, AnIpv6AddressCarryingIpv4IsJudgedByIt) {
  struct Row {
    std::string text;
    AddressRange range;
    Embedding embedding;
    std::string carried;
  };
  const std::vector<Row> table = {
      {"::fffe:ffff:ffff", R::kReserved, Embedding::kNone, ""},
      {"::ffff:0:0", R::kUnspecified, Embedding::kIpv4Mapped, "0.0.0.0"},
      {"::ffff:8.8.8.8", R::kPublic, Embedding::kIpv4Mapped, "8.8.8.8"},
      {"::ffff:10.0.0.1", R::kPrivate, Embedding::kIpv4Mapped, "10.0.0.1"},
      {"::ffff:169.254.169.254", R::kCloudMetadata, Embedding::kIpv4Mapped, "169.254.169.254"},
      {"::ffff:255.255.255.255", R::kReserved, Embedding::kIpv4Mapped, "255.255.255.255"},
      {"::1:0:0", R::kReserved, Embedding::kNone, ""},
      {"::2", R::kUnspecified, Embedding::kIpv4Compatible, "0.0.0.2"},
      {"::8.8.8.8", R::kPublic, Embedding::kIpv4Compatible, "8.8.8.8"},
      {"::127.0.0.1", R::kLoopback, Embedding::kIpv4Compatible, "127.0.0.1"},
      {"::ffff:ffff", R::kReserved, Embedding::kIpv4Compatible, "255.255.255.255"},
      {"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", R::kReserved, Embedding::kNone, ""},
      {"64:ff9b::8.8.8.8", R::kPublic, Embedding::kNat64, "8.8.8.8"},
      {"64:ff9b::a9fe:a9fe", R::kCloudMetadata, Embedding::kNat64, "169.254.169.254"},
      {"64:ff9b::10.0.0.1", R::kPrivate, Embedding::kNat64, "10.0.0.1"},
      {"64:ff9b::1:0:0", R::kReserved, Embedding::kNone, ""},
      {"64:ff9b:1::8.8.8.8", R::kPublic, Embedding::kNat64, "8.8.8.8"},
      {"64:ff9b:1::192.168.0.1", R::kPrivate, Embedding::kNat64, "192.168.0.1"},
      {"64:ff9b:1:0:0:1::", R::kUnreadNat64, Embedding::kNone, ""},
      {"64:ff9b:1:a00:1::", R::kUnreadNat64, Embedding::kNone, ""},
      {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", R::kUnreadNat64, Embedding::kNone, ""},
      {"64:ff9b:2::", R::kReserved, Embedding::kNone, ""},
      {"2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", R::kPublic, Embedding::kNone, ""},
      {"2002:808:808::", R::kPublic, Embedding::kSixToFour, "8.8.8.8"},
      {"2002:7f00:1::1", R::kLoopback, Embedding::kSixToFour, "127.0.0.1"},
      {"2002:a9fe:a9fe:ffff:ffff:ffff:ffff:ffff", R::kCloudMetadata, Embedding::kSixToFour, "169.254.169.254"},
      {"2002::", R::kUnspecified, Embedding::kSixToFour, "0.0.0.0"},
      {"2003::", R::kPublic, Embedding::kNone, ""},
  };
  for (const Row& row : table) {
    Classification classification = ClassifyAddress(Parsed(row.text));
    EXPECT_EQ(classification.range, row.range) << row.text;
    EXPECT_EQ(classification.embedding, row.embedding) << row.text;
    EXPECT_EQ(classification.embedded ? classification.embedded->ToString() : "", row.carried) << row.text;
  }
}

TEST(Destination, AnIpv6RangeCarriesTheIpv4RangesOfThePrefixesItOverlaps) {
  auto carried = [](std::string_view text) {
    std::string out;
    for (const CarriedRange& range : CarriedIpv4Ranges(ParsedRange(text))) {
      out += (out.empty() ? "" : "; ") + std::string(EmbeddingName(range.embedding)) + " " +
             range.carrier.ToString() + " @" + std::to_string(range.ipv4_offset) + " " +
             (range.ipv4 ? range.ipv4->ToString() : "unread");
    }
    return out;
  };
  const std::vector<std::pair<std::string, std::string>> table = {
      {"2002:a00::/24", "6to4 2002::/16 @16 10.0.0.0/8"},
      {"2002:102:304:5::/64", "6to4 2002::/16 @16 1.2.3.4/32"},
      {"2002::/15", "6to4 2002::/16 @16 0.0.0.0/0"},
      {"64:ff9b::/96", "NAT64 64:ff9b::/96 @96 0.0.0.0/0"},
      {"64:ff9b::a9fe:a9fe/128", "NAT64 64:ff9b::/96 @96 169.254.169.254/32"},
      {"64:ff9b::a00:0/103", "NAT64 64:ff9b::/96 @96 10.0.0.0/7"},
      {"::ffff:0:0/96", "IPv4-mapped ::ffff:0.0.0.0/96 @96 0.0.0.0/0"},
      {"::a00:0/104", "IPv4-compatible ::/96 @96 10.0.0.0/8"},
      {"::/16", "IPv4-mapped ::ffff:0.0.0.0/96 @96 0.0.0.0/0; IPv4-compatible ::/96 @96 0.0.0.0/0"},
      {"64:ff9b:1::102:300/120", "NAT64 64:ff9b:1::/96 @96 1.2.3.0/24; NAT64 64:ff9b:1::/48 @0 unread"},
      {"64:ff9b:1:a00::/64", "NAT64 64:ff9b:1::/48 @0 unread"},
      {"64::/16", "NAT64 64:ff9b::/96 @96 0.0.0.0/0; NAT64 64:ff9b:1::/96 @96 0.0.0.0/0; NAT64 64:ff9b:1::/48 @0 unread"},
      // Overlapping no prefix that carries IPv4.
      {"10.0.0.0/8", ""},
      {"0.0.0.0/0", ""},
      {"fd00::/16", ""},
      {"64:ff9b::1:0:0/96", ""},
      {"2003::/16", ""},
      {"2001::/32", ""},
      {"::1:0:0/96", ""},
  };
  for (const auto& [text, want] : table) {
    EXPECT_EQ(carried(text), want) << text;
  }
}

TEST(Destination, TheSentenceNamesTheAddressAndTheRange) {
  auto sentence = [](std::string_view text) {
    Address address = Parsed(text);
    return DescribeClassification(address, ClassifyAddress(address));
  };
  EXPECT_EQ(sentence("169.254.169.254"), "169.254.169.254 is the cloud metadata address");
  EXPECT_EQ(sentence("10.0.0.5"), "10.0.0.5 is a private address (10.0.0.0/8)");
  EXPECT_EQ(sentence("8.8.8.8"), "8.8.8.8 is a public address");
  EXPECT_EQ(sentence("::FFFF:10.0.0.5"), "::ffff:10.0.0.5 carries 10.0.0.5 (IPv4-mapped), a private address (10.0.0.0/8)");
  EXPECT_EQ(sentence("2002:a9fe:a9fe::1"), "2002:a9fe:a9fe::1 carries 169.254.169.254 (6to4), the cloud metadata address");
  EXPECT_EQ(sentence("2001::1"), "2001::1 is a Teredo address (2001::/32), refused outright");
  EXPECT_EQ(sentence("fe80::1"), "fe80::1 is a link-local address (fe80::/10)");
}

std::string Refusal(std::string_view text, const std::vector<Cidr>& allowed) {
  Result<void> checked = CheckDestination(Parsed(text), allowed);
  if (checked.ok()) return "";
  EXPECT_EQ(checked.error().kind(), ErrorKind::kDenied);
  return checked.error().message();
}

TEST(Destination, OnlyPublicAddressesPassByDefault) {
  EXPECT_EQ(Refusal("8.8.8.8", {}), "");
  EXPECT_EQ(Refusal("2606:4700:4700::1111", {}), "");
  EXPECT_EQ(Refusal("::ffff:8.8.8.8", {}), "");
  EXPECT_EQ(Refusal("10.0.0.5", {}),
            "destination 10.0.0.5 is a private address (10.0.0.0/8); --allow-private 10.0.0.5/32 would let it through");
  EXPECT_EQ(Refusal("169.254.169.254", {}),
            "destination 169.254.169.254 is the cloud metadata address; refused even under --allow-private unless "
            "it names 169.254.169.254/32 alone");
  EXPECT_NE(Refusal("127.0.0.1", {}).find("a loopback address (127.0.0.0/8)"), std::string::npos);
  EXPECT_NE(Refusal("::1", {}).find("a loopback address (::1/128)"), std::string::npos);
  EXPECT_NE(Refusal("64:ff9b::7f00:1", {}).find("carries 127.0.0.1 (NAT64), a loopback address (127.0.0.0/8); "
                                                "--allow-private 127.0.0.1/32 would"),
            std::string::npos);
}

TEST(Destination, AnAllowedPrivateRangeLetsItsAddressesThrough) {
  std::vector<Cidr> lan = {ParsedRange("10.0.0.0/24")};
  EXPECT_EQ(Refusal("10.0.0.5", lan), "");
  EXPECT_NE(Refusal("10.0.1.5", lan), "");
  EXPECT_EQ(Refusal("::ffff:10.0.0.5", lan), "") << "judged by the IPv4 address it carries";
  EXPECT_EQ(Refusal("64:ff9b::10.0.0.5", lan), "");
  EXPECT_EQ(Refusal("2002:a00:5::", lan), "");
  EXPECT_EQ(Refusal("2001:db8::1", {ParsedRange("2001:db8::/32")}), "");
  EXPECT_NE(Refusal("2001:db8::1", lan), "");
}

TEST(Destination, MetadataNeedsARangeNamingItAlone) {
  std::vector<Cidr> link_local = {ParsedRange("169.254.0.0/16")};
  EXPECT_EQ(Refusal("169.254.1.1", link_local), "");
  EXPECT_NE(Refusal("169.254.169.254", link_local).find("unless it names 169.254.169.254/32 alone"), std::string::npos);
  std::vector<Cidr> metadata = {ParsedRange("169.254.169.254/32")};
  EXPECT_EQ(Refusal("169.254.169.254", metadata), "");
  EXPECT_EQ(Refusal("::ffff:169.254.169.254", metadata), "");
  EXPECT_NE(Refusal("169.254.1.1", metadata), "");
  EXPECT_NE(Refusal("100.100.100.200", {ParsedRange("100.64.0.0/10")}), "");
  EXPECT_EQ(Refusal("100.100.100.200", {ParsedRange("100.100.100.200/32")}), "");
  EXPECT_NE(Refusal("fd00:ec2::254", {ParsedRange("fd00::/8")}).find("unless it names fd00:ec2::254/128 alone"),
            std::string::npos);
  EXPECT_EQ(Refusal("fd00:ec2::254", {ParsedRange("fd00:ec2::254/128")}), "");
}

TEST(Destination, TeredoAndUnreadNat64AreRefusedEvenWhenCovered) {
  EXPECT_EQ(Refusal("2001::1", {ParsedRange("2001::/32")}), "destination 2001::1 is a Teredo address (2001::/32), refused outright");
  EXPECT_NE(Refusal("64:ff9b:1:a00:1::", {ParsedRange("64:ff9b:1::/48")}), "");
}

// An unspecified address is one Linux connects to this host by (0.0.0.0
// reaches a service on 127.0.0.1): refused even under a range that covers
// it (egress_unspecified), in every form that carries it.
TEST(Destination, UnspecifiedAddressesAreRefusedEvenWhenCovered) {
  EXPECT_EQ(Refusal("0.0.0.0", {ParsedRange("0.0.0.0/8")}),
            "destination 0.0.0.0 is an unspecified address (0.0.0.0/8), refused outright");
  EXPECT_NE(Refusal("0.1.2.3", {ParsedRange("0.0.0.0/8")}), "");
  EXPECT_NE(Refusal("::", {ParsedRange("::/128")}), "");
  EXPECT_NE(Refusal("::ffff:0.0.0.0", {ParsedRange("0.0.0.0/8")}), "");
}

TEST(AllowedPrivateRange, InsideOneNonPublicRowOnly) {
  for (const char* text : {"10.0.0.0/8", "192.168.1.7/32", "169.254.169.254/32", "169.254.0.0/16", "172.16.0.0/12",
                           "127.0.0.0/8", "100.64.0.0/10", "240.0.0.0/4", "fd00::/8", "::1/128", "fe80::/10",
                           "2001:db8::/32"}) {
    Result<Cidr> range = ParseAllowedPrivateRange(text);
    EXPECT_TRUE(range.ok()) << text << ": " << range.error().message();
    if (range.ok()) {
      EXPECT_EQ(range->ToString(), text);
    }
  }
  const testing::RefusalTable refused = {
      {"8.8.8.0/24", "--allow-private 8.8.8.0/24: 8.8.8.0/24 is not inside one private or other special range"},
      {"0.0.0.0/0", "0.0.0.0/0 is not inside one private"},
      {"10.0.0.0/7", "is not inside one private"},
      {"192.0.0.0/23", "is not inside one private"},
      {"::/0", "is not inside one private"},
      {"::ffff:10.0.0.0/104", "carry IPv4 addresses (IPv4-mapped) and are judged by them; allow the IPv4 range"},
      {"64:ff9b::/96", "(NAT64)"},
      {"2002::/16", "(6to4)"},
      {"::/96", "(IPv4-compatible)"},
      {"2001::/32", "it lies in 2001::/32 (a Teredo address), refused outright"},
      {"0.0.0.0/32", "it lies in 0.0.0.0/8 (an unspecified address), refused outright"},
      {"0.0.0.0/8", "refused outright"},
      {"::/128", "it lies in ::/128 (an unspecified address), refused outright"},
      {"64:ff9b:1::/48", "local-use NAT64"},
      {"10.0.0.1/8", "--allow-private 10.0.0.1/8: '10.0.0.1/8' has bits set past its /8 prefix"},
      {"10.0.0.5", "not a CIDR range"},
  };
  testing::ExpectRefusals(ParseAllowedPrivateRange, refused);
}

}  // namespace
}  // namespace corral
