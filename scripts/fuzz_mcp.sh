#!/usr/bin/env bash
# Fuzzes the MCP server's JSON-RPC reader and the tools' argument check
# (src/mcp/json_rpc_fuzz.cc) with libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer.
#
#   scripts/fuzz_mcp.sh [SECONDS] [more libFuzzer flags...]
#
# Builds into build-fuzz-mcp/ (FUZZ_OUT overrides; clang++ with
# -fsanitize=fuzzer is required), then runs for SECONDS (default 60) on the
# seeds in src/mcp/json_rpc_fuzz_seeds plus the corpus kept in
# build-fuzz-mcp/corpus. A crash or a broken property (json_rpc_fuzz_check.h)
# aborts and leaves a crash-* file there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$here/build-fuzz-mcp}
seconds=${1:-60}
shift || true

command -v clang++ >/dev/null || { echo "fuzz_mcp.sh: clang++ not found" >&2; exit 1; }
mkdir -p "$out/corpus"
src="$here/src"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DCORRAL_INVARIANTS=1 -I"$src" \
  "$src/mcp/json_rpc_fuzz.cc" "$src/mcp/json_rpc.cc" "$src/tools/catalog.cc" "$src/base/result.cc" \
  "$src/base/invariant.cc" "$src/base/mutant.cc" "$src/base/unique_fd.cc" \
  -o "$out/mcp_fuzz"

cd "$out"
exec ./mcp_fuzz -max_total_time="$seconds" -max_len=65536 -print_final_stats=1 "$@" corpus \
  "$here/src/mcp/json_rpc_fuzz_seeds"
