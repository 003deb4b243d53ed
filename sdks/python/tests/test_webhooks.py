"""verify_webhook against a signature the npm standardwebhooks package made (1.1.1)."""

import unittest

from agent_reach.webhooks import WebhookVerificationError, verify_webhook

SECRET = "whsec_cHl0aG9uLXNkay13ZWJob29rLXRlc3Qta2V5LTMyYnk="
BODY = ('{"type":"task.completed","timestamp":"2026-12-05T10:00:00.000Z","data":{"task_id":"t1",'
        '"status":"completed","result":{"text":"héllo ✓"},"seq":1}}')
# new Webhook(SECRET).sign('msg_1-0', new Date(1796464800000), BODY) in node.
HEADERS = {
    "Webhook-Id": "msg_1-0",
    "Webhook-Timestamp": "1796464800",
    "Webhook-Signature": "v1,aBYhFuJ8JwH3BvojinSeZO2wUXUouBnCskXbsbtwZwo=",
}
NOW = 1796464800 + 10


class VerifyWebhookTest(unittest.TestCase):
    def test_verifies_the_standardwebhooks_signature(self):
        got = verify_webhook(SECRET, BODY.encode("utf-8"), HEADERS, now=NOW)
        self.assertEqual(got["data"]["result"], {"text": "héllo ✓"})
        self.assertEqual(verify_webhook([SECRET], BODY, HEADERS, now=NOW)["data"]["seq"], 1)

    def test_either_secret_of_a_rotation(self):
        two = dict(HEADERS, **{"Webhook-Signature": "v1,AAAA " + HEADERS["Webhook-Signature"]})
        other = "whsec_" + "b" * 44
        self.assertEqual(verify_webhook([other, SECRET], BODY, two, now=NOW)["type"], "task.completed")

    def test_refusals(self):
        cases = [
            (lambda: verify_webhook(SECRET, BODY + " ", HEADERS, now=NOW), "bad_signature"),
            (lambda: verify_webhook("whsec_" + "b" * 44, BODY, HEADERS, now=NOW), "bad_signature"),
            (lambda: verify_webhook(SECRET, BODY, HEADERS, now=NOW + 3600), "stale_timestamp"),
            (lambda: verify_webhook(SECRET, BODY, {}, now=NOW), "missing_headers"),
        ]
        for run, problem in cases:
            with self.assertRaises(WebhookVerificationError) as caught:
                run()
            self.assertEqual(caught.exception.problem, problem)


if __name__ == "__main__":
    unittest.main()
