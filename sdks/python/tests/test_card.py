"""AgentCard options of an Agent: checked before registering, merged into its placement."""

import unittest

from agent_reach import Agent
from agent_reach.card import read_card

CARD = {
    "name": "Recipe Agent",
    "version": "1.0.0",
    "skills": [{"id": "recipes.find", "name": "Find recipes", "tags": ["cooking"]}],
    "capabilities": {"extensions": [{"uri": "urn:agent-reach:placement:v1",
                                     "params": {"region": "eu-west", "tags": ["gpu"]}}]},
}


def agent(**options):
    return Agent("http://127.0.0.1:9", "chef-1", {"recipes.find": lambda t: 1}, **options)


class CardTest(unittest.TestCase):
    def test_an_inline_card_is_sent_and_its_placement_is_the_agents(self):
        a = agent(card=CARD, tags=["fast"], channel="pull")
        self.assertEqual(a._body["card"], CARD)
        self.assertEqual((a.region, a.tags), ("eu-west", ("fast", "gpu")))
        self.assertEqual(a._body["tags"], ["fast"])  # registry-sync merges the card's itself
        self.assertEqual(agent(card=CARD, region="us").region, "us")

    def test_bad_card_options_are_refused_before_anything_is_sent(self):
        cases = [
            (dict(card=CARD, card_url="http://127.0.0.1/card.json"), "not both"),
            (dict(card_url="ftp://x/card.json"), "http"),
            (dict(card_url="http://127.0.0.1/card.json", channel="pull"), "inline"),
            (dict(card={**CARD, "skills": [{"id": "other"}]}), "without a handler: other"),
            (dict(card={**CARD, "skills": [{"id": "_probe"}]}), "reserved"),
            (dict(card={"skills": []}), "name"),
        ]
        for options, message in cases:
            with self.subTest(options=options), self.assertRaisesRegex(ValueError, message):
                agent(**options)
        self.assertEqual(agent(card_url="http://127.0.0.1/card.json")._body["card_url"], "http://127.0.0.1/card.json")

    def test_the_placement_extension_is_checked(self):
        bad = {**CARD, "capabilities": {"extensions": [{"uri": "urn:agent-reach:placement:v1",
                                                        "params": {"region": "eu west"}}]}}
        with self.assertRaisesRegex(ValueError, "params.region"):
            read_card(bad)
        self.assertEqual(read_card({"name": "n", "skills": []}).skills, ())


if __name__ == "__main__":
    unittest.main()
