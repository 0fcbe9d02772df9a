#!/usr/bin/env python3
"""The Python binding against the built libcorral.so ($CORRAL_LIBRARY): the
docstring's harness, the typed errors, a prepared process, and what a refused
write leaves (nothing), judged from outside."""

import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corral  # noqa: E402


class Binding(unittest.TestCase):
    def setUp(self):
        self.workspace = tempfile.mkdtemp(prefix="corral-py-ws.")
        self.scratch = tempfile.mkdtemp(prefix="corral-py-scratch.")

    def tearDown(self):
        for root in (self.workspace, self.scratch):
            for dirpath, dirnames, filenames in os.walk(root, topdown=False):
                for name in filenames:
                    os.unlink(os.path.join(dirpath, name))
                for name in dirnames:
                    os.rmdir(os.path.join(dirpath, name))
            os.rmdir(root)

    def test_a_harness_in_a_few_lines(self):
        with corral.ExecutorSet(toml='[sandbox]\nmode = "workspace-write"\n', workspace=self.workspace,
                                scratch_root=self.scratch) as tools:
            agent = tools.executor("agent-1")
            result = agent.run_command("echo hi; echo there >&2; touch made; exit 3")
            self.assertEqual((result.exit_code, result.stdout, result.stderr), (3, b"hi\n", b"there\n"))
            self.assertEqual(result.protected_left, [])
            self.assertTrue(os.path.exists(os.path.join(self.workspace, "made")))
            self.assertEqual(agent.level, "full")
            self.assertIn("plan", agent.report())
            self.assertEqual(agent.run_command('printf %s "$HOME"').stdout.decode(), agent.home)
            capped = agent.run(["yes"], max_output=100)
            self.assertTrue(capped.output_limit)
            self.assertEqual(len(capped.stdout), 100)
            with self.assertRaises(corral.CorralError) as refused:
                agent.run(["true"], cwd="/")
            self.assertEqual(refused.exception.code, "cwd_outside_workspace")
        self.assertEqual(os.listdir(self.scratch), [])
        with self.assertRaises(corral.CorralError) as after:
            agent.run(["true"])
        self.assertEqual(after.exception.code, "set_closed")

    def test_read_only_from_json_refuses_the_write(self):
        tools = corral.ExecutorSet(json='{"sandbox": {"mode": "read-only"}}', workspace=self.workspace,
                                   scratch_root=self.scratch)
        result = tools.executor("ro").run(["touch", "refused"])
        self.assertNotEqual(result.exit_code, 0)
        self.assertFalse(os.path.exists(os.path.join(self.workspace, "refused")))
        tools.close()
        with self.assertRaises(corral.CorralError) as closed:
            tools.executor("ro")
        self.assertEqual(closed.exception.code, "set_closed")

    def test_a_prepared_process_and_a_bad_policy(self):
        with self.assertRaises(corral.CorralError) as bad:
            corral.ExecutorSet(json='{"sandbox": {"no_such_key": true}}', workspace=self.workspace,
                               scratch_root=self.scratch)
        self.assertEqual(bad.exception.code, "policy")
        with corral.ExecutorSet(workspace=self.workspace, scratch_root=self.scratch,
                                toml="[sandbox]\n") as tools:
            process = tools.executor("p").prepare(["sh", "-c", 'tr a-z A-Z; exit 9'], env={"X": "1"})
            with self.assertRaises(corral.CorralError) as early:
                process.wait()
            self.assertEqual(early.exception.code, "not_started")
            process.start()
            os.write(process.stdin, b"loud\n")
            process.close_stdin()
            self.assertEqual(os.read(process.stdout, 100), b"LOUD\n")
            self.assertEqual(process.wait(), (9, 0, "command"))
            self.assertEqual(process.protected_left(), [])
            process.close()


if __name__ == "__main__":
    unittest.main()
