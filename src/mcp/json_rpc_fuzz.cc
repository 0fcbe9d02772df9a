// libFuzzer harness: one MCP message line through ParseMessage and every
// tool's argument check, keeping json_rpc_fuzz_check.h's property.
// Build and run: scripts/fuzz_mcp.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "mcp/json_rpc_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view line(reinterpret_cast<const char*>(data), size);
  if (std::optional<std::string> broken = corral::testing::CheckMcpLine(line)) {
    std::fprintf(stderr, "mcp fuzz: property broken: %s\n", broken->c_str());
    std::abort();
  }
  return 0;
}
