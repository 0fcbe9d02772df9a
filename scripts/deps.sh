#!/usr/bin/env bash
# Installs the Debian packages corral needs when they are missing.
# As root it runs apt-get; otherwise it prints the exact line to run.
set -euo pipefail
missing=()
for p in "$@"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then
  echo "corral: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null || true
  $line >/dev/null
else
  echo "corral: missing Debian packages; run as root:" >&2
  echo "  sudo $line" >&2
  exit 1
fi
