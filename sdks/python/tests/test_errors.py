"""The stable error codes and the errors that carry them."""

import os
import re
import unittest

from agent_reach import ERROR_CODES, ReachError, ReachHttpError, SubmitFailedError

PROTOCOL_ERRORS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "packages", "protocol", "src", "errors.ts")


class ErrorCodesTest(unittest.TestCase):
    @unittest.skipUnless(os.path.exists(PROTOCOL_ERRORS), "outside the monorepo")
    def test_the_codes_are_the_protocol_packages(self):
        with open(PROTOCOL_ERRORS, encoding="utf-8") as f:
            text = f.read()
        block = text[text.index("ERROR_CODES = {"): text.index("} as const")]
        codes = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+([A-Z_]+): (\d{3}),", block, re.M)}
        self.assertGreater(len(codes), 30)
        self.assertEqual(dict(ERROR_CODES), codes)

    def test_an_http_error_takes_the_code_from_the_body_or_names_the_status(self):
        e = ReachHttpError("POST", "http://x/v1/tasks", 503, {"error": "NO_AGENT", "message": "none", "task_id": "t"})
        self.assertEqual((e.code, e.status, e.task_id), ("NO_AGENT", 503, "t"))
        self.assertIsInstance(e, ReachError)
        self.assertEqual(ReachHttpError("GET", "http://x", 502, "<html>").code, "HTTP_502")

    def test_submit_failed_carries_the_last_tries_code(self):
        last = ReachHttpError("POST", "http://x/v1/tasks", 429, {"error": "AT_CAPACITY"})
        e = SubmitFailedError("t-9", 4, last)
        self.assertEqual((e.task_id, e.attempts, e.code, e.status), ("t-9", 4, "AT_CAPACITY", 429))
        self.assertIs(e.__cause__, last)


if __name__ == "__main__":
    unittest.main()
