#!/usr/bin/env bash
# The mutation check: for each defence, switch it off (and nothing else) and
# run the tests SECURITY.md names for it; each mutant must be killed, i.e.
# make at least one of its tests fail, as root and as uid 65534.
#
#   scripts/mutants.sh [BUILD_DIR] [MUTANT...]    (default build-mutants, every mutant)
#
# The mutants and their tests are the table under "## Mutants" in
# SECURITY.md: one row per mutant, `| name | tests (a gtest filter) | callers |`.
# "callers" is "all", "root" for a defence that has nothing to do for an
# unprivileged caller, or "user" for one that has nothing to do for root (run
# as uid 65534 only); SECURITY.md says why. The tests are looked for in the
# integration suite and in the unit tests alike. The build is configured with
# -DCORRAL_MUTANTS=ON, which compiles in the CORRAL_MUTANT switch
# (src/base/mutant.h); no other build has it. Ends non-zero when a mutant
# survives, or when the named tests fail without any mutant.
#
# First, and fatal, a lint of SECURITY.md: every claim table under
# "## Claims" has a third column, `mutant`, and every claim a non-empty cell
# there naming (in backticks) mutants of the "## Mutants" table, each of which
# is a name in src/base/mutant.cc and has among its killing tests one that
# the claim names (a gtest pattern there matches); a claim whose one layer no mutant can
# remove (the sandbox would not run) says "none: <why>" instead, which the
# lint shows as a note. CORRAL_MUTANT_LINT_SECTIONS="Writing
# Network ..." limits the claim tables linted to the sections whose title
# starts with one of those words (unset: every section).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
build=${1:-build-mutants}
shift || true
wanted=("$@")

