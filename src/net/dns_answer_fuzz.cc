// libFuzzer harness: any bytes through AddressesInDnsAnswer, checking
// dns_answer_fuzz_check.h's property. Build and run:
// scripts/fuzz_net.sh dns_answer.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "net/dns_answer_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (std::optional<std::string> broken = corral::testing::CheckDnsAnswerReader(std::span<const uint8_t>(data, size))) {
    std::fprintf(stderr, "dns answer fuzz: property broken: %s\n", broken->c_str());
    std::abort();
  }
  return 0;
}
