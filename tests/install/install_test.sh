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

# The Debian package (cmake/package.cmake): cpack makes corral_VERSION_ARCH.deb
# holding the same four files under /usr, with Depends from dpkg-shlibdeps;
# unpacked into a directory, the same program builds against it.
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
  echo "install_test: dpkg-deb and dpkg-shlibdeps are needed to check the .deb" >&2
  exit 1
fi
debs=$prefix/debs
(cd "$build" && cpack -G DEB -B "$debs" >/dev/null)
version=$(sed -n 's/^set(CPACK_PACKAGE_VERSION "\(.*\)")$/\1/p' "$build/CPackConfig.cmake")
deb=$debs/corral_${version}_$(dpkg --print-architecture).deb
[ -f "$deb" ] || { echo "install_test: no $deb (made: $(ls "$debs"))" >&2; exit 1; }
contents=$(dpkg-deb -c "$deb")
for file in ./usr/bin/corral ./usr/lib/libcorral.so.0 ./usr/include/corral/corral.h ./usr/lib/pkgconfig/corral.pc; do
  grep -q " $file\( \|$\)" <<<"$contents" || { echo "install_test: the .deb lacks $file:" >&2; echo "$contents" >&2; exit 1; }
done
for field in Package Version Architecture Maintainer Description Depends; do
  [ -n "$(dpkg-deb -f "$deb" "$field")" ] || { echo "install_test: the .deb has no $field" >&2; exit 1; }
done
depends=$(dpkg-deb -f "$deb" Depends)
grep -q 'libc6' <<<"$depends" || { echo "install_test: Depends '$depends' lacks libc6" >&2; exit 1; }
unpacked=$prefix/unpacked
dpkg-deb -x "$deb" "$unpacked"
export PKG_CONFIG_PATH=$unpacked/usr/lib/pkgconfig
# shellcheck disable=SC2046
cc "$prefix/app.c" -o "$prefix/app-deb" $(pkg-config --cflags --libs corral)
out=$(LD_LIBRARY_PATH=$(pkg-config --variable=libdir corral) "$prefix/app-deb")
[ "$out" = "refused_by_gate" ] || { echo "install_test: the program built from the .deb printed '$out'" >&2; exit 1; }
"$unpacked/usr/bin/corral" --version >/dev/null || { echo "install_test: the packaged corral does not run" >&2; exit 1; }
echo "install_test: $(basename "$deb") holds the binary, libcorral.so, the header and corral.pc; Depends: $depends"
