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
. "$here/bench/scratch.sh"
bench_scratch
cp "$here/$build/bench/bench_syscalls" "$workspace/"
bench_as_user
echo "host: $(uname -r), $(nproc) cores, uid ${BENCH_UID:-$(id -u)}"
"${as[@]}" "$workspace/bench_syscalls" drive "$here/$build/src/corral" "$workspace" "$rounds" ${BENCH_BASELINE:+"$BENCH_BASELINE"}
