// libFuzzer harness for the session-log reader. Built by scripts/fuzz.sh
// (clang++ -fsanitize=fuzzer,address,undefined); the library build skips
// files named *_fuzz.cc.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "state/session_log_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (std::optional<std::string> broken = corral::testing::CheckSessionLogReader(text)) {
    std::fprintf(stderr, "session log reader property broken: %s\n", broken->c_str());
    std::abort();
  }
  return 0;
}
