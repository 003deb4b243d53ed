"""The callers' side (docs/PROTOCOL.md section 6): submit tasks by capability, wait for their
results, read callback topics, follow a task's events, cancel. The TypeScript SDK's
``ReachClient`` (apps/worker-sdk/src/client) is the reference; urllib only."""

import re
import time
import uuid
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, TypeVar

from ._backoff import Backoff
from ._http import join_url, request_ok, segment
from .callbacks import CallbackPoller
from .errors import (
    ReachClosedError,
    ReachConnectionError,
    ReachError,
    ReachHttpError,
    ReachProtocolError,
    SubmitFailedError,
    TaskFailedError,
)
from .settings import default, setting
from .task_events import TaskEvent, follow_task_events
from .tracing import current_traceparent

#: Most tasks one ``POST /v1/tasks/batch`` takes.
MAX_BATCH_TASKS = 1000
#: Longest ``wait_ms`` of a waited submission, and of one long poll of a topic.
MAX_SUBMIT_WAIT_S = 60.0
MAX_POLL_WAIT_S = 30.0
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
T = TypeVar("T")


def is_transient(err: BaseException) -> bool:
    """A submit failure that says nothing about whether the task was accepted, and that a try with
    the same task_id may get past: a 5xx, a 429 (backpressure), or no answer at all."""
    if isinstance(err, ReachHttpError):
        return err.status >= 500 or err.status == 429
    return isinstance(err, ReachConnectionError)


def _seconds(name: str, value: float, upper: float) -> float:
    """``value`` checked as a number of seconds from 0 to ``upper``."""
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= upper:
        raise ValueError(f"{name} must be a number of seconds from 0 to {upper:g}, got {value!r}")
    return float(value)


