#!/usr/bin/env bash
# What `--overlay` adds to a short run, paired: each round times `/bin/true`
# bare, under bubblewrap, under `corral run` and under `corral run
# --overlay`, interleaved, and reports each one's quartiles and the
# quartiles of the per-round difference overlay - plain (a paired
# difference cancels most of a loaded host's drift). Not pass/fail.
# Usage: bench/overlay_true.sh [BUILD] [ROUNDS]
set -euo pipefail
build=${1:-build-bench}
rounds=${2:-101}
here=$(cd "$(dirname "$0")/.." && pwd)
corral=$here/$build/src/corral
scratch=$(mktemp -d /tmp/corral-bench-overlay-true.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
ws=$scratch/workspace
mkdir -p "$ws" "$scratch/state" "$scratch/home"
export XDG_STATE_HOME=$scratch/state HOME=$scratch/home
cd "$ws"
echo "host: $(uname -r), $(nproc) cores, uid $(id -u), load $(cut -d' ' -f1-3 /proc/loadavg), $rounds rounds"
us() { local start end; start=$(date +%s%N); "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }; end=$(date +%s%N); echo $(( (end - start) / 1000 )); }
for ((r = 0; r < rounds; r++)); do
  echo "$(us /bin/true) $(us bwrap --ro-bind / / --bind "$ws" "$ws" --dev /dev --proc /proc --unshare-all /bin/true)" \
       "$(us "$corral" run --audit - -- /bin/true) $(us "$corral" run --audit - --overlay -- /bin/true)"
done > "$scratch/times"
quartiles() { sort -n | awk '{ v[NR] = $1 } END { printf "%8.2f %8.2f %8.2f ms\n", v[int(NR/4)+1]/1000, v[int(NR/2)+1]/1000, v[int(3*NR/4)+1]/1000 }'; }
printf '%-34s %8s %8s %8s\n' "" "p25" "median" "p75"
col=1
for name in "bare /bin/true" "bwrap /bin/true" "corral run /bin/true" "corral run --overlay /bin/true"; do
  printf '%-34s ' "$name"; awk -v c=$col '{ print $c }' "$scratch/times" | quartiles
  col=$((col + 1))
done
printf '%-34s ' "added by --overlay (paired)"; awk '{ print $4 - $3 }' "$scratch/times" | quartiles
