// libFuzzer harness: any bytes through ReadHttpHead and UpstreamHead,
// checking http_head_fuzz_check.h's property, split where a hash of the
// bytes says. Build and run: scripts/fuzz_net.sh http_head.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "net/http_head_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t split = corral::testing::SplitFromHash(data, size);
  if (std::optional<std::string> broken =
          corral::testing::CheckHttpHeadReader(std::span<const uint8_t>(data, size), split)) {
    std::fprintf(stderr, "http head fuzz: property broken: %s\n", broken->c_str());
    std::abort();
  }
  return 0;
}
