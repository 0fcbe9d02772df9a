#!/usr/bin/env bash
# Builds and runs the libFuzzer harness for the session-log reader.
#
#   scripts/fuzz.sh [SECONDS] [libFuzzer flags...]     default 60 seconds
#
# Needs clang++ with the libFuzzer runtime (Debian: clang, libclang-rt-dev or
# the llvm toolchain's compiler-rt). Output goes to build-fuzz/ (FUZZ_OUT
# overrides): the binary, the corpus it grows, and any crash-* inputs.
# The harness checks session_log_fuzz_check.h's property; a crash or a
# broken property aborts and leaves the input in build-fuzz/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$here/build-fuzz}
seconds=${1:-60}
shift || true

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found" >&2; exit 1; }
mkdir -p "$out/corpus/session_log"

src="$here/src"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DCORRAL_INVARIANTS=1 -I"$src" \
  "$src/state/session_log_fuzz.cc" "$src/state/session_events.cc" \
  "$src/base/result.cc" \
  "$src/base/invariant.cc" "$src/policy/mode.cc" \
  -o "$out/session_log_fuzz"

# Seed the corpus with well-formed logs the first time.
corpus="$out/corpus/session_log"
if [ -z "$(ls -A "$corpus")" ]; then
  printf '%s\n' '{"v":1,"type":"session/start","ts":"2026-01-01T00:00:00.000000Z","data":{"cwd":"/src/app"}}' \
    > "$corpus/start"
  printf '%s\n' '{"v":1,"type":"session/start","ts":"t","data":{"cwd":"/w"}}' \
    '{"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"read-only","source":"user"}}' \
    '{"v":1,"type":"sandbox/mode","ts":"t","data":{"mode":"danger-full-access","source":"escalation"}}' \
    > "$corpus/modes"
  printf '%s\n%s' '{"v":1,"type":"session/start","ts":"t","data":{"cwd":"/w"}}' '{"v":1,"type":"sandb' \
    > "$corpus/torn"
fi

cd "$out"
exec ./session_log_fuzz -max_total_time="$seconds" -max_len=8192 -print_final_stats=1 "$@" "$corpus"
