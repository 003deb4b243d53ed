"""Probes answered with the agent's health check."""

import json
import time
import unittest

from agent_reach import Agent
from agent_reach.codecs import decode_task, fields_to_dict
from agent_reach.probe import probe_outcome
from agent_reach.task import Task


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

    def test_true_or_false_adds_no_health_field(self):
        self.assertNotIn("health", probe_outcome("1", lambda: True, 1))
        with self.assertLogs("agent_reach", "WARNING"):
            self.assertNotIn("health", probe_outcome("1", lambda: False, 1))


def health_of(out):
    return json.loads(out["health"])


class DependencyHealthTest(unittest.TestCase):
    def test_every_dependency_up_completes_with_the_health_field(self):
        deps = {"model-gateway": {"ok": True, "latency_ms": 12.6, "detail": "v2"}, "vector-db": {"ok": True}}
        out = probe_outcome('{"n":1}', lambda: {"dependencies": deps}, 1)
        self.assertEqual((out["stage"], out["result"]), ("completed", '{"n":1}'))
        self.assertEqual(out["health"], '{"ok":true,"dependencies":{"model-gateway":{"ok":true,"latency_ms":13,'
                                        '"detail":"v2"},"vector-db":{"ok":true}}}')

    def test_a_dependency_down_fails_the_probe_and_is_named(self):
        deps = {"model-gateway": {"ok": False, "detail": "503"}, "cache": {"ok": True}, "vector-db": {"ok": False}}
        with self.assertLogs("agent_reach", "WARNING"):
            out = probe_outcome("1", lambda: {"dependencies": deps}, 1)
        self.assertEqual((out["stage"], out["error_code"], out["retryable"]), ("failed", "HEALTH_CHECK_FAILED", False))
        self.assertEqual(out["error"], "health check failed: dependencies down: model-gateway, vector-db")
        self.assertEqual(health_of(out), {"ok": False, "dependencies": {
            "model-gateway": {"ok": False, "detail": "503"}, "cache": {"ok": True}, "vector-db": {"ok": False}}})

    def test_an_explicit_ok_overrides_the_dependencies(self):
        out = probe_outcome("1", lambda: {"ok": True, "dependencies": {"cache": {"ok": False}}}, 1)
        self.assertEqual(out["stage"], "completed")
        self.assertEqual(health_of(out), {"ok": True, "dependencies": {"cache": {"ok": False}}})
        for ok, why in ((False, "it returned ok false"), ("yes", "its ok is not true or false")):
            with self.subTest(ok=ok), self.assertLogs("agent_reach", "WARNING"):
                out = probe_outcome("1", lambda: {"ok": ok, "dependencies": {"cache": {"ok": True}}}, 1)
                self.assertEqual((out["stage"], out["error_code"]), ("failed", "HEALTH_CHECK_FAILED"))
                self.assertEqual(out["error"], f"health check failed: {why}")
                self.assertEqual(health_of(out), {"ok": False, "dependencies": {"cache": {"ok": True}}})

    def test_dependencies_are_cleaned(self):
        deps = {
            "good": {"ok": True, "latency_ms": 0, "detail": "d" * 300},
            "-leading-dash": {"ok": True},
            "has space": {"ok": True},
            "x" * 65: {"ok": True},
            "tail\n": {"ok": True},
            "string-ok": {"ok": "true"},
            "int-ok": {"ok": 1},
            "not-a-dict": True,
            "bad-figures": {"ok": True, "latency_ms": -1, "detail": 5},
            "nan": {"ok": True, "latency_ms": float("nan")},
            "inf": {"ok": True, "latency_ms": float("inf")},
            "bool-latency": {"ok": True, "latency_ms": True},
            "text-latency": {"ok": True, "latency_ms": "12"},
            "a:b/c.d_e-f": {"ok": True, "latency_ms": 7},
        }
        out = probe_outcome("1", lambda: {"ok": True, "dependencies": deps}, 1)
        self.assertEqual(out["stage"], "completed")
        self.assertEqual(health_of(out)["dependencies"], {
            "good": {"ok": True, "latency_ms": 0, "detail": "d" * 256},
            "bad-figures": {"ok": True}, "nan": {"ok": True}, "inf": {"ok": True},
            "bool-latency": {"ok": True}, "text-latency": {"ok": True},
            "a:b/c.d_e-f": {"ok": True, "latency_ms": 7},
        })

    def test_at_most_32_dependencies_the_first_ones(self):
        deps = {f"dep-{i:02d}": {"ok": True} for i in range(40)}
        out = probe_outcome("1", lambda: {"dependencies": deps}, 1)
        self.assertEqual(out["stage"], "completed")
        self.assertEqual(list(health_of(out)["dependencies"]), [f"dep-{i:02d}" for i in range(32)])

    def test_a_dependency_without_a_bool_ok_is_not_up(self):
        with self.assertLogs("agent_reach", "WARNING"):
            out = probe_outcome("1", lambda: {"dependencies": {"cache": {"ok": True}, "db": {"ok": "true"}}}, 1)
        self.assertEqual(out["stage"], "failed")
        self.assertEqual(out["error"], "health check failed: dependencies down: db")
        self.assertEqual(health_of(out), {"ok": False, "dependencies": {"cache": {"ok": True}}})

    def test_a_malformed_map_is_dropped_and_the_verdict_kept(self):
        out = probe_outcome("1", lambda: {"ok": True, "dependencies": ["db"]}, 1)
        self.assertEqual((out["stage"], health_of(out)), ("completed", {"ok": True, "dependencies": {}}))
        with self.assertLogs("agent_reach", "WARNING"):
            out = probe_outcome("1", lambda: {"ok": False, "dependencies": "db down"}, 1)
        self.assertEqual((out["stage"], health_of(out)), ("failed", {"ok": False, "dependencies": {}}))
        with self.assertLogs("agent_reach", "WARNING"):
            out = probe_outcome("1", lambda: {"dependencies": None}, 1)
        self.assertEqual(out["error"], "health check failed: it returned no ok and no dependency map")

    def test_the_error_is_at_most_1024_characters(self):
        deps = {f"dependency-number-{i:03d}": {"ok": False} for i in range(100)}
        with self.assertLogs("agent_reach", "WARNING"):
            out = probe_outcome("1", lambda: {"dependencies": deps}, 1)
        self.assertEqual(len(out["error"]), 1024)
        self.assertTrue(out["error"].startswith("health check failed: dependencies down: dependency-number-000, "))
        self.assertEqual(len(health_of(out)["dependencies"]), 32)


