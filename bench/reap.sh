#!/usr/bin/env bash
# The cost of reaping the sandbox's init before `corral run` exits (no zombie
# left to the caller's reaper of orphans), side by side with the old early
# return, in one interleaved run of one mutants build: `corral run --
# /bin/true` as it is, against the same binary with CORRAL_MUTANT=reap_last
# (init left unreaped), with a bare exec and bubblewrap alongside.
# Usage: bench/reap.sh [MUTANTS_BUILD] [RUNS]   (BENCH_UID=65534 as bench/run.sh)
set -euo pipefail
build=${1:-build-mutants}
runs=${2:-200}
here=$(cd "$(dirname "$0")/.." && pwd)
grep -q 'CORRAL_MUTANTS:BOOL=ON' "$here/$build/CMakeCache.txt" || {
  echo "bench/reap.sh: $build is not a -DCORRAL_MUTANTS=ON build" >&2
  exit 2
}
BENCH_BASELINE="$here/$build/src/corral" BENCH_BASELINE_ENV=CORRAL_MUTANT=reap_last \
  exec "$here/bench/run.sh" "$build" "$runs"
