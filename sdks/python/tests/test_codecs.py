"""Inbox entries decoded and acks encoded as docs/PROTOCOL.md writes them."""

import unittest

from agent_reach.codecs import (
    MalformedEntry,
    decode_task,
    encode_ack,
    failure_code,
    fields_to_dict,
    progress_json,
)
from agent_reach.task import Task


class CodecsTest(unittest.TestCase):
    def test_decodes_an_inbox_entry(self):
        entry = fields_to_dict(["task_id", "acme/t1", "capability", "echo", "payload", '{"n":41}',
                                "attempt", "2", "trace_id", "abc", "callback_topic", "me", "deadline_ms", "0"])
        msg = decode_task(entry)
        self.assertEqual((msg.task_id, msg.capability, msg.payload, msg.attempt), ("acme/t1", "echo", '{"n":41}', 2))
        self.assertEqual((msg.trace_id, msg.callback_topic, msg.deadline_ms), ("abc", "me", 0))

    def test_only_shadow_1_marks_a_shadow_copy(self):
        base = {"task_id": "t1", "capability": "echo", "payload": "{}", "attempt": "1"}
        self.assertIs(decode_task({**base, "shadow": "1"}).shadow, True)
        self.assertIs(decode_task(base).shadow, False)
        for value in ("0", "yes", "true", "", " 1"):
            with self.subTest(value=value):
                self.assertIs(decode_task({**base, "shadow": value}).shadow, False)

    def test_the_handlers_task_says_whether_it_is_a_shadow_copy(self):
        base = {"task_id": "t1", "capability": "echo", "payload": "{}", "attempt": "1"}
        self.assertIs(Task(None, decode_task({**base, "shadow": "1"}), "inbox", "1-0", False).shadow, True)
        self.assertIs(Task(None, decode_task(base), "inbox", "1-0", False).shadow, False)

    def test_refuses_entries_that_are_not_tasks(self):
        for bad in ({"capability": "echo", "attempt": "1"},
                    {"task_id": "t 1", "capability": "echo", "attempt": "1"},
                    {"task_id": "t1", "capability": "echo", "attempt": "0"},
                    {"task_id": "t1", "attempt": "1"}):
            with self.assertRaises(MalformedEntry):
                decode_task(bad)

    def test_encodes_acks_in_order_without_missing_fields(self):
        self.assertEqual(
            encode_ack(task_id="t1", stage="failed", epoch=3, attempt=1, error="boom", error_code=None, retryable=False),
            ["task_id", "t1", "stage", "failed", "epoch", "3", "attempt", "1", "error", "boom", "retryable", "false"],
        )

    def test_failure_codes_and_progress(self):
        self.assertEqual(failure_code("MODEL_NOT_LOADED"), "MODEL_NOT_LOADED")
        self.assertEqual(failure_code("not a code"), "HANDLER_ERROR")
        self.assertEqual(progress_json({"done": 3, "of": 4}), '{"done":3,"of":4}')
        with self.assertRaises(ValueError):
            progress_json("x" * 5000)


if __name__ == "__main__":
    unittest.main()
