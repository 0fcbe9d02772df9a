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

# Stage the binaries where an unprivileged user can reach them: the checkout
# may live under a directory only root can enter.
stage=$(mktemp -d /tmp/corral-test.XXXXXX)
trap 'rm -rf "$stage"' EXIT
chmod 755 "$stage"
mkdir -p "$stage/escape" "$stage/home"
cp "$build/src/corral" "$build/tests/corral_integration_tests" "$stage/"
cp "$build"/tests/escape/probe_* "$stage/escape/"
cp tests/wrap/spawn_wrapped.py "$stage/"
chown 65534:65534 "$stage/home"
chmod -R a+rX "$stage"

echo "== integration and escape suites as uid 65534"
(cd "$stage/home" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage/home" LANG=C.UTF-8 \
  CORRAL_BIN="$stage/corral" CORRAL_PROBES="$stage/escape" CORRAL_WRAP_SCRIPT="$stage/spawn_wrapped.py" \
  setpriv --reuid=65534 --regid=65534 --clear-groups "$stage/corral_integration_tests" --gtest_brief=1)
