// libFuzzer harness: any bytes through ParseHostRule as both kinds,
// checking host_pattern_fuzz_check.h's property. Build and run from the
// tree's top (clang++ with -fsanitize=fuzzer is required):
//   clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Isrc src/net/host_pattern_fuzz.cc \
//     src/net/host_pattern.cc src/net/address.cc src/net/public_suffix.cc src/net/user_text.cc \
//     src/base/result.cc -o host_pattern_fuzz && ./host_pattern_fuzz -max_total_time=60 -max_len=512
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "net/host_pattern_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (corral::HostRuleKind kind : {corral::HostRuleKind::kAllow, corral::HostRuleKind::kDeny}) {
    if (std::optional<std::string> broken = corral::testing::CheckHostRuleReader(text, kind)) {
      std::fprintf(stderr, "host rule fuzz: property broken: %s\n", broken->c_str());
      std::abort();
    }
  }
  return 0;
}
