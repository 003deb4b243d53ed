"""ReachClient against a scripted router: retries with one task_id, typed errors with stable
codes, batch items sent again, results read from the topic, events resumed after a break."""

import socket
import time
import unittest

from agent_reach import (
    ReachClient,
    ReachClosedError,
    ReachConnectionError,
    ReachHttpError,
    ResultTimeoutError,
    SubmitFailedError,
    TaskFailedError,
)
from stub_router import StubRouter

FAST = {"submit_retry_base_s": 0.01, "submit_retry_cap_s": 0.02, "request_timeout_s": 2}


def item(task_id, status, **extra):
    return {"id": "1-0", "task_id": task_id, "status": status, "capability": "c", "agent_id": "a",
            "attempt": 1, "completed_at": 1, **extra}


class SubmitTest(unittest.TestCase):
    def setUp(self):
        self.router = StubRouter()
        self.client = ReachClient(self.router.url, api_key="k-1", callback_topic="me", **FAST)

    def tearDown(self):
        self.client.close()
        self.router.close()

    def test_a_503_and_a_429_are_sent_again_with_the_same_task_id_and_the_key(self):
        self.router.queue("POST /v1/tasks",
                          (503, {"error": "NO_AGENT", "message": "none", "task_id": "x"}),
                          (429, {"error": "AT_CAPACITY", "message": "full"}),
                          (202, {"task_id": "t-1", "status": "sent", "agent_id": "a"}))
        reply = self.client.submit({"capability": "echo", "payload": {"n": 1}})
        self.assertEqual(reply["status"], "sent")
        sent = self.router.sent("POST /v1/tasks")
        self.assertEqual(len(sent), 3)
        ids = {r["body"]["task_id"] for r in sent}
        self.assertEqual(len(ids), 1, "every try carries one task_id")
        self.assertEqual(sent[0]["body"]["callback_topic"], "me")
        self.assertEqual(sent[0]["headers"]["authorization"], "Bearer k-1")

    def test_a_retry_waits_at_least_the_replys_retry_after(self):
        self.router.queue("POST /v1/tasks",
                          (503, {"error": "STORE_UNAVAILABLE", "message": "x"}, {"retry-after": "0.4"}),
                          (202, {"task_id": "t", "status": "sent"}))
        started = time.monotonic()
        self.client.submit({"capability": "echo"})
        self.assertGreaterEqual(time.monotonic() - started, 0.4)
        self.assertEqual(len(self.router.sent("POST /v1/tasks")), 2)

    def test_a_client_error_raises_at_once_with_its_stable_code(self):
        self.router.queue("POST /v1/tasks", (400, {"error": "INVALID_BODY", "message": "body/payload", "task_id": "t-2"}))
        with self.assertRaises(ReachHttpError) as caught:
            self.client.submit({"capability": "echo", "task_id": "t-2"})
        err = caught.exception
        self.assertEqual((err.code, err.status, err.task_id), ("INVALID_BODY", 400, "t-2"))
        self.assertEqual(len(self.router.sent("POST /v1/tasks")), 1)

    def test_out_of_tries_names_the_task_id_and_the_last_code(self):
        client = ReachClient(self.router.url, submit_max_attempts=3, **FAST)
        self.router.queue("POST /v1/tasks", *[(503, {"error": "STORE_UNAVAILABLE", "message": "x"})] * 3)
        with self.assertRaises(SubmitFailedError) as caught:
            client.submit({"capability": "echo", "task_id": "mine-1"})
        err = caught.exception
        self.assertEqual((err.task_id, err.attempts, err.code, err.status), ("mine-1", 3, "STORE_UNAVAILABLE", 503))
        self.assertIsInstance(err.last_error, ReachHttpError)

    def test_no_answer_is_a_connection_error_and_is_retried(self):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]  # closed again: nothing listens there
        client = ReachClient(f"http://127.0.0.1:{port}", submit_max_attempts=2, **FAST)
        with self.assertRaises(SubmitFailedError) as caught:
            client.submit({"capability": "echo"})
        self.assertEqual(caught.exception.attempts, 2)
        self.assertIsNone(caught.exception.code)
        self.assertIsInstance(caught.exception.last_error, ReachConnectionError)
        self.assertIsInstance(caught.exception.last_error, OSError)

    def test_a_waited_submission_asks_for_wait_ms_and_takes_no_topic(self):
        self.router.queue("POST /v1/tasks", (200, {"task_id": "t", "status": "completed", "result": 5}))
        reply = self.client.submit({"capability": "echo"}, wait_s=2.5)
        self.assertEqual(reply["result"], 5)
        sent = self.router.sent("POST /v1/tasks")[0]
        self.assertTrue(sent["path"].endswith("?wait_ms=2500"))
        self.assertNotIn("callback_topic", sent["body"])
        with self.assertRaisesRegex(ValueError, "callback_topic"):
            self.client.submit({"capability": "echo", "callback_topic": "x"}, wait_s=1)
        with self.assertRaisesRegex(ValueError, "wait_s"):
            self.client.submit({"capability": "echo"}, wait_s=61)

    def test_bad_input_gets_clear_errors_before_anything_is_sent(self):
        with self.assertRaisesRegex(ValueError, "capability"):
            self.client.submit({"payload": 1})
        with self.assertRaisesRegex(TypeError, "mapping"):
            self.client.submit(["echo"])
        with self.assertRaisesRegex(ValueError, "callback_topic"):
            ReachClient(self.router.url, callback_topic="no spaces")
        with self.assertRaisesRegex(ValueError, "router_url"):
            ReachClient("127.0.0.1:8081")
        with self.assertRaisesRegex(ValueError, "at most 1000"):
            self.client.submit_batch([{"capability": "c"}] * 1001)
        with self.assertRaisesRegex(ValueError, "callback_topic"):
            self.client.run("c", 1, callback_topic="elsewhere")
        with self.assertRaisesRegex(ValueError, "max_buffered_results"):
            ReachClient(self.router.url, max_buffered_results=0)
        self.assertEqual(self.router.requests, [])

    def test_a_batch_sends_again_only_the_items_answered_429_or_503(self):
        self.router.queue("POST /v1/tasks/batch",
                          (200, {"results": [
                              {"http_status": 202, "task_id": "a", "status": "sent"},
                              {"http_status": 503, "task_id": "b", "error": "NO_AGENT", "message": "x"},
                              {"http_status": 400, "task_id": "c", "error": "PARENT_DEADLINE_NEAR", "message": "x"},
                          ]}),
                          (200, {"results": [{"http_status": 202, "task_id": "b", "status": "sent"}]}))
        items = self.client.submit_batch([
            {"capability": "c", "task_id": "a"}, {"capability": "c", "task_id": "b"}, {"capability": "c", "task_id": "c"},
        ])
        self.assertEqual([(i["task_id"], i["http_status"]) for i in items], [("a", 202), ("b", 202), ("c", 400)])
        second = self.router.sent("POST /v1/tasks/batch")[1]["body"]["tasks"]
        self.assertEqual([t["task_id"] for t in second], ["b"])
        self.assertEqual(second[0]["callback_topic"], "me")

    def test_closed_refuses_new_work(self):
        self.client.close()
        self.client.close()
        with self.assertRaises(ReachClosedError):
            self.client.submit({"capability": "c"})