# name<TAB>filter<TAB>callers, from SECURITY.md's table.
table=$(awk '
  /^## Mutants/ { on = 1; next }
  on && /^## / { on = 0 }
  on && /^\| `[a-z_0-9]+` \|/ {
    n = split($0, cell, "|")
    name = cell[2]; filter = cell[3]; callers = cell[4]
    gsub(/[` ]/, "", name); gsub(/[` ]/, "", filter); gsub(/[` ]/, "", callers)
    gsub(/,/, ":", filter)
    print name "\t" filter "\t" callers
  }' SECURITY.md)
[ -n "$table" ] || { echo "mutants: no table under '## Mutants' in SECURITY.md" >&2; exit 2; }

lint() {
  local known in_table problems=0 name
  known=$(grep -oE 'return "[a-z_0-9]+";' src/base/mutant.cc | sed -E 's/return "(.*)";/\1/' | grep -vx none)
  in_table=$(cut -f1 <<<"$table")
  while read -r name; do
    if ! grep -qx "$name" <<<"$known"; then
      echo "mutants lint: \`$name\` in the Mutants table is no mutant of src/base/mutant.cc" >&2
      problems=$((problems + 1))
    fi
  done <<<"$in_table"
  local claims
  claims=$(awk -v sections="${CORRAL_MUTANT_LINT_SECTIONS-}" '
    BEGIN { n = split(sections, wanted, " ") }
    /^## Claims/ { on = 1; next }
    on && /^## / { on = 0 }
    !on { next }
    /^### / {
      section = substr($0, 5); first = section; sub(/ .*/, "", first)
      take = n == 0
      for (i = 1; i <= n; i++) if (wanted[i] == first) take = 1
      header = 0; next
    }
    !take || !/^\|/ { next }
    /^\|---/ { next }
    {
      k = split($0, cell, "|")
      if (!header) {
        header = 1
        third = cell[4]; gsub(/ /, "", third)
        if (k != 5 || third != "mutant") print section "\tits table has no third column `mutant`\t-"
        next
      }
      claim = cell[2]; sub(/^ /, "", claim)
      if (length(claim) > 90) claim = substr(claim, 1, 90) "..."
      mutants = k == 5 ? cell[4] : ""
      if (mutants == "") mutants = " "  # a tab-separated field may not be empty for read
      print section "\t" claim "\t" mutants "\t" cell[3]
    }' SECURITY.md)
  local section claim mutants proven names tests test pattern shared
  while IFS=$'\t' read -r section claim mutants proven; do
    [ -n "$section" ] || continue
    if [ "$mutants" = "-" ]; then
      echo "mutants lint: $section: $claim" >&2
      problems=$((problems + 1))
      continue
    fi
    names=$(grep -oE '`[^`]+`' <<<"$mutants" | tr -d '`' || true)
    if [ -z "$names" ] && [[ "$mutants" =~ ^\ *none:\ *[^\ ] ]]; then
      echo "mutants lint: note: $section: no mutant (the cell says why) for \"$claim\"" >&2
      continue
    fi
    if [ -z "$names" ]; then
      echo "mutants lint: $section: no mutant for the claim \"$claim\"" >&2
      problems=$((problems + 1))
      continue
    fi
    while read -r name; do
      if ! grep -qx "$name" <<<"$in_table"; then
        echo "mutants lint: $section: \`$name\` (for \"$claim\") is not in the Mutants table" >&2
        problems=$((problems + 1))
        continue
      fi
      # The mutant's killing tests must prove this claim: one of them is
      # named (or matched by a pattern) in the claim's own cell.
      tests=$(awk -F'\t' -v n="$name" '$1 == n { print $2 }' <<<"$table" | tr ':' '\n')
      shared=0
      while read -r test; do
        while read -r pattern; do
          # shellcheck disable=SC2053  # the claim's cell may hold gtest patterns
          if [ -n "$pattern" ] && [[ $test == $pattern || $pattern == $test ]]; then shared=1; fi
        done < <(grep -oE '`[^`]+`' <<<"$proven" | tr -d '`')
      done <<<"$tests"
      if [ $shared -eq 0 ]; then
        echo "mutants lint: $section: no killing test of \`$name\` is named for \"$claim\"" >&2
        problems=$((problems + 1))
      fi
    done <<<"$names"
  done <<<"$claims"
  if [ $problems -ne 0 ]; then
    echo "mutants lint: $problems problems in SECURITY.md" >&2
    exit 2
  fi
  echo "== lint: every claim${CORRAL_MUTANT_LINT_SECTIONS:+ in $CORRAL_MUTANT_LINT_SECTIONS} names a mutant of the table"
}
lint

cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCORRAL_INVARIANTS=ON -DCORRAL_MUTANTS=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target corral corral_integration_tests corral_unit_tests >/dev/null

# The named tests run in both suites: integration, then unit; either failing
# is a failure.
as_root() {
  (cd "$build" && CORRAL_BIN="$here/$build/src/corral" CORRAL_PROBES="$here/$build/tests/escape" \
    CORRAL_WRAP_SCRIPT="$here/tests/wrap/spawn_wrapped.py" tests/corral_integration_tests "$@") &&
    (cd "$build" && src/corral_unit_tests "$@")
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
as_unprivileged() {
  run_unprivileged "$@" && staged_tests=corral_unit_tests run_unprivileged "$@"
}

quiet() { "$@" --gtest_brief=1 >/dev/null 2>&1; }

# Without a mutant every named test (of the mutants asked for) must pass, or
# a "kill" means nothing.
chosen() { [ ${#wanted[@]} -eq 0 ] || [[ " ${wanted[*]} " =~ " $1 " ]]; }
all_filters=$(while IFS=$'\t' read -r name filter _; do if chosen "$name"; then echo "$filter"; fi; done <<<"$table" |
  paste -sd: -)
[ -n "$all_filters" ] || { echo "mutants: no mutant named ${wanted[*]} in SECURITY.md" >&2; exit 2; }
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
  baseline "uid 65534" as_unprivileged
fi

survived=0
printf '%-18s %-10s %-10s %s\n' mutant "as root" "as 65534" tests
while IFS=$'\t' read -r name filter callers; do
  chosen "$name" || continue
  root=survived
  if [ "$callers" = user ] && [ "$(id -u)" -eq 0 ]; then
    root=n/a
  else
    CORRAL_MUTANT=$name quiet as_root --gtest_filter="$filter" || root=killed
  fi
  user=-
  if [ $unprivileged -eq 1 ]; then
    if [ "$callers" = root ]; then
      user=n/a
    else
      user=survived
      CORRAL_MUTANT=$name quiet as_unprivileged --gtest_filter="$filter" || user=killed
    fi
  fi
  [ "$root" = survived ] && survived=$((survived + 1))
  [ "$user" = survived ] && survived=$((survived + 1))
  printf '%-18s %-10s %-10s %s\n' "$name" "$root" "$user" "$filter"
done <<<"$table"

if [ $survived -ne 0 ]; then
  echo "mutants: $survived survived" >&2
  exit 1
fi
echo "mutants: every mutant was killed"
