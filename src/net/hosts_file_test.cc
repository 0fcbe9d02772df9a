#include "net/hosts_file.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace corral
