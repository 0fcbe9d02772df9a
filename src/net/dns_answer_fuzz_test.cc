// A deterministic, small-scale version of dns_answer_fuzz.cc: every seed in
// dns_answer_fuzz_seeds/, then thousands of mutations of them, through the
// DNS answer reader's property.
#include <arpa/nameser.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "net/dns_answer_fuzz_check.h"
#include "testing/fuzz_seeds.h"
#include "testing/source_dir.h"

namespace corral {
namespace {

std::vector<std::vector<uint8_t>> Seeds() { return testing::ReadFuzzSeeds("src/net/dns_answer_fuzz_seeds"); }

TEST(DnsAnswerFuzz, EverySeedKeepsTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = Seeds();
  ASSERT_GE(seeds.size(), 10u);
  size_t with_addresses = 0;
  for (const std::vector<uint8_t>& seed : seeds) {
    std::optional<std::string> broken = testing::CheckDnsAnswerReader(seed);
    EXPECT_FALSE(broken.has_value()) << broken.value_or("");
    std::vector<Address> found;
    AddressesInDnsAnswer(seed, "v4.corral.test", ns_t_a, found);
    with_addresses += !found.empty();
  }
  EXPECT_GE(with_addresses, 5u) << "the seeds hold answers with addresses";
}

// What the reader makes of the seeds: each names its case.
TEST(AddressesInDnsAnswer, ReadsEachSeedAsItsNameSays) {
  auto read = [](const std::string& seed, int type, DnsAnswerEnd want) {
    std::ifstream in(testing::SourceDir() / "src/net/dns_answer_fuzz_seeds" / seed, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_FALSE(bytes.empty()) << seed;
    std::vector<Address> found;
    EXPECT_EQ(AddressesInDnsAnswer(bytes, "v4.corral.test", type, found), want) << seed;
    std::vector<std::string> text;
    for (const Address& address : found) text.push_back(address.ToString());
    return text;
  };
  using Names = std::vector<std::string>;
  EXPECT_EQ(read("a_three", ns_t_a, DnsAnswerEnd::kAnswered), (Names{"192.0.2.1", "192.0.2.2"}));
  EXPECT_EQ(read("a_three", ns_t_aaaa, DnsAnswerEnd::kAnswered), Names{});
  EXPECT_EQ(read("aaaa_one", ns_t_aaaa, DnsAnswerEnd::kAnswered), Names{"2001:db8::1"});
  EXPECT_EQ(read("cname_then_a", ns_t_a, DnsAnswerEnd::kAnswered), Names{"192.0.2.9"});
  EXPECT_EQ(read("stray_owner", ns_t_a, DnsAnswerEnd::kAnswered), Names{"192.0.2.7"});
  EXPECT_EQ(read("upper_case_owner", ns_t_a, DnsAnswerEnd::kAnswered), Names{"192.0.2.8"});
  EXPECT_EQ(read("nxdomain", ns_t_a, DnsAnswerEnd::kNoSuchName), Names{});
  EXPECT_EQ(read("servfail", ns_t_a, DnsAnswerEnd::kNoData), Names{}) << "a failure's records are not read";
  EXPECT_EQ(read("truncated_empty", ns_t_a, DnsAnswerEnd::kAnswered), Names{});
  EXPECT_EQ(read("bad_rdlen", ns_t_a, DnsAnswerEnd::kAnswered), Names{});
  EXPECT_EQ(read("pointer_loop", ns_t_a, DnsAnswerEnd::kAnswered), Names{});
  EXPECT_EQ(read("chi_class", ns_t_a, DnsAnswerEnd::kAnswered), Names{});
  EXPECT_EQ(read("count_beyond_end", ns_t_a, DnsAnswerEnd::kNoData), Names{}) << "counts past the end: not parsed";
  EXPECT_EQ(read("forty", ns_t_a, DnsAnswerEnd::kAnswered).size(), 40u);
  EXPECT_EQ(read("a_three", ns_t_mx, DnsAnswerEnd::kNoData), Names{}) << "only A and AAAA are read";
}

TEST(DnsAnswerFuzz, MutatedSeedsKeepTheProperty) {
  std::vector<std::vector<uint8_t>> seeds = Seeds();
  ASSERT_FALSE(seeds.empty());
  std::mt19937_64 rng(97);
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint8_t> bytes = testing::MutatedSeed(seeds, rng);
    std::optional<std::string> broken = testing::CheckDnsAnswerReader(bytes);
    ASSERT_FALSE(broken.has_value()) << broken.value_or("");
  }
}

}  // namespace
}  // namespace corral
