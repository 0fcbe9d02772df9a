#!/usr/bin/env bash
# Installs BUILD into a temporary prefix and builds a small C program against
# it with pkg-config alone, then runs it: the install holds the binary,
# libcorral.so, the header and corral.pc, and they fit together.
set -euo pipefail
build=$1
prefix=$(mktemp -d /tmp/corral-install.XXXXXX)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
[ -x "$prefix/bin/corral" ] || { echo "install_test: no bin/corral" >&2; exit 1; }
pc=$(dirname "$(find "$prefix" -name corral.pc | head -1)")
export PKG_CONFIG_PATH=$pc
cat >"$prefix/app.c" <<'C'
#include <corral/corral.h>
#include <stdio.h>
#include <string.h>
int main(void) {
  corral_policy *policy = NULL;
  char *error = NULL;
  if (corral_policy_from_json("[]", NULL, &policy, &error) != CORRAL_E_POLICY) return 1;
  corral_string_free(error);
  puts(corral_errc_name(CORRAL_E_REFUSED_BY_GATE));
  return strcmp(corral_errc_name(CORRAL_E_SET_CLOSED), "set_closed") != 0;
}
C
# shellcheck disable=SC2046
cc "$prefix/app.c" -o "$prefix/app" $(pkg-config --cflags --libs corral)
out=$(LD_LIBRARY_PATH=$(pkg-config --variable=libdir corral) "$prefix/app")
[ "$out" = "refused_by_gate" ] || { echo "install_test: the program printed '$out'" >&2; exit 1; }
echo "install_test: installed, found by pkg-config, built and ran"
