"""Ack signatures agree with the TypeScript protocol package (signAck) and the shell recipe."""

import unittest

from agent_reach.signature import sign_ack, signing_text, with_signature

FIELDS = ["task_id", "hand-1", "stage", "completed", "agent_id", "cli-1", "instance_id", "cli-1-a",
          "epoch", "1", "attempt", "1", "result", '{"text":"héllo ✓"}', "duration_ms", "5"]
KEY = "ab" * 32
# signAck(FIELDS, KEY) from packages/protocol/src/ack-signature.ts.
EXPECTED = "80c7105737a9c2433b61861cdbb68dd2894ddefa1784c8f4ebbb9aded7c95fc3"


class SignatureTest(unittest.TestCase):
    def test_text_counts_bytes_not_characters(self):
        self.assertEqual(signing_text(["task_id", "t1", "stage", "received"]), b"7:task_id2:t15:stage8:received")
        self.assertIn('21:{"text":"héllo ✓"}'.encode(), signing_text(FIELDS))

    def test_same_signature_as_the_typescript_package(self):
        self.assertEqual(sign_ack(FIELDS, KEY), EXPECTED)

    def test_sig_field_is_appended_and_not_signed(self):
        signed = with_signature(FIELDS, KEY)
        self.assertEqual(signed[-2:], ["sig", EXPECTED])
        self.assertEqual(sign_ack(signed, KEY), EXPECTED)


if __name__ == "__main__":
    unittest.main()
