#include "policy/tmpfs_size.h"

#include <gtest/gtest.h>

namespace corral {
namespace {

TEST(TmpfsSize, ParsesUnits) {
  EXPECT_EQ(ParseTmpfsSize("1g").value(), 1024ull * 1024 * 1024);
  EXPECT_EQ(ParseTmpfsSize("1G").value(), 1024ull * 1024 * 1024);
  EXPECT_EQ(ParseTmpfsSize("512m").value(), 512ull * 1024 * 1024);
  EXPECT_EQ(ParseTmpfsSize("8192k").value(), 8ull * 1024 * 1024);
  EXPECT_EQ(ParseTmpfsSize("1t").value(), 1024ull * 1024 * 1024 * 1024);
  EXPECT_EQ(ParseTmpfsSize("4194304").value(), 4ull * 1024 * 1024);
}

TEST(TmpfsSize, RefusesWhatIsNotASizeInRange) {
  for (const char* text : {"", "g", "1.5g", "-1g", "1gb", "0", "1m", "3m", "2t", "99999999999999g", "1 g", "0x10m"}) {
    Result<uint64_t> size = ParseTmpfsSize(text);
    EXPECT_FALSE(size.ok()) << text;
    if (!size.ok()) {
      EXPECT_EQ(size.error().kind(), ErrorKind::kUsage) << text;
    }
  }
}

TEST(TmpfsSize, TextReadsBack) {
  for (uint64_t bytes : {kDefaultTmpfsSize, kMinTmpfsSize, kMaxTmpfsSize, 1536 * kMiB, 5000 * kMiB + 1024,
                         4 * kMiB + 1}) {
    EXPECT_EQ(ParseTmpfsSize(TmpfsSizeText(bytes)).value(), bytes) << TmpfsSizeText(bytes);
  }
  EXPECT_EQ(TmpfsSizeText(kDefaultTmpfsSize), "1g");
  EXPECT_EQ(TmpfsSizeText(1536 * kMiB), "1536m");
}

TEST(TmpfsSize, OptionsCapSizeAndInodes) {
  EXPECT_EQ(TmpfsOptions(kDefaultTmpfsSize, "1777"), "mode=1777,size=1073741824,nr_inodes=131072");
  EXPECT_EQ(ShmTmpfsOptions(kDefaultTmpfsSize, "1777"), "mode=1777,size=268435456,nr_inodes=32768");
}

}  // namespace
}  // namespace corral
