"""The Python binding's side of bench/bench_executor.cc: CALLS calls of
Executor.run(["/bin/true"]) timed in Python, after one to warm up; prints
each call's milliseconds, one a line.

    bench_executor.py WORKSPACE CALLS POLICY_TOML

The binding (bindings/python) comes from $PYTHONPATH, libcorral.so from
$CORRAL_LIBRARY (bench/executor.sh sets both).
"""

import sys
import time

import corral


def main():
    workspace, calls, policy = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    times = []
    with corral.ExecutorSet(toml=policy, workspace=workspace) as tools:
        agent = tools.executor("python")
        agent.run(["/bin/true"])
        for _ in range(calls):
            start = time.perf_counter()
            result = agent.run(["/bin/true"])
            times.append((time.perf_counter() - start) * 1000)
            if result.exit_code != 0:
                sys.exit("bench_executor.py: /bin/true failed: %r" % result)
    print("\n".join("%.4f" % ms for ms in times))


if __name__ == "__main__":
    main()
