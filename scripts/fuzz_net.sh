#!/usr/bin/env bash
# Fuzzes one of the network supervisor's strict readers (src/net/) with
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz_net.sh HARNESS [SECONDS] [more libFuzzer flags...]
#
# HARNESS is one of
#   dns_message  the DNS query reader      (src/net/dns_message_fuzz.cc)
#   http_head    the HTTP request head     (src/net/http_head_fuzz.cc)
#   socks5       the SOCKS5 greeting and request (src/net/socks5_fuzz.cc)
#   host_pattern the --allow-host/--deny-host rule reader (src/net/host_pattern_fuzz.cc)
#   dns_answer   the DNS answer reader of the proxy's lookups (src/net/dns_answer_fuzz.cc)
#
# Builds into build-fuzz-dns/, build-fuzz-http/, build-fuzz-socks5/, build-fuzz-host/ or build-fuzz-answer/
# (FUZZ_OUT overrides; clang++ with -fsanitize=fuzzer is required), then
# runs for SECONDS (default 60) on the seeds in src/net/HARNESS_fuzz_seeds
# plus the corpus kept in the build folder's corpus/. A crash or a broken
# property (src/net/HARNESS_fuzz_check.h) aborts and leaves a crash-* file
# there. Inputs are at most 4096 bytes for dns_message, 20000 for
# http_head (past its 16 KiB cap), 1024 for socks5, 512 for host_pattern and
# 65535 (a DNS message over TCP) for dns_answer.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
harness=${1:-}
case "$harness" in
  dns_message) folder=dns; max_len=4096; sources=(net/dns_message.cc) ;;
  http_head) folder=http; max_len=20000; sources=(net/http_head.cc net/host_port.cc) ;;
  socks5) folder=socks5; max_len=1024; sources=(net/socks5.cc net/host_port.cc) ;;
  host_pattern)
    folder=host; max_len=512
    sources=(net/host_pattern.cc net/address.cc net/public_suffix.cc net/user_text.cc) ;;
  dns_answer)
    folder=answer; max_len=65535; libs=(-lresolv)
    sources=(net/hosts_file.cc net/address.cc net/user_text.cc base/unique_fd.cc) ;;
  *) echo "usage: fuzz_net.sh dns_message|http_head|socks5|host_pattern|dns_answer [SECONDS] [libFuzzer flags...]" >&2; exit 2 ;;
esac
shift
out=${FUZZ_OUT:-$here/build-fuzz-$folder}
seconds=${1:-60}
shift || true

command -v clang++ >/dev/null || { echo "fuzz_net.sh: clang++ not found" >&2; exit 1; }
mkdir -p "$out/corpus"
src="$here/src"
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DCORRAL_INVARIANTS=1 -I"$src" \
  "$src/net/${harness}_fuzz.cc" "${sources[@]/#/$src/}" "$src/base/result.cc" \
  ${libs[@]+"${libs[@]}"} -o "$out/${harness}_fuzz"

cd "$out"
exec "./${harness}_fuzz" -max_total_time="$seconds" -max_len="$max_len" -print_final_stats=1 "$@" corpus \
  "$here/src/net/${harness}_fuzz_seeds"
