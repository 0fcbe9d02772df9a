// libFuzzer harness: TOML text through the config and profile parsers (the
// same ParseConfigText / MergeConfigLayers / ParseProfileText path LoadConfig
// uses). Any contract violation aborts, so libFuzzer keeps the input.
// Build and run: scripts/fuzz_config.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "config/config_fuzz_target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::optional<std::string> violation = corral::config_fuzzing::ExerciseConfigParsers(text);
  if (violation) {
    std::fprintf(stderr, "config fuzz: contract violated: %s\n", violation->c_str());
    std::abort();
  }
  return 0;
}