class ReachClient:
    """Submits tasks and awaits their results from this client's own callback topic.

    ``router_url`` defaults to ``REACH_ROUTER_URL`` (else ``http://127.0.0.1:8081``) and
    ``api_key`` to ``REACH_KEY`` (docs/SETTINGS.md, Clients). Every duration is in seconds.
    Safe to share between threads. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(
        self,
        router_url: Optional[str] = None,
        *,
        api_key: Optional[str] = None,
        callback_topic: Optional[str] = None,
        request_timeout_s: float = 10.0,
        poll_wait_s: float = 10.0,
        poll_limit: int = 100,
        max_buffered_results: int = 1000,
        result_timeout_s: float = 300.0,
        submit_max_attempts: int = 8,
        submit_retry_timeout_s: float = 30.0,
        submit_retry_base_s: float = 0.1,
        submit_retry_cap_s: float = 2.0,
    ) -> None:
        self.router_url = (router_url or setting("router_url") or default("router_url") or "").rstrip("/")
        if not re.match(r"^https?://[^/]", self.router_url):
            raise ValueError(f"router_url must be an http:// or https:// URL, got {self.router_url!r}")
        self.api_key = api_key if api_key is not None else setting("api_key")
        topic = callback_topic if callback_topic is not None else f"client-{uuid.uuid4()}"
        if not isinstance(topic, str) or not _ID.match(topic):
            raise ValueError(f"callback_topic must match ^[A-Za-z0-9_.:-]{{1,128}}$, got {topic!r}")
        self.callback_topic = topic
        self.request_timeout_s = _seconds("request_timeout_s", request_timeout_s, 600)
        self.poll_wait_s = _seconds("poll_wait_s", poll_wait_s, MAX_POLL_WAIT_S)
        self.result_timeout_s = _seconds("result_timeout_s", result_timeout_s, 7 * 24 * 3600)
        self.submit_retry_timeout_s = _seconds("submit_retry_timeout_s", submit_retry_timeout_s, 24 * 3600)
        if not isinstance(poll_limit, int) or not 1 <= poll_limit <= 1000:
            raise ValueError(f"poll_limit must be an integer from 1 to 1000, got {poll_limit!r}")
        if not isinstance(submit_max_attempts, int) or not 1 <= submit_max_attempts <= 1000:
            raise ValueError(f"submit_max_attempts must be an integer from 1 to 1000, got {submit_max_attempts!r}")
        if not isinstance(max_buffered_results, int) or max_buffered_results < 1:
            raise ValueError(f"max_buffered_results must be an integer >= 1, got {max_buffered_results!r}")
        self.poll_limit = poll_limit
        self.submit_max_attempts = submit_max_attempts
        self._retry = (submit_retry_base_s, submit_retry_cap_s)
        Backoff(*self._retry)  # checks them now
        self._poller = CallbackPoller(
            lambda after, wait_s: self.read_callbacks(after=after, wait_s=wait_s, limit=self.poll_limit),
            self.poll_wait_s,
            max_buffered_results,
        )
        self._poll_backoff = Backoff(0.25, 5.0)
        self._closed = False

    # ---- submitting ---------------------------------------------------------------------------

    def submit(self, request: Mapping[str, Any], *, wait_s: Optional[float] = None) -> Dict[str, Any]:
        """``POST /v1/tasks``: the router's reply (``task_id``, ``status``, ``agent_id``...).

        ``request`` is a submit body (``capability``, ``payload``, ``priority``, ``timeout_s``...);
        ``callback_topic`` defaults to this client's, and ``task_id`` to a new UUID. Every try
        carries that task_id: a 5xx, a 429 or no answer is tried again with backoff, up to
        ``submit_max_attempts`` tries within ``submit_retry_timeout_s``, then
        :class:`SubmitFailedError` names the task_id to submit again with later (a repeat never
        runs the task twice). A client error (``INVALID_BODY``, ``PAYLOAD_TOO_LARGE``...) raises
        :class:`ReachHttpError` at once.

        ``wait_s`` (up to 60): the router holds the reply until the task is final (``completed``
        with ``result``, or ``dead`` with ``error``) or the wait runs out (the task as it is, not
        final). The result then goes to no callback topic, so ``callback_topic`` may not be given.
        """
        self._check_open()
        body = self._body_of(request, own_topic=wait_s is None)
        query: Dict[str, Any] = {}
        if wait_s is not None:
            if "callback_topic" in request:
                raise ValueError("wait_s answers with the result itself: leave callback_topic out")
            query["wait_ms"] = int(_seconds("wait_s", wait_s, MAX_SUBMIT_WAIT_S) * 1000)
        url = join_url(self.router_url, "/v1/tasks", query)
        timeout_s = self.request_timeout_s + (wait_s or 0)
        return self._with_retry(
            body["task_id"],
            lambda: self._reply("POST", url, dict, body=body, timeout_s=timeout_s, traced=True),
            self.submit_max_attempts,
            time.monotonic() + self.submit_retry_timeout_s,
        )

    def submit_batch(self, requests: Sequence[Mapping[str, Any]]) -> List[Dict[str, Any]]:
        """``POST /v1/tasks/batch``: one item per request, in order, each with ``http_status``
        (202 new, 200 existing) and the reply's fields, or another status with ``error`` (the
        stable code) and ``message``. Each request gets a task_id (its own, or a new UUID) and
        this client's topic unless it names one. Items answered 429 or 5xx, and the whole request
        when no answer came, are sent again with their task_ids as :meth:`submit` does; an item
        still refused so when the tries run out is returned as answered (send it again later with
        its task_id). Raises :class:`SubmitFailedError` (``task_id``: the first unsettled) when
        no answer ever came for some of them."""
        self._check_open()
        if isinstance(requests, (str, bytes, Mapping)):
            raise TypeError("submit_batch takes a sequence of submit bodies")
        if len(requests) > MAX_BATCH_TASKS:
            raise ValueError(f"submit_batch takes at most {MAX_BATCH_TASKS} tasks, got {len(requests)}: split them")
        bodies = [self._body_of(r, own_topic=True) for r in requests]
        results: List[Optional[Dict[str, Any]]] = [None] * len(bodies)
        pending = list(range(len(bodies)))
        url = join_url(self.router_url, "/v1/tasks/batch")
        backoff = Backoff(*self._retry)
        deadline = time.monotonic() + self.submit_retry_timeout_s
        attempt = 0
        while pending:
            attempt += 1
            try:
                reply = self._reply("POST", url, dict, body={"tasks": [bodies[i] for i in pending]}, traced=True)
                items = reply.get("results")
                if not isinstance(items, list) or len(items) != len(pending):
                    raise ReachProtocolError(f"POST {url}", reply, f"{len(pending)} results expected")
                failure: Optional[ReachError] = None
                for i, item in zip(pending, items):
                    results[i] = item
                pending = [i for i in pending if _item_transient(results[i])]
            except ReachError as err:
                if not is_transient(err):
                    raise
                failure = err
            if not pending:
                break
            delay = backoff.next()
            if attempt >= self.submit_max_attempts or time.monotonic() + delay >= deadline or self._closed:
                if failure is None:
                    break  # the last answers stand: each names its task_id and code
                raise SubmitFailedError(bodies[pending[0]]["task_id"], attempt, failure)
            time.sleep(delay)
        return [r for r in results if r is not None]

    def run(
        self,
        capability: str,
        payload: Any = None,
        *,
        timeout_s: Optional[float] = None,
        task_id: Optional[str] = None,
        **fields: Any,
    ) -> Any:
        """Submits and waits: the result value when the task completed; :class:`TaskFailedError`
        when it ended ``failed``, ``dead`` (``error``: the dead-letter reason) or ``cancelled``.
        Submit failures are retried (same task_id) until ``timeout_s`` (default
        ``result_timeout_s``), then :class:`SubmitFailedError`; a result that does not come in
        time raises :class:`ResultTimeoutError`. ``fields`` are more submit-body fields
        (``priority``, ``timeout_s`` of the task as ``task_timeout_s``...)."""
        self._check_open()
        wait = self.result_timeout_s if timeout_s is None else _seconds("timeout_s", timeout_s, 7 * 24 * 3600)
        deadline = time.monotonic() + wait
        if "callback_topic" in fields:
            raise ValueError("run() waits on this client's topic: leave callback_topic out, or use submit()")
        if "task_timeout_s" in fields:
            fields["timeout_s"] = fields.pop("task_timeout_s")
        req = {**fields, "capability": capability, "payload": payload}
        if task_id is not None:
            req["task_id"] = task_id
        body = self._body_of(req, own_topic=True)
        url = join_url(self.router_url, "/v1/tasks")
        submitted = self._with_retry(
            body["task_id"], lambda: self._reply("POST", url, dict, body=body, traced=True), 1 << 30, deadline
        )
        item = self.result(submitted["task_id"], timeout_s=max(0.0, deadline - time.monotonic()))
        if item.get("status") != "completed":
            raise TaskFailedError(item)
        return item.get("result")

    # ---- results and state --------------------------------------------------------------------

    def result(self, task_id: str, *, timeout_s: Optional[float] = None) -> Dict[str, Any]:
        """The task's final item from this client's callback topic (``status`` ``completed``,
        ``failed``, ``dead`` or ``cancelled``; ``result`` or ``error``). Only tasks submitted with
        this client's topic arrive here. :class:`ResultTimeoutError` after ``timeout_s`` (default
        ``result_timeout_s``; the task may still finish); a poll the router refuses for good
        (a 4xx) raises its :class:`ReachHttpError`."""
        wait = self.result_timeout_s if timeout_s is None else _seconds("timeout_s", timeout_s, 7 * 24 * 3600)
        return self._poller.wait(task_id, wait, self._poll_failed)

    def get_task(self, task_id: str) -> Dict[str, Any]:
        """``GET /v1/tasks/:task_id``: its state and timeline (404 ``TASK_NOT_FOUND`` raises)."""
        return self._reply("GET", join_url(self.router_url, f"/v1/tasks/{segment(task_id)}"), dict)

    def cancel(self, task_id: str) -> Dict[str, Any]:
        """``POST /v1/tasks/:task_id/cancel``: ``{task_id, status: "cancelled"}``, also for a task
        already cancelled. A completed or dead task raises :class:`ReachHttpError`
        ``ALREADY_FINAL``; one unknown to this key ``TASK_NOT_FOUND``. No answer is retried (a
        cancel is idempotent) as a submission is."""
        self._check_open()
        url = join_url(self.router_url, f"/v1/tasks/{segment(task_id)}/cancel")
        return self._with_retry(
            task_id, lambda: self._reply("POST", url, dict, body={}), self.submit_max_attempts,
            time.monotonic() + self.submit_retry_timeout_s,
        )

    def read_callbacks(
        self, topic: Optional[str] = None, *, after: str = "0", wait_s: float = 0, limit: int = 100
    ) -> Dict[str, Any]:
        """One page of a callback topic (default this client's): ``{"items": [...], "cursor"}``,
        items after the cursor ``after`` (``"0"``: from the start); waits up to ``wait_s`` (30 at
        most) when there is none. Pass ``cursor`` as ``after`` next time."""
        t = self.callback_topic if topic is None else topic
        wait_ms = int(_seconds("wait_s", wait_s, MAX_POLL_WAIT_S) * 1000)
        url = join_url(
            self.router_url, f"/v1/callbacks/{segment(t)}", {"after": after, "wait_ms": wait_ms, "limit": limit}
        )
        page = self._reply("GET", url, dict, timeout_s=self.request_timeout_s + wait_ms / 1000)
        if not isinstance(page.get("items"), list) or not isinstance(page.get("cursor"), str):
            raise ReachProtocolError(f"GET {url}", page, "items and cursor expected")
        return page

    def events(self, task_id: str, *, last_event_id: Optional[str] = None) -> Iterator[TaskEvent]:
        """Follows ``GET /v1/tasks/:task_id/events``: the task's stages, progress values and output
        chunks in order as they come, ending after its final stage (a finished task's are
        replayed). A stream that breaks off is opened again after the last event seen, so none is
        lost or repeated. A task unknown to this key raises :class:`ReachHttpError`
        ``TASK_NOT_FOUND``. ``for e in client.events(id): if e.event == "chunk": ...``"""
        url = join_url(self.router_url, f"/v1/tasks/{segment(task_id)}/events")
        return follow_task_events(
            url,
            token=self.api_key,
            last_event_id=last_event_id,
            read_timeout_s=self.request_timeout_s + MAX_POLL_WAIT_S,
            stopped=lambda: self._closed,
        )

    # ---- lifecycle ----------------------------------------------------------------------------

    def close(self) -> None:
        """Stops every wait: :meth:`result` raises :class:`ReachClosedError`. Idempotent."""
        self._closed = True
        self._poller.closed = True

    def __enter__(self) -> "ReachClient":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ---- internals ----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise ReachClosedError("client")

    def _body_of(self, request: Mapping[str, Any], *, own_topic: bool) -> Dict[str, Any]:
        if not isinstance(request, Mapping):
            raise TypeError(f"a submit body is a mapping, got {type(request).__name__}")
        if not isinstance(request.get("capability"), str):
            raise ValueError("a submit body needs a capability (a string)")
        body = dict(request)
        task_id = body.setdefault("task_id", str(uuid.uuid4()))
        if not isinstance(task_id, str):
            raise ValueError(f"task_id must be a string, got {task_id!r}")
        if own_topic:
            body.setdefault("callback_topic", self.callback_topic)
        return body

    def _reply(
        self, method: str, url: str, shape: type, *, body: Any = None, timeout_s: Optional[float] = None,
        traced: bool = False,
    ) -> Any:
        # A submission carries the caller's current span, while OpenTelemetry is installed.
        traceparent = current_traceparent() if traced else None
        reply = request_ok(
            method, url, body=body, token=self.api_key, timeout_s=timeout_s or self.request_timeout_s,
            headers={"traceparent": traceparent} if traceparent else None,
        )
        if not isinstance(reply, shape):
            raise ReachProtocolError(f"{method} {url}", reply, f"a JSON {shape.__name__} expected")
        return reply

    def _with_retry(self, task_id: str, send: Callable[[], T], max_attempts: int, deadline: float) -> T:
        backoff = Backoff(*self._retry)
        attempt = 0
        while True:
            attempt += 1
            try:
                return send()
            except ReachError as err:
                if not is_transient(err):
                    raise
                failure = err
            delay = max(backoff.next(), getattr(failure, "retry_after_s", None) or 0)
            if attempt >= max_attempts or time.monotonic() + delay >= deadline or self._closed:
                raise SubmitFailedError(task_id, attempt, failure)
            time.sleep(delay)

    def _poll_failed(self, err: Exception) -> float:
        """A failed poll of the topic: a refusal that asking again will not mend raises, the rest
        backs off."""
        if isinstance(err, ReachHttpError) and 400 <= err.status < 500 and err.status not in (408, 429):
            raise err
        return self._poll_backoff.next()


def _item_transient(item: Any) -> bool:
    status = item.get("http_status") if isinstance(item, dict) else None
    return isinstance(status, int) and (status == 429 or status >= 500)
