"""The errors the SDK raises, each with readonly-by-convention fields to match on (``code``,
``status``, ``task_id``); never match on a message's text. ``ERROR_CODES`` lists the stable codes
of the HTTP API (packages/protocol/src/errors.ts, docs/errors.md) with their HTTP status."""

from typing import Any, Mapping, Optional

#: Stable error code -> HTTP status, as packages/protocol/src/errors.ts (a unit test compares them).
#: A retired code is never reused.
ERROR_CODES: Mapping[str, int] = {
    "INVALID_BODY": 400,
    "INVALID_QUERY": 400,
    "INVALID_PARAMS": 400,
    "INVALID_JSON": 400,
    "JSON_TOO_DEEP": 400,
    "INVALID_DELAY": 400,
    "INVALID_SCHEDULE": 400,
    "INVALID_INPUT_SCHEMA": 400,
    "INVALID_CARD": 400,
    "INVALID_ENDPOINT": 400,
    "UNAUTHORIZED": 401,
    "FORBIDDEN": 403,
    "HOST_NOT_ALLOWED": 403,
    "ORIGIN_NOT_ALLOWED": 403,
    "CARD_URL_NOT_ALLOWED": 403,
    "PUSH_URL_NOT_ALLOWED": 403,
    "ENDPOINT_URL_NOT_ALLOWED": 403,
    "CALLBACK_URL_NOT_ALLOWED": 403,
    "NOT_FOUND": 404,
    "AGENT_NOT_FOUND": 404,
    "TASK_NOT_FOUND": 404,
    "CAPABILITY_NOT_FOUND": 404,
    "SCHEDULE_NOT_FOUND": 404,
    "CARD_NOT_FOUND": 404,
    "ENDPOINT_NOT_FOUND": 404,
    "WEBHOOK_NOT_FOUND": 404,
    "METHOD_NOT_ALLOWED": 405,
    "STALE_EPOCH": 409,
    "NOT_DEAD": 409,
    "ALREADY_FINAL": 409,
    "PARENT_DEADLINE_NEAR": 409,
    "ENDPOINT_READ_ONLY": 409,
    "ACL_NOT_ENABLED": 409,
    "WEBHOOK_SECRET_MISSING": 409,
    "PAYLOAD_TOO_LARGE": 413,
    "UNSUPPORTED_MEDIA_TYPE": 415,
    "AT_CAPACITY": 429,
    "QUEUE_FULL": 429,
    "RATE_LIMITED": 429,
    "AUTH_FAILURES": 429,
    "INTERNAL": 500,
    "CARD_FETCH_FAILED": 502,
    "REGISTRY_UNAVAILABLE": 502,
    "NO_AGENT": 503,
    "STORE_UNAVAILABLE": 503,
    "EVENTS_UNAVAILABLE": 503,
    "NO_SNAPSHOT": 503,
    "REGISTRY_NOT_CONFIGURED": 503,
}


class ReachError(Exception):
    """Base class of every error the SDK raises: ``except ReachError`` catches ours and only ours."""


class ReachHttpError(ReachError):
    """A reply other than 2xx. ``code`` is the body's stable ``error`` (``NO_AGENT``,
    ``STALE_EPOCH``...; see ``ERROR_CODES``), or ``HTTP_<status>`` when the body had none (a
    proxy's page); ``task_id`` is the submission's when the reply names one; ``retry_after_s``
    the reply's ``retry-after`` header, if any."""

    def __init__(self, method: str, url: str, status: int, body: Any, retry_after_s: Optional[float] = None) -> None:
        self.request = f"{method} {url}"
        self.retry_after_s = retry_after_s
        self.status = status
        self.body = body
        b = body if isinstance(body, dict) else {}
        error = b.get("error")
        self.code: str = error if isinstance(error, str) else f"HTTP_{status}"
        self.task_id: Optional[str] = b.get("task_id") if isinstance(b.get("task_id"), str) else None
        message = b.get("message") if b else body
        super().__init__(f"{self.request} answered {status} {self.code}" + (f": {message}" if message else ""))


class ReachConnectionError(ReachError, ConnectionError):
    """No answer: the connection failed or broke, or ``timed_out``. Whether the server acted on
    the request is unknown. Also a ``ConnectionError`` (an ``OSError``)."""

    def __init__(self, request: str, timed_out: bool, cause: BaseException) -> None:
        self.request = request
        self.timed_out = timed_out
        what = "timed out" if timed_out else f"failed: {cause}"
        super().__init__(f"{request} {what}")
        self.__cause__ = cause


class ReachProtocolError(ReachError):
    """A 2xx reply that is not what the API answers (not JSON, a field missing)."""

    def __init__(self, request: str, body: Any, detail: str) -> None:
        self.request = request
        self.body = body
        super().__init__(f"{request}: unexpected reply ({detail})")


class SubmitFailedError(ReachError):
    """A submission that ran out of tries or time on errors that say nothing about whether the
    task was accepted (a 5xx, a 429, no answer). Submit again later with ``task_id``: a repeat
    never runs the task twice. ``code`` and ``status`` are the last try's (None when no answer came)."""

    def __init__(self, task_id: str, attempts: int, last_error: ReachError) -> None:
        self.task_id = task_id
        self.attempts = attempts
        self.last_error = last_error
        self.code: Optional[str] = getattr(last_error, "code", None)
        self.status: Optional[int] = getattr(last_error, "status", None)
        super().__init__(f"task {task_id} not submitted after {attempts} tries: {last_error}")
        self.__cause__ = last_error


class TaskFailedError(ReachError):
    """A task that ended ``failed``, ``dead`` or ``cancelled``. For ``dead``, ``error`` is the
    dead-letter reason: ``max_attempts``, ``deadline``, ``loop``, ``not_retryable``, ``no_agent``
    (stable, safe to match on). ``item`` is the whole callback item or task view."""

    def __init__(self, item: Mapping[str, Any]) -> None:
        self.item = dict(item)
        self.task_id: str = str(item.get("task_id", ""))
        self.status: str = str(item.get("status", ""))
        self.error: Optional[str] = item.get("error")
        super().__init__(f"task {self.task_id} ended {self.status}" + (f": {self.error}" if self.error else ""))


class ResultTimeoutError(ReachError, TimeoutError):
    """The task's result did not arrive within ``timeout_s`` (the task may still finish)."""

    def __init__(self, task_id: str, timeout_s: float) -> None:
        self.task_id = task_id
        self.timeout_s = timeout_s
        super().__init__(f"no result for task {task_id} within {timeout_s:g} s")


class ReachClosedError(ReachError):
    """The client (or agent) was closed: ``what`` says which."""

    def __init__(self, what: str) -> None:
        self.what = what
        super().__init__(f"the {what} is closed")
