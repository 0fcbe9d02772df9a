#!/usr/bin/env bash
# Measures what a confined process pays per system call and on syscall-heavy
# jobs: getppid, open+close, stat, `find /usr -type f | wc -l` and a small
# `cc -c`, bare, inside `corral run` and inside bubblewrap with a comparable
# view, interleaved in one run (bench/bench_syscalls.cc).
# Usage: bench/syscalls.sh [BUILD] [ROUNDS]
# As root, BENCH_UID=65534 runs it as that unprivileged user.
# BENCH_BASELINE=/path/to/another/corral adds that build to the same run.
set -euo pipefail
build=${1:-build-bench}
rounds=${2:-15}
here=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d /tmp/corral-bench.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
workspace=$scratch/workspace
mkdir "$workspace" "$scratch/home"
chmod 755 "$scratch"
cp "$here/$build/bench/bench_syscalls" "$workspace/"
as=()
if [[ -n "${BENCH_UID:-}" ]]; then
  chown -R "$BENCH_UID:$BENCH_UID" "$workspace" "$scratch/home"
  as=(setpriv "--reuid=$BENCH_UID" "--regid=$BENCH_UID" --clear-groups env "HOME=$scratch/home")
fi
echo "host: $(uname -r), $(nproc) cores, uid ${BENCH_UID:-$(id -u)}"
"${as[@]}" "$workspace/bench_syscalls" drive "$here/$build/src/corral" "$workspace" "$rounds" ${BENCH_BASELINE:+"$BENCH_BASELINE"}
