#!/usr/bin/env bash
# Fuzzes the approval channel's answer parser (src/gate/approval_protocol_fuzz.cc)
# with libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz_approval.sh [SECONDS] [more libFuzzer flags...]
#
# Builds into build-fuzz-approval/ (FUZZ_OUT overrides; clang++ with
# -fsanitize=fuzzer is required), then runs for SECONDS (default 60) on the
# seeds in src/gate/approval_protocol_fuzz_seeds plus the corpus kept in
# build-fuzz-approval/corpus. A crash or a broken property
# (approval_protocol_fuzz_check.h) aborts and leaves a crash-* file there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$here/build-fuzz-approval}
seconds=${1:-60}
shift || true

command -v clang++ >/dev/null || { echo "fuzz_approval.sh: clang++ not found" >&2; exit 1; }
mkdir -p "$out/corpus"
src="$here/src"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DCORRAL_INVARIANTS=1 -I"$src" \
  "$src/gate/approval_protocol_fuzz.cc" "$src/gate/approval_protocol.cc" "$src/gate/approval.cc" \
  "$src/gate/dangerous_command.cc" "$src/state/session_events.cc" "$src/base/json_bytes.cc" \
  "$src/base/result.cc" "$src/base/invariant.cc" "$src/base/mutant.cc" "$src/policy/mode.cc" \
  "$src/policy/approval_policy.cc" "$src/audit/audit.cc" "$src/base/unique_fd.cc" "$src/base/hex.cc" \
  -o "$out/approval_protocol_fuzz"

cd "$out"
exec ./approval_protocol_fuzz -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 "$@" corpus \
  "$here/src/gate/approval_protocol_fuzz_seeds"
