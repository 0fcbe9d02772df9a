#!/usr/bin/env bash
# The main job on the built-in default policy: one read that is allowed, and a
# secret read, a write outside the workspace and a network call that are all
# denied. Each denial is then checked from outside the sandbox.
set -uo pipefail
build=${1:-build}
here=$(cd "$(dirname "$0")/.." && pwd)
corral="$here/$build/src/corral"
demo=$(mktemp -d /var/tmp/corral-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir "$demo/project"
echo "notes from the project" > "$demo/project/notes.txt"
echo "hunter2-secret-token" > "$demo/secret.txt"
audit="$demo/audit.jsonl"
cd "$demo/project"

step() {
  printf '\n\033[1m$ corral run -- %s\033[0m\n' "${*@Q}"
  "$corral" run --audit "$audit" -- "$@"
  printf '\033[2m(exit %d)\033[0m\n' "$?"
}

echo "workspace: $demo/project (the default policy: read+write here, system trees read-only, no network)"
step cat notes.txt
step cat ../secret.txt
step sh -c 'echo owned > ../outside.txt'
step sh -c 'echo owned > /usr/local/bin/evil'
step bash -c 'echo hello > /dev/tcp/127.0.0.1/80'

printf '\n\033[1mchecked from outside the sandbox\033[0m\n'
verdict() { if eval "$2"; then echo "  ok      $1"; else echo "  FAILED  $1"; failed=1; fi; }
failed=0
verdict "the writes outside the workspace left no file" '[ ! -e "$demo/outside.txt" ] && [ ! -e /usr/local/bin/evil ]'
verdict "the secret file is untouched" '[ "$(cat "$demo/secret.txt")" = hunter2-secret-token ]'
verdict "the audit trail has one spawned and one exited record per run" \
  '[ "$(grep -c "\"event\":\"spawned\"" "$audit")" = 5 ] && [ "$(grep -c "\"event\":\"exited\"" "$audit")" = 5 ]'
printf '\n\033[1maudit trail\033[0m (%s)\n' "$audit"
cut -c1-160 "$audit"
exit $failed
