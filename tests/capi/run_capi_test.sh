#!/usr/bin/env bash
# Runs the C API's test program with a fresh workspace and scratch directory.
set -euo pipefail
workspace=$(mktemp -d /tmp/corral-capi-ws.XXXXXX)
scratch=$(mktemp -d /tmp/corral-capi-scratch.XXXXXX)
trap 'rm -rf "$workspace" "$scratch"' EXIT
"$1" "$workspace" "$scratch"
# The set removed its scratch.
[ -z "$(ls -A "$scratch")" ] || { echo "capi_test: the scratch was left: $(ls -A "$scratch")" >&2; exit 1; }
