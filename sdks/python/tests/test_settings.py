"""Client settings read from the environment, with the earlier spellings warned about."""

import unittest

from agent_reach import settings
from agent_reach.settings import default, setting


class SettingsTest(unittest.TestCase):
    def setUp(self):
        settings._warned.clear()

    def test_reads_the_one_spelling_stripped_and_falls_back_to_the_default(self):
        self.assertEqual(setting("api_key", {"REACH_KEY": " k1 "}), "k1")
        self.assertEqual(setting("registry_url", {}), "http://127.0.0.1:8080")
        self.assertEqual(setting("router_url", {"REACH_ROUTER_URL": ""}), "http://127.0.0.1:8081")
        self.assertIsNone(setting("agent_id", {}))
        self.assertEqual(default("redis_url"), "redis://127.0.0.1:6379")

    def test_an_earlier_spelling_works_with_one_warning_line_naming_the_new_one(self):
        with self.assertLogs("agent_reach", "WARNING") as logs:
            self.assertEqual(setting("api_key", {"REACH_API_KEY": "old-key"}), "old-key")
            self.assertEqual(setting("api_key", {"REACH_API_KEY": "old-key"}), "old-key")
            self.assertEqual(setting("agent_id", {"AGENT_ID": "a1"}), "a1")
        self.assertEqual(
            [r.getMessage() for r in logs.records],
            [
                "REACH_API_KEY is deprecated and will be ignored from the next release: set REACH_KEY instead",
                "AGENT_ID is deprecated and will be ignored from the next release: set REACH_AGENT_ID instead",
            ],
        )
        self.assertTrue(all("\n" not in r.getMessage() for r in logs.records))

    def test_the_new_spelling_wins_without_a_warning(self):
        with self.assertNoLogs("agent_reach", "WARNING") if hasattr(self, "assertNoLogs") else _nothing():
            env = {"REACH_REGISTRY_URL": "http://new:1", "REGISTRY_URL": "http://old:2"}
            self.assertEqual(setting("registry_url", env), "http://new:1")


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


if __name__ == "__main__":
    unittest.main()
