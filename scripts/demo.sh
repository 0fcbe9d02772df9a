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

# Everything the sandboxed commands print also goes to $output, to be
# searched from outside afterwards.
output="$demo/output.log"
step() {
  printf '\n\033[1m$ corral run -- %s\033[0m\n' "${*@Q}"
  "$corral" run --audit "$audit" -- "$@" 2>&1 | tee -a "$output"
  printf '\033[2m(exit %d)\033[0m\n' "${PIPESTATUS[0]}"
}

# A listener on the host's loopback: it notes any connection that arrives.
python3 - "$demo" <<'PY' &
import socket, sys, pathlib
demo = pathlib.Path(sys.argv[1])
server = socket.socket()
server.bind(("127.0.0.1", 0))
server.listen(1)
server.settimeout(30)
(demo / "port").write_text(str(server.getsockname()[1]))
try:
    server.accept()
    (demo / "connected").write_text("yes")
except socket.timeout:
    pass
PY
listener=$!
for _ in $(seq 100); do [ -s "$demo/port" ] && break; sleep 0.05; done
port=$(cat "$demo/port")

echo "workspace: $demo/project (the default policy: read+write here, system trees read-only, no network)"
step cat notes.txt
step cat ../secret.txt
step sh -c 'echo owned > ../outside.txt'
step sh -c 'echo owned > /usr/local/bin/evil'
step bash -c "echo hello > /dev/tcp/127.0.0.1/$port"
sleep 0.2
kill "$listener" 2>/dev/null
wait "$listener" 2>/dev/null

printf '\n\033[1mchecked from outside the sandbox\033[0m\n'
verdict() { if eval "$2"; then echo "  ok      $1"; else echo "  FAILED  $1"; failed=1; fi; }
failed=0
verdict "the writes outside the workspace left no file" '[ ! -e "$demo/outside.txt" ] && [ ! -e /usr/local/bin/evil ]'
verdict "the secret's bytes are not in any output" '! grep -q hunter2 "$output"'
verdict "the loopback listener on port $port got no connection" '[ ! -e "$demo/connected" ]'
verdict "the allowed read did print the notes" 'grep -q "notes from the project" "$output"'
verdict "the audit trail has one spawned and one exited record per run" \
  '[ "$(grep -c "\"event\":\"spawned\"" "$audit")" = 5 ] && [ "$(grep -c "\"event\":\"exited\"" "$audit")" = 5 ]'
printf '\n\033[1maudit trail\033[0m (%s)\n' "$audit"
cut -c1-160 "$audit"
exit $failed
