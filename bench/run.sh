#!/usr/bin/env bash
# Measures corral's spawn cost side by side with a bare exec and bubblewrap
# doing the same job, in one interleaved run. Usage: bench/run.sh [BUILD] [RUNS]
set -euo pipefail
build=${1:-build-bench}
runs=${2:-300}
here=$(cd "$(dirname "$0")/.." && pwd)
workspace=$(mktemp -d /tmp/corral-bench.XXXXXX)
trap 'rm -rf "$workspace"' EXIT
echo "host: $(uname -r), $(nproc) cores, uid $(id -u)"
"$here/$build/bench/bench_spawn" "$here/$build/src/corral" "$workspace" "$runs"
