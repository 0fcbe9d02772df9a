// libFuzzer harness: one approval channel answer line through
// ParseApprovalAnswer, checking approval_protocol_fuzz_check.h's property.
// Build and run: scripts/fuzz_approval.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "gate/approval_protocol_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  if (std::optional<std::string> broken = corral::testing::CheckApprovalAnswerParser(line)) {
    std::fprintf(stderr, "approval protocol fuzz: property broken: %s\n", broken->c_str());
    std::abort();
  }
  return 0;
}