class ResultTest(unittest.TestCase):
    def setUp(self):
        self.router = StubRouter()
        self.client = ReachClient(self.router.url, callback_topic="me", poll_wait_s=0.2, **FAST)

    def tearDown(self):
        self.client.close()
        self.router.close()

    def test_result_skips_output_items_and_keeps_others_for_later(self):
        self.router.queue("GET /v1/callbacks/me",
                          (200, {"items": [item("t1", "progress", progress=0.5), item("t2", "completed", result=2)],
                                 "cursor": "5-0"}),
                          (200, {"items": [item("t1", "completed", result=1)], "cursor": "6-0"}))
        self.assertEqual(self.client.result("t1", timeout_s=5)["result"], 1)
        self.assertEqual(self.client.result("t2", timeout_s=5)["result"], 2)
        polls = self.router.sent("GET /v1/callbacks/me")
        self.assertEqual(len(polls), 2)
        self.assertIn("after=5-0", polls[1]["path"])

    def test_a_result_that_does_not_come_times_out(self):
        def empty_page_after_wait(h):
            time.sleep(0.1)  # a long poll finding nothing
            h.send_response(200)
            h.send_header("content-type", "application/json")
            h.end_headers()
            h.wfile.write(b'{"items":[],"cursor":"0"}')
        self.router.queue("GET /v1/callbacks/me", *[empty_page_after_wait] * 50)
        started = time.monotonic()
        with self.assertRaises(ResultTimeoutError) as caught:
            self.client.result("never", timeout_s=0.3)
        self.assertEqual(caught.exception.task_id, "never")
        self.assertLess(time.monotonic() - started, 2)

    def test_run_returns_the_result_or_raises_task_failed_with_the_reason(self):
        self.router.queue("POST /v1/tasks", (202, {"task_id": "r1", "status": "sent"}), (202, {"task_id": "r2", "status": "sent"}))
        self.router.queue("GET /v1/callbacks/me",
                          (200, {"items": [item("r1", "completed", result={"ok": True})], "cursor": "1-0"}),
                          (200, {"items": [item("r2", "dead", error="max_attempts")], "cursor": "2-0"}))
        self.assertEqual(self.client.run("c", {"x": 1}, task_id="r1", timeout_s=5), {"ok": True})
        with self.assertRaises(TaskFailedError) as caught:
            self.client.run("c", None, task_id="r2", timeout_s=5, priority=9)
        self.assertEqual((caught.exception.status, caught.exception.error), ("dead", "max_attempts"))
        self.assertEqual(self.router.sent("POST /v1/tasks")[1]["body"]["priority"], 9)

    def test_a_poll_refused_for_good_raises_instead_of_waiting_out_the_timeout(self):
        self.router.queue("GET /v1/callbacks/me", (403, {"error": "FORBIDDEN", "message": "no"}))
        with self.assertRaises(ReachHttpError) as caught:
            self.client.result("t", timeout_s=30)
        self.assertEqual(caught.exception.code, "FORBIDDEN")


