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
scratch=$(mktemp -d /tmp/corral-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
workspace=$scratch/workspace
mkdir "$workspace" "$scratch/home"
chmod 755 "$scratch"
as=()
if [[ -n "${BENCH_UID:-}" ]]; then
  chown "$BENCH_UID:$BENCH_UID" "$workspace" "$scratch/home"
  as=(setpriv "--reuid=$BENCH_UID" "--regid=$BENCH_UID" --clear-groups env "HOME=$scratch/home")
fi
echo "host: $(uname -r), $(nproc) cores, uid ${BENCH_UID:-$(id -u)}"
"${as[@]}" "$here/$build/bench/bench_spawn" "$here/$build/src/corral" "$workspace" "$runs" ${BENCH_BASELINE:+"$BENCH_BASELINE"}
