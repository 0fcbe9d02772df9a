#!/usr/bin/env bash
# Fuzzes the DNS query reader of the sandbox's name server
# (src/net/dns_message_fuzz.cc) with libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer.
#
#   scripts/fuzz_dns.sh [SECONDS] [more libFuzzer flags...]
#
# Builds into build-fuzz-dns/ (FUZZ_OUT overrides; clang++ with
# -fsanitize=fuzzer is required), then runs for SECONDS (default 60) on the
# seeds in src/net/dns_message_fuzz_seeds plus the corpus kept in
# build-fuzz-dns/corpus. A crash or a broken property
# (dns_message_fuzz_check.h) aborts and leaves a crash-* file there.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$here/build-fuzz-dns}
seconds=${1:-60}
shift || true

command -v clang++ >/dev/null || { echo "fuzz_dns.sh: clang++ not found" >&2; exit 1; }
mkdir -p "$out/corpus"
src="$here/src"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DCORRAL_INVARIANTS=1 -I"$src" \
  "$src/net/dns_message_fuzz.cc" "$src/net/dns_message.cc" "$src/base/result.cc" \
  -o "$out/dns_message_fuzz"

cd "$out"
exec ./dns_message_fuzz -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 "$@" corpus \
  "$here/src/net/dns_message_fuzz_seeds"
