// ParseDnsQuery on queries as stub resolvers send them and on every way a
// message can be malformed; NxdomainAnswer byte for byte.
#include "net/dns_message.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace corral {
namespace {

// A query for `labels` (already length-prefixed), type A, class IN.
std::vector<uint8_t> Query(const std::vector<std::string>& labels, uint16_t flags = 0x0100, uint16_t arcount = 0) {
  std::vector<uint8_t> bytes = {0x12, 0x34, static_cast<uint8_t>(flags >> 8), static_cast<uint8_t>(flags), 0, 1,
                                0,    0,    0,    0,    static_cast<uint8_t>(arcount >> 8),
                                static_cast<uint8_t>(arcount)};
  for (const std::string& label : labels) {
    bytes.push_back(static_cast<uint8_t>(label.size()));
    bytes.insert(bytes.end(), label.begin(), label.end());
  }
  bytes.insert(bytes.end(), {0, 0, 1, 0, 1});
  return bytes;
}

TEST(DnsMessage, AGlibcQueryIsRead) {
  std::vector<uint8_t> bytes = Query({"registry", "npmjs", "org"});
  Result<DnsQuery> query = ParseDnsQuery(bytes);
  ASSERT_TRUE(query.ok()) << query.error().ToString();
  EXPECT_EQ(query->id, 0x1234);
  EXPECT_TRUE(query->recursion_desired);
  EXPECT_EQ(query->name, "registry.npmjs.org");
  EXPECT_EQ(query->type, 1);
  EXPECT_EQ(query->klass, 1);
  EXPECT_EQ(query->question, std::vector<uint8_t>(bytes.begin() + 12, bytes.end()));
}

TEST(DnsMessage, AnEdnsOptRecordAfterTheQuestionIsAllowed) {
  std::vector<uint8_t> bytes = Query({"example", "com"}, 0x0100, 1);
  bytes.insert(bytes.end(), {0, 0, 41, 0x10, 0, 0, 0, 0, 0, 0, 0});
  Result<DnsQuery> query = ParseDnsQuery(bytes);
  ASSERT_TRUE(query.ok()) << query.error().ToString();
  EXPECT_EQ(query->name, "example.com");
  EXPECT_EQ(query->question.size(), 13u + 4u);
}

TEST(DnsMessage, OddBytesInANameAreEscaped) {
  Result<DnsQuery> query = ParseDnsQuery(Query({std::string("a.b\x1b", 4), "x_y-z"}));
  ASSERT_TRUE(query.ok()) << query.error().ToString();
  EXPECT_EQ(query->name, "a\\046b\\027.x_y-z");
  Result<DnsQuery> root = ParseDnsQuery(Query({}));
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->name, ".");
}

TEST(DnsMessage, MalformedQueriesAreRefused) {
  std::vector<uint8_t> good = Query({"example", "com"});
  auto refused = [](std::vector<uint8_t> bytes, const std::string& why) {
    Result<DnsQuery> query = ParseDnsQuery(bytes);
    ASSERT_FALSE(query.ok()) << why;
    EXPECT_NE(query.error().message().find(why), std::string::npos) << query.error().message();
  };
  refused({}, "shorter than its 12-byte header");
  refused(std::vector<uint8_t>(good.begin(), good.begin() + 11), "shorter than its 12-byte header");
  refused(Query({"example"}, 0x8100), "a response");
  refused(Query({"example"}, 0x2900), "opcode 5");
  // `good` with one byte changed.
  auto with = [&good](size_t at, uint8_t value) {
    std::vector<uint8_t> bytes = good;
    bytes[at] = value;
    return bytes;
  };
  refused(with(5, 2), "2 questions");
  refused(with(5, 0), "0 questions");
  refused(with(7, 1), "answer or authority");
  refused(with(9, 1), "answer or authority");
  refused(Query({"example"}, 0x0100, 2), "more than one additional");
  refused(with(12, 0xc0), "compression pointer");
  refused(with(12, 0x41), "extended label");
  refused(std::vector<uint8_t>(good.begin(), good.begin() + 16), "runs past the end");
  refused(std::vector<uint8_t>(good.begin(), good.end() - 5), "runs past the end");
  refused(std::vector<uint8_t>(good.begin(), good.end() - 1), "no type and class");
  std::vector<uint8_t> trailing = good;
  trailing.push_back(0);
  refused(trailing, "bytes after the question");
  refused(Query(std::vector<std::string>(5, std::string(63, 'a'))), "longer than 255");
  refused(std::vector<uint8_t>(kDnsMaxMessage + 1, 0), "longer than 65535");
}

TEST(DnsMessage, ANameOf255BytesIsTheLongestRead) {
  // 3 labels of 63 and one of 61: 4 + 63 * 3 + 61 + the root's 0 = 255.
  std::vector<std::string> labels(3, std::string(63, 'a'));
  labels.push_back(std::string(61, 'b'));
  EXPECT_TRUE(ParseDnsQuery(Query(labels)).ok());
  labels.back().push_back('b');
  EXPECT_FALSE(ParseDnsQuery(Query(labels)).ok());
}

TEST(DnsMessage, TheAnswerIsNxdomainWithTheQuestionEchoed) {
  std::vector<uint8_t> bytes = Query({"example", "com"});
  Result<DnsQuery> query = ParseDnsQuery(bytes);
  ASSERT_TRUE(query.ok());
  std::vector<uint8_t> want = {0x12, 0x34, 0x81, 0x83, 0, 1, 0, 0, 0, 0, 0, 0};
  want.insert(want.end(), bytes.begin() + 12, bytes.end());
  EXPECT_EQ(NxdomainAnswer(*query), want);
  Result<DnsQuery> plain = ParseDnsQuery(Query({"example", "com"}, 0x0000));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(NxdomainAnswer(*plain)[2], 0x80) << "RD is echoed as asked";
}

}  // namespace
}  // namespace corral
