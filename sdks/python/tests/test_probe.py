"""Probes answered with the agent's health check."""

import time
import unittest

from agent_reach.probe import probe_outcome


class ProbeTest(unittest.TestCase):
    def test_without_a_check_the_probe_echoes_its_payload(self):
        self.assertEqual(probe_outcome('{"n":1}', None, 1), {"stage": "completed", "result": '{"n":1}'})

    def test_false_an_exception_or_no_answer_fails_it_with_health_check_failed(self):
        def boom():
            raise RuntimeError("GPU gone")

        def slow():
            time.sleep(2)
            return True

        cases = [(lambda: False, "it returned false"), (lambda: None, "it returned false"),
                 (boom, "RuntimeError: GPU gone"), (slow, "no answer within 0.1 s")]
        for check, why in cases:
            with self.subTest(why=why), self.assertLogs("agent_reach", "WARNING"):
                out = probe_outcome("1", check, 0.1)
                self.assertEqual((out["stage"], out["error_code"], out["retryable"]), ("failed", "HEALTH_CHECK_FAILED", False))
                self.assertIn(why, out["error"])
        self.assertEqual(probe_outcome("1", lambda: True, 1)["stage"], "completed")


if __name__ == "__main__":
    unittest.main()
