#!/usr/bin/env bash
# Runs every test corral has:
#   1. the unit tests;
#   2. the real-kernel integration and escape suites as the current user;
#   3. all of them again as an unprivileged user (uid 65534), when root.
# A suite that needs a kernel mechanism fails when it is missing; nothing skips.
set -euo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

# The capture and git-over-the-network suites need a name the host's
# /etc/hosts gives 127.0.0.1 besides localhost (tests/integration/
# loopback_names.h). Where the host has none and we are root, one is added
# for the run and taken out again (in place: /etc/hosts may be a bind mount).
added_hosts_name=""
if [ "$(id -u)" -eq 0 ] &&
   ! awk '!/^#/ && $1 == "127.0.0.1" { for (i = 2; i <= NF; i++) if ($i !~ /localhost/) found = 1 } END { exit !found }' /etc/hosts; then
  added_hosts_name="127.0.0.1 corral-loopback.test # added by corral's scripts/test.sh"
  echo "$added_hosts_name" >>/etc/hosts
fi
forget_hosts_name() {
  [ -n "$added_hosts_name" ] || return 0
  local kept
  kept=$(grep -vxF "$added_hosts_name" /etc/hosts || true)
  printf '%s\n' "$kept" >/etc/hosts
}
trap forget_hosts_name EXIT

echo "== unit tests"
"$build/src/corral_unit_tests" --gtest_brief=1

integration() {
  "$1/corral_integration_tests" --gtest_brief=1
}

echo "== integration and escape suites as uid $(id -u)"
CORRAL_BIN="$here/$build/src/corral" CORRAL_PROBES="$here/$build/tests/escape" \
  CORRAL_WRAP_SCRIPT="$here/tests/wrap/spawn_wrapped.py" integration "$build/tests"

# The C API's program and the Python binding, against the built libcorral.so.
# library_tests RUN_CAPI_TEST CAPI_TEST LIBCORRAL PYTHON_DIR
library_tests() {
  "$1" "$2"
  CORRAL_LIBRARY="$3" python3 "$4/test_corral.py"
}
echo "== the C API and the Python binding as uid $(id -u)"
library_tests "$here/tests/capi/run_capi_test.sh" "$here/$build/tests/corral_capi_test" "$here/$build/src/libcorral.so" \
  "$here/bindings/python" 2>&1 | sed 's/^/  /'
echo "== cmake --install into a temporary prefix, and a C program built with pkg-config against it"
"$here/tests/install/install_test.sh" "$build" 2>&1 | sed 's/^/  /'

if [ "$(id -u)" -ne 0 ]; then
  echo "== NOTE: the suites ran only as uid $(id -u); run 'sudo make test' for the root pass too" >&2
  forget_hosts_name
  exit 0
fi

# The binaries are staged where an unprivileged user can reach them.
. "$here/scripts/stage_unprivileged.sh"
stage_unprivileged "$build"
trap 'rm -rf "$stage"; forget_hosts_name' EXIT

echo "== unit tests as uid 65534"
staged_tests=corral_unit_tests run_unprivileged --gtest_brief=1

echo "== integration and escape suites as uid 65534"
run_unprivileged --gtest_brief=1

echo "== the C API and the Python binding as uid 65534"
(cd "$stage/home" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage/home" LANG=C.UTF-8 LD_LIBRARY_PATH="$stage/capi" \
  setpriv --reuid=65534 --regid=65534 --clear-groups \
  bash -c "$(declare -f library_tests); library_tests $stage/capi/run_capi_test.sh $stage/capi/corral_capi_test $stage/capi/libcorral.so $stage/python") 2>&1 | sed 's/^/  /'
