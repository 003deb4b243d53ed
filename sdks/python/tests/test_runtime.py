"""Runtime figures: a thread holding the GIL shows as wake-up lag; RSS is the process's."""

import time
import unittest

from agent_reach.runtime import RuntimeFigures, rss_bytes


class RuntimeTest(unittest.TestCase):
    def test_a_busy_thread_shows_as_lag_and_rss_is_reported(self):
        figures = RuntimeFigures()
        try:
            time.sleep(0.2)
            calm = figures.take()
            end = time.monotonic() + 0.3
            while time.monotonic() < end:  # holds the GIL most of the time
                sum(range(10_000))
            busy = figures.take()
        finally:
            figures.stop()
        self.assertGreater(calm["rss_bytes"], 1_000_000)
        self.assertGreaterEqual(busy["loop_lag_p99_ms"], calm["loop_lag_p99_ms"])
        self.assertGreater(rss_bytes(), 1_000_000)
        self.assertEqual(set(busy), {"loop_lag_p99_ms", "rss_bytes"})


if __name__ == "__main__":
    unittest.main()
