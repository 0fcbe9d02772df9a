#!/usr/bin/env bash
# Measures corral's spawn cost side by side with a bare exec and bubblewrap
# doing the same job, in one interleaved run.
# Usage: bench/run.sh [BUILD] [RUNS]
# As root, BENCH_UID=65534 runs the same benchmark as that unprivileged user
# (most users are not root, and corral does less work for them).
# BENCH_BASELINE=/path/to/another/corral adds that build to the same
# interleaved run, for a side-by-side comparison of two builds.
set -euo pipefail
build=${1:-build-bench}
runs=${2:-300}
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/scratch.sh"
bench_scratch
bench_as_user
echo "host: $(uname -r), $(nproc) cores, uid ${BENCH_UID:-$(id -u)}"
"${as[@]}" "$here/$build/bench/bench_spawn" "$here/$build/src/corral" "$workspace" "$runs" ${BENCH_BASELINE:+"$BENCH_BASELINE"}
