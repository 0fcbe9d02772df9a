#!/usr/bin/env python3
"""A harness in another language: ask corral how to confine a command, spawn
what it printed, and report how the command ended, as JSON on stdout.

    spawn_wrapped.py [--corral PATH] [--save FILE | --load FILE] WRAP_ARGS...

WRAP_ARGS go to `corral wrap --json` unchanged, for example
    --backend bubblewrap --best-effort --mode read-only -- sh -c 'echo hi > out.txt'
(bubblewrap is partial: without --best-effort, corral refuses to wrap.)

--save FILE  only wrap: write the ConfinedArgv JSON to FILE, spawn nothing.
--load FILE  only spawn: read a ConfinedArgv saved by --save (no wrapping).

The report: {"wrap": {"exit_code", "stderr", "error": the {"kind", "code",
"message"} corral printed when it refused, else null} | null, "confined": {...} | null,
"spawned", "exit_code", "stdout", "stderr", "denied": [denial signatures
found in stderr], "runner_failure": the matched fatal signature or null}.
The script exits 0 once it has printed a report, 2 on bad usage.
Standard library only.
"""
import json
import os
import subprocess
import sys


def runner_failure(rule, exit_code, stderr_text):
    """RunnerFailureRule.Matches, as corral's seed defines it."""
    # 1. The exit-code gate.
    if exit_code == 0:
        return None
    allowed = rule.get("allowedExitCodes") or []
    if allowed and exit_code not in allowed:
        return None
    # 2. Drop whole lines that are informational (trimmed, case-insensitive).
    informational = {line.strip().lower() for line in rule.get("informationalLines") or []}
    remaining = [line.strip().lower() for line in stderr_text.split("\n")]
    remaining = [line for line in remaining if line not in informational]
    # 3. The first fatal signature found, case-insensitively.
    for signature in rule.get("fatalSignatures") or []:
        needle = signature.lower()
        if needle and any(needle in line for line in remaining):
            return signature
    return None


def usage(message):
    sys.stderr.write("spawn_wrapped.py: %s\n%s" % (message, __doc__))
    sys.exit(2)


def main(argv):
    corral = os.environ.get("CORRAL_BIN", "corral")
    save = load = None
    while argv and argv[0] in ("--corral", "--save", "--load"):
        if len(argv) < 2:
            usage(argv[0] + " needs a value")
        option, value, argv = argv[0], argv[1], argv[2:]
        if option == "--corral":
            corral = value
        elif option == "--save":
            save = value
        else:
            load = value
    if save and load:
        usage("--save and --load cannot be combined")

    report = {"wrap": None, "confined": None, "spawned": False, "exit_code": None, "stdout": "",
              "stderr": "", "denied": [], "runner_failure": None}
    if load:
        with open(load, encoding="utf-8") as f:
            confined = json.load(f)
    else:
        if not argv:
            usage("no arguments for `corral wrap`")
        wrapped = subprocess.run([corral, "wrap", "--json"] + argv, capture_output=True, text=True)
        report["wrap"] = {"exit_code": wrapped.returncode, "stderr": wrapped.stderr, "error": None}
        if wrapped.returncode != 0:
            try:
                report["wrap"]["error"] = json.loads(wrapped.stdout).get("error")
            except ValueError:
                pass
            print(json.dumps(report, indent=2))
            return 0
        confined = json.loads(wrapped.stdout)
    report["confined"] = confined
    if save:
        with open(save, "w", encoding="utf-8") as f:
            json.dump(confined, f)
        print(json.dumps(report, indent=2))
        return 0

    # Spawn exactly the printed argv: no shell, nothing added.
    ran = subprocess.run(confined["argv"], capture_output=True, text=True, stdin=subprocess.DEVNULL)
    report.update(spawned=True, exit_code=ran.returncode, stdout=ran.stdout, stderr=ran.stderr)
    report["denied"] = [s for s in confined.get("denialSignatures", []) if s.lower() in ran.stderr.lower()]
    for rule in confined.get("runnerFailureRules", []):
        matched = runner_failure(rule, ran.returncode, ran.stderr)
        if matched is not None:
            report["runner_failure"] = matched
            break
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
