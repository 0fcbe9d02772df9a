#!/usr/bin/env bash
# The mutation check: for each defence, switch it off (and nothing else) and
# run the tests SECURITY.md names for it; each mutant must be killed, i.e.
# make at least one of its tests fail, as root and as uid 65534.
#
#   scripts/mutants.sh [BUILD_DIR] [MUTANT...]    (default build-mutants, every mutant)
#
# The mutants and their tests are the table under "## Mutants" in
# SECURITY.md: one row per mutant, `| name | tests (a gtest filter) | callers |`.
# "callers" is "all", or "root" for a defence that has nothing to do for an
# unprivileged caller (the row says why). The build is configured with
# -DCORRAL_MUTANTS=ON, which compiles in the CORRAL_MUTANT switch
# (src/base/mutant.h); no other build has it. Ends non-zero when a mutant
# survives, or when the named tests fail without any mutant.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
build=${1:-build-mutants}
shift || true
wanted=("$@")

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORRAL_INVARIANTS=ON -DCORRAL_MUTANTS=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target corral corral_integration_tests >/dev/null

# name<TAB>filter<TAB>callers, from SECURITY.md's table.
table=$(awk '
  /^## Mutants/ { on = 1; next }
  on && /^## / { on = 0 }
  on && /^\| `[a-z_]+` \|/ {
    n = split($0, cell, "|")
    name = cell[2]; filter = cell[3]; callers = cell[4]
    gsub(/[` ]/, "", name); gsub(/[` ]/, "", filter); gsub(/[` ]/, "", callers)
    gsub(/,/, ":", filter)
    print name "\t" filter "\t" callers
  }' SECURITY.md)
[ -n "$table" ] || { echo "mutants: no table under '## Mutants' in SECURITY.md" >&2; exit 2; }

as_root() {
  (cd "$build" && CORRAL_BIN="$here/$build/src/corral" CORRAL_PROBES="$here/$build/tests/escape" \
    CORRAL_WRAP_SCRIPT="$here/tests/wrap/spawn_wrapped.py" tests/corral_integration_tests "$@")
}
unprivileged=0
if [ "$(id -u)" -eq 0 ]; then
  . "$here/scripts/stage_unprivileged.sh"
  stage_unprivileged "$build"
  trap 'rm -rf "$stage"' EXIT
  unprivileged=1
else
  echo "mutants: not root, so only the current user's pass runs" >&2
fi

quiet() { "$@" --gtest_brief=1 >/dev/null 2>&1; }

# Without a mutant every named test must pass, or a "kill" means nothing.
all_filters=$(cut -f2 <<<"$table" | paste -sd: -)
# A failure is shown, and the baseline tried once more: a test that fails
# only sometimes is named on stderr rather than hidden or fatal.
baseline() {
  local who=$1
  shift
  local log
  log=$("$@" --gtest_filter="$all_filters" --gtest_brief=1 2>&1) && return 0
  echo "mutants: the baseline failed once as $who; trying again:" >&2
  grep -E '^\[  FAILED  \]' <<<"$log" | sort -u >&2 || true
  "$@" --gtest_filter="$all_filters" --gtest_brief=1 >/dev/null 2>&1 && return 0
  echo "baseline FAILED as $who" >&2
  exit 1
}
echo "== baseline: the named tests without a mutant"
baseline "uid $(id -u)" as_root
if [ $unprivileged -eq 1 ]; then
  baseline "uid 65534" run_unprivileged
fi

survived=0
printf '%-18s %-10s %-10s %s\n' mutant "as root" "as 65534" tests
while IFS=$'\t' read -r name filter callers; do
  if [ ${#wanted[@]} -gt 0 ] && [[ ! " ${wanted[*]} " =~ " $name " ]]; then continue; fi
  root=survived
  CORRAL_MUTANT=$name quiet as_root --gtest_filter="$filter" || root=killed
  user=-
  if [ $unprivileged -eq 1 ]; then
    if [ "$callers" = root ]; then
      user=n/a
    else
      user=survived
      CORRAL_MUTANT=$name quiet run_unprivileged --gtest_filter="$filter" || user=killed
    fi
  fi
  [ "$root" = killed ] || survived=$((survived + 1))
  [ "$user" = survived ] && survived=$((survived + 1))
  printf '%-18s %-10s %-10s %s\n' "$name" "$root" "$user" "$filter"
done <<<"$table"

if [ $survived -ne 0 ]; then
  echo "mutants: $survived survived" >&2
  exit 1
fi
echo "mutants: every mutant was killed"
