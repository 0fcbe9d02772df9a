#!/usr/bin/env bash
# Measures `corral run --overlay` side by side with a plain `corral run`, a
# bare exec and bubblewrap doing the same job (a plain bind of the
# workspace: Debian 12's bubblewrap 0.8 has no --overlay-src), in one
# interleaved run; then `corral diff --stat` and `corral apply` of 1,000
# small files against `cp -a` of the same files. Ratios, not pass/fail.
# Usage: bench/overlay.sh [BUILD] [RUNS]
set -euo pipefail
build=${1:-build-bench}
runs=${2:-50}
here=$(cd "$(dirname "$0")/.." && pwd)
corral=$here/$build/src/corral
scratch=$(mktemp -d /tmp/corral-bench-overlay.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
ws=$scratch/workspace
mkdir -p "$ws" "$scratch/state" "$scratch/home"
export XDG_STATE_HOME=$scratch/state HOME=$scratch/home
cd "$ws"
echo "host: $(uname -r), $(nproc) cores, uid $(id -u), $runs runs each, interleaved"

now() { date +%s%N; }
declare -A total
time_one() {  # NAME CMD...
  local name=$1 start end
  shift
  start=$(now)
  "$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; exit 1; }
  end=$(now)
  total[$name]=$(( ${total[$name]:-0} + end - start ))
}
discard_all() { for id in $(ls "$scratch/state/corral/overlay" 2>/dev/null); do "$corral" discard "$id" >/dev/null 2>&1; done; }

write_1000='i=0; while [ $i -lt 1000 ]; do echo "file $i" > f$i.txt; i=$((i+1)); done'
for ((r = 0; r < runs; r++)); do
  time_one "bare /bin/true" /bin/true
  time_one "bwrap /bin/true" bwrap --ro-bind / / --bind "$ws" "$ws" --dev /dev --proc /proc --unshare-all /bin/true
  time_one "corral run /bin/true" "$corral" run --audit - -- /bin/true
  time_one "corral run --overlay /bin/true" "$corral" run --audit - --overlay -- /bin/true
  discard_all
  time_one "bwrap: write 1000 files" bwrap --ro-bind / / --bind "$ws" "$ws" --dev /dev --proc /proc --unshare-all --chdir "$ws" sh -c "$write_1000"
  time_one "corral run: write 1000 files" "$corral" run --audit - -- sh -c "$write_1000"
  rm -f "$ws"/f*.txt
  time_one "corral run --overlay: write 1000 files" "$corral" run --audit - --overlay -- sh -c "$write_1000"
  time_one "corral diff --stat (1000 files)" "$corral" diff --stat
  time_one "corral apply (1000 files)" "$corral" apply --audit -
  rm -rf "$scratch/copy"
  time_one "cp -a of the same 1000 files" cp -a "$ws" "$scratch/copy"
  rm -f "$ws"/f*.txt
  discard_all
done

row() { printf '%-42s %9.2f ms  %6.2fx %s\n' "$1" "$(echo "${total[$1]} / $runs / 1000000" | bc -l)" "$(echo "${total[$1]} / ${total[$2]}" | bc -l)" "$2"; }
echo
row "bare /bin/true" "bare /bin/true"
row "bwrap /bin/true" "bare /bin/true"
row "corral run /bin/true" "bare /bin/true"
row "corral run --overlay /bin/true" "corral run /bin/true"
row "corral run: write 1000 files" "corral run: write 1000 files"
row "bwrap: write 1000 files" "corral run: write 1000 files"
row "corral run --overlay: write 1000 files" "corral run: write 1000 files"
row "cp -a of the same 1000 files" "cp -a of the same 1000 files"
row "corral diff --stat (1000 files)" "cp -a of the same 1000 files"
row "corral apply (1000 files)" "cp -a of the same 1000 files"
