// libFuzzer harness: any bytes through ParseHostRule as both kinds,
// checking host_pattern_fuzz_check.h's property: scripts/fuzz_net.sh host_pattern [SECONDS].
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
