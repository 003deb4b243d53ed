"""Observation mode: an Agent started with observe=True registers observing (probes only)."""

import unittest

from agent_reach import Agent


def agent(**options):
    return Agent("http://127.0.0.1:9", "watch-1", {"cap": lambda t: 1}, **options)


class ObserveTest(unittest.TestCase):
    def test_observe_goes_in_the_registration(self):
        self.assertIs(agent(observe=True)._body["observe"], True)

    def test_an_agent_serves_by_default(self):
        self.assertNotIn("observe", agent()._body)


if __name__ == "__main__":
    unittest.main()
