#!/usr/bin/env bash
# Fuzzes the config and profile TOML parsers (src/config/config_fuzz.cc) with
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer.
#
#   scripts/fuzz_config.sh [SECONDS] [more libFuzzer flags...]
#
# Builds into build-fuzz-config/ (clang++ with -fsanitize=fuzzer is required;
# toml++ is compiled from its headers, so the parser is instrumented too),
# then runs for SECONDS (default 120) on the seeds in
# src/config/config_fuzz_seeds plus the corpus kept in
# build-fuzz-config/corpus. A crash or a broken error contract (a rejection
# without file:line:column, or with a control character) aborts and leaves a
# crash-* file in build-fuzz-config/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_OUT:-$here/build-fuzz-config}
seconds=${1:-120}
shift || true
mkdir -p "$out/obj" "$out/corpus"

flags=(-std=c++20 -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
       -I"$here/src")
# The config layer and the layers it may use (src/layers.cmake), whole.
mapfile -t sources < <(cd "$here" && ls src/config/*.cc src/policy/*.cc src/base/*.cc | grep -vE '_test\.cc$|_fuzz\.cc$')
sources+=(src/config/config_fuzz.cc)
objects=()
for source in "${sources[@]}"; do
  object="$out/obj/$(echo "$source" | tr / _).o"
  if [ ! -f "$object" ] || [ "$here/$source" -nt "$object" ] || \
     [ -n "$(find "$here/src" -name '*.h' -newer "$object" -print -quit)" ]; then
    echo "compile $source"
    clang++ "${flags[@]}" -c "$here/$source" -o "$object"
  fi
  objects+=("$object")
done
clang++ -fsanitize=fuzzer,address,undefined "${objects[@]}" -lcrypto -o "$out/config_fuzz"

cd "$out"
./config_fuzz -max_total_time="$seconds" -max_len=4096 -timeout=10 -print_final_stats=1 \
  -dict="$here/src/config/config_fuzz.dict" "$@" corpus "$here/src/config/config_fuzz_seeds"
