#!/usr/bin/env bash
# Executor calls against posix_spawn, in one interleaved run
# (bench/bench_executor.cc): one call, 1000 sequential calls and 8 threads x
# 200, `find` and `cc -c` inside an executor and outside, and the same call
# through the C++ API, the C API and the Python binding.
# Usage: bench/executor.sh [BUILD] [RUNS] [ROUNDS] [SEQUENTIAL] [PER_THREAD] [JOB_ROUNDS] [CALLS]
# As root, BENCH_UID=65534 runs it as that unprivileged user.
set -euo pipefail
build=${1:-build-bench}
shift || true
here=$(cd "$(dirname "$0")/.." && pwd)
. "$here/bench/scratch.sh"
bench_scratch
bench_as_user
echo "host: $(uname -r), $(nproc) cores, uid ${BENCH_UID:-$(id -u)}, $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo '?')"
export PYTHONPATH=$here/bindings/python CORRAL_LIBRARY=$here/$build/src/libcorral.so
"${as[@]}" "$here/$build/bench/bench_executor" "$workspace" "$here/bench/bench_executor.py" "$@"
