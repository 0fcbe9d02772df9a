#!/usr/bin/env bash
# Runs every test corral has:
#   1. the unit tests;
#   2. the real-kernel integration and escape suites as the current user;
#   3. the same suites again as an unprivileged user (uid 65534), when root.
# A suite that needs a kernel mechanism fails when it is missing; nothing skips.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

echo "== unit tests"
"$build/src/corral_unit_tests" --gtest_brief=1

integration() {
  "$1/corral_integration_tests" --gtest_brief=1
}

echo "== integration and escape suites as uid $(id -u)"
CORRAL_BIN="$here/$build/src/corral" CORRAL_PROBES="$here/$build/tests/escape" \
  CORRAL_WRAP_SCRIPT="$here/tests/wrap/spawn_wrapped.py" integration "$build/tests"

if [ "$(id -u)" -ne 0 ]; then
  echo "== NOTE: the suites ran only as uid $(id -u); run 'sudo make test' for the root pass too" >&2
  exit 0
fi

# The binaries are staged where an unprivileged user can reach them.
. "$here/scripts/stage_unprivileged.sh"
stage_unprivileged "$build"
trap 'rm -rf "$stage"' EXIT

echo "== integration and escape suites as uid 65534"
run_unprivileged --gtest_brief=1
