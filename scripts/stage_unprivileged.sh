# Sourced by test.sh and mutants.sh: stage_unprivileged BUILD copies corral,
# the unit and integration tests, the probes and the wrap script to a fresh directory
# under /tmp that uid 65534 can reach (the checkout may live under a directory
# only root can enter), with a home of 65534's own and the unit tests'
# fixtures (source/), and sets $stage. The
# caller removes $stage. run_unprivileged ARGS... runs the staged tests as
# uid 65534 with a minimal environment, plus CORRAL_MUTANT when it is set;
# staged_tests=NAME runs another test binary the caller copied to $stage.
stage_unprivileged() {
  local build=$1
  stage=$(mktemp -d /tmp/corral-test.XXXXXX)
  chmod 755 "$stage"
  mkdir -p "$stage/escape" "$stage/home"
  cp "$build/src/corral" "$build/src/corral_unit_tests" "$build/tests/corral_integration_tests" "$stage/"
  cp "$build"/tests/escape/probe_* "$stage/escape/"
  cp tests/wrap/spawn_wrapped.py "$stage/"
  # The MCP SDK test's client, with the SDK it runs (node_modules).
  cp -r tests/mcp_sdk "$stage/mcp_sdk"
  # The C API's test program with libcorral.so beside it, and the Python
  # binding (a build of the tests alone, as mutants.sh makes, has neither).
  mkdir -p "$stage/capi" "$stage/python"
  if [ -e "$build/tests/corral_capi_test" ]; then
    cp "$build/tests/corral_capi_test" tests/capi/run_capi_test.sh "$stage/capi/"
    cp -P "$build"/src/libcorral.so* "$stage/capi/"
  fi
  cp bindings/python/corral.py bindings/python/test_corral.py "$stage/python/"
  # What the unit tests read from the source tree (testing/source_dir.h).
  mkdir -p "$stage/source"
  cp --parents -r README.md docs/config.md tests/golden src/*/*_fuzz_seeds "$stage/source/"
  chown 65534:65534 "$stage/home"
  chmod -R a+rX "$stage"
}

run_unprivileged() {
  (cd "$stage/home" && env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$stage/home" LANG=C.UTF-8 \
    ${CORRAL_MUTANT:+CORRAL_MUTANT="$CORRAL_MUTANT"} \
    CORRAL_BIN="$stage/corral" CORRAL_PROBES="$stage/escape" CORRAL_WRAP_SCRIPT="$stage/spawn_wrapped.py" \
    CORRAL_MCP_SDK="$stage/mcp_sdk" CORRAL_SOURCE_DIR="$stage/source" \
    setpriv --reuid=65534 --regid=65534 --clear-groups "$stage/${staged_tests:-corral_integration_tests}" "$@")
}
