#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK that the MCP end-to-end test
# drives (tests/mcp_sdk, versions pinned by its package-lock.json), with the
# machine's Node. Debian's nodejs and npm are installed only when the `node`
# or `npm` command is missing (on hosts whose Node comes from elsewhere,
# apt's npm conflicts with it). Run at deps time, never by a test.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  "$here/scripts/deps.sh" nodejs npm
fi
cd "$here/tests/mcp_sdk"
if [ -f node_modules/.package-lock.json ] && cmp -s package-lock.json node_modules/.corral-installed-lock; then
  exit 0
fi
npm ci --no-audit --no-fund --loglevel=error >/dev/null
cp package-lock.json node_modules/.corral-installed-lock