class FakeRedis:
    """Records the acks an agent writes."""

    def __init__(self):
        self.acks = []

    def execute_command(self, *args):
        self.acks.append(fields_to_dict(list(args[3:])))

    def xack(self, *args):
        pass


class ProbeAckTest(unittest.TestCase):
    def probe_acks(self, health):
        agent = Agent("http://127.0.0.1:9", "probed-1", {"cap": lambda t: 1}, health=health)
        agent._redis = FakeRedis()
        agent.session = {"epoch": 1, "acks_stream": "acks", "group": "workers"}
        msg = decode_task({"task_id": "probe:probed-1:1", "capability": "_probe", "payload": "{}", "attempt": "1"})
        agent._free.acquire()
        agent._run(Task(agent, msg, "inbox", "1-0", False), time.monotonic())
        return agent._redis.acks

    def test_the_health_field_reaches_completed_and_failed_acks(self):
        [ack] = self.probe_acks(lambda: {"dependencies": {"db": {"ok": True}}})
        self.assertEqual((ack["stage"], ack["health"]), ("completed", '{"ok":true,"dependencies":{"db":{"ok":true}}}'))
        with self.assertLogs("agent_reach", "WARNING"):
            [ack] = self.probe_acks(lambda: {"dependencies": {"db": {"ok": False}}})
        self.assertEqual((ack["stage"], ack["error_code"]), ("failed", "HEALTH_CHECK_FAILED"))
        self.assertEqual(ack["health"], '{"ok":false,"dependencies":{"db":{"ok":false}}}')

    def test_a_bool_check_adds_no_health_field(self):
        [ack] = self.probe_acks(lambda: True)
        self.assertEqual(ack["stage"], "completed")
        self.assertNotIn("health", ack)


if __name__ == "__main__":
    unittest.main()
