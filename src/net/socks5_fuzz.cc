// libFuzzer harness: any bytes through the SOCKS5 greeting and request
// readers, checking socks5_fuzz_check.h's property, split where a hash of
// the bytes says. Build and run: scripts/fuzz_net.sh socks5.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "net/socks5_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  size_t split = corral::testing::SplitFromHash(data, size);
  if (std::optional<std::string> broken =
          corral::testing::CheckSocks5Readers(std::span<const uint8_t>(data, size), split)) {
    std::fprintf(stderr, "socks5 fuzz: property broken: %s\n", broken->c_str());
    std::abort();
  }
  return 0;
}