def sse(events, cut=False):
    """A reply writing ``events`` as an event stream; ``cut``: the connection drops after them."""
    def write(h):
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("connection", "close")
        h.end_headers()
        h.wfile.write(b"retry: 1000\n\n")
        for i, event, data in events:
            h.wfile.write(f"id: {i}\nevent: {event}\ndata: {data}\n\n".encode())
        h.wfile.flush()
        if cut:
            h.close_connection = True
    return write


class EventsTest(unittest.TestCase):
    def test_events_resume_after_the_last_seen_and_end_at_the_final_stage(self):
        router = StubRouter()
        try:
            router.queue("GET /v1/tasks/t%2F1/events",
                         sse([("1", "stage", '{"stage":"accepted","at":1}'), ("2", "chunk", '{"at":2,"attempt":1,"chunk":"hi"}')], cut=True),
                         sse([("3", "stage", '{"stage":"completed","at":3}')]))
            client = ReachClient(router.url, **FAST)
            events = list(client.events("t/1"))
            self.assertEqual([(e.id, e.event) for e in events], [("1", "stage"), ("2", "chunk"), ("3", "stage")])
            self.assertEqual(events[1].data["chunk"], "hi")
            self.assertTrue(events[-1].final)
            second = router.sent("GET /v1/tasks/t%2F1/events")[1]
            self.assertEqual(second["headers"]["last-event-id"], "2")
        finally:
            router.close()

    def test_an_unknown_task_raises_task_not_found(self):
        router = StubRouter()
        try:
            router.queue("GET /v1/tasks/nope/events", (404, {"error": "TASK_NOT_FOUND", "message": "x"}))
            with self.assertRaises(ReachHttpError) as caught:
                list(ReachClient(router.url, **FAST).events("nope"))
            self.assertEqual(caught.exception.code, "TASK_NOT_FOUND")
        finally:
            router.close()


if __name__ == "__main__":
    unittest.main()
