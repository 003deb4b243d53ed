"""Spans around a task's handling: none, and nothing of OpenTelemetry imported, without the
package; with it (a stand-in in tests/fake_otel), receive under the entry's deliver span, handle
and ack under receive, and ack's traceparent for the completion."""

import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "src")
DELIVER = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

SCRIPT = f"""
import json, sys
from agent_reach.tracing import TaskTrace
t = TaskTrace("t1", "echo", 2, {DELIVER!r})
try:
    with t.handle():
        raise ValueError("bad input")
except ValueError:
    t.failed("ValueError: bad input")
tp = t.ack_traceparent()
t.end()
probe = TaskTrace("p1", "_probe", 1, "")
out = {{"traceparent": tp, "otel_loaded": "opentelemetry" in sys.modules, "probe": probe.ack_traceparent()}}
if out["otel_loaded"]:
    from opentelemetry.trace import SPANS
    out["spans"] = [[s.name, s.parent if isinstance(s.parent, tuple) else s.parent.name, s.kind,
                     s.status.code if s.status else None, s.ended, s.attributes.get("reach.task_id")] for s in SPANS]
print(json.dumps(out))
"""


def run(path):
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.pathsep.join(path)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise AssertionError(done.stderr)
    return json.loads(done.stdout)


class TracingTest(unittest.TestCase):
    def test_without_opentelemetry_nothing_is_imported_and_no_traceparent_is_sent(self):
        out = run([SRC])
        self.assertEqual(out, {"traceparent": None, "otel_loaded": False, "probe": None})

    def test_with_it_the_spans_hang_under_the_deliver_span_and_the_ack_names_its_own(self):
        out = run([SRC, os.path.join(HERE, "fake_otel")])
        self.assertEqual(out["spans"], [
            ["receive", ["remote", DELIVER], "consumer", "error", True, "t1"],
            ["handle", "receive", "internal", "error", True, "t1"],
            ["ack", "receive", "producer", None, True, "t1"],
        ])
        self.assertEqual(out["traceparent"], f"00-{'a' * 32}-{3:016x}-01")
        self.assertIsNone(out["probe"])


if __name__ == "__main__":
    unittest.main()
