"""Following a task's ``GET /v1/tasks/:task_id/events`` (docs/PROTOCOL.md section 6, "Following
a task"): server-sent events, opened again after the last event seen when the stream breaks off."""

import json
import random
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional

from ._http import NO_ANSWER, parse_body
from .errors import ReachHttpError

#: Stages after which a task's event stream ends.
FINAL_STAGES = frozenset({"completed", "dead", "cancelled"})


@dataclass(frozen=True)
class TaskEvent:
    """One event: ``event`` is ``stage``, ``progress``, ``chunk`` or ``truncated``; ``data`` its
    JSON object; ``id`` resumes the stream after it (opaque text)."""

    event: str
    id: str
    data: Dict[str, Any]

    @property
    def final(self) -> bool:
        """True for the task's final stage (``completed``, ``dead`` or ``cancelled``)."""
        return self.event == "stage" and self.data.get("stage") in FINAL_STAGES


def parse_sse_block(lines: List[str]) -> Dict[str, str]:
    """The ``id``, ``event`` and ``data`` of one event's lines (comments skipped, data lines joined)."""
    out: Dict[str, str] = {}
    for line in lines:
        if not line or line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            out["data"] = value if "data" not in out else out["data"] + "\n" + value
        elif field in ("id", "event"):
            out[field] = value
    return out


def follow_task_events(
    url: str,
    *,
    token: Optional[str],
    last_event_id: Optional[str],
    read_timeout_s: float,
    stopped: Callable[[], bool],
    retry_base_s: float = 0.25,
    retry_cap_s: float = 5.0,
) -> Iterator[TaskEvent]:
    """Yields the task's events until its final stage. A lost connection or a 5xx is retried with
    backoff and ``Last-Event-ID``, so no event is lost or repeated; another error reply (404
    ``TASK_NOT_FOUND``) raises :class:`ReachHttpError`. Ends early once ``stopped()``."""
    last = last_event_id
    failures = 0
    while not stopped():
        headers = {"accept": "text/event-stream"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        if last is not None:
            headers["last-event-id"] = last
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=read_timeout_s) as res:
                block: List[str] = []
                for raw in res:
                    line = raw.decode("utf-8").rstrip("\r\n")
                    if line:
                        block.append(line)
                        continue
                    e = parse_sse_block(block)
                    block = []
                    if "event" not in e or "data" not in e or "id" not in e:
                        continue
                    last = e["id"]
                    failures = 0
                    event = TaskEvent(e["event"], e["id"], json.loads(e["data"]))
                    yield event
                    if event.final:
                        return
        except urllib.error.HTTPError as err:
            with err:
                body = parse_body(err.read())
            if err.code < 500:
                raise ReachHttpError("GET", url, err.code, body) from None
        except NO_ANSWER:
            pass  # broke off: opened again after the last event seen
        failures += 1
        delay = min(retry_cap_s, retry_base_s * 2 ** min(failures - 1, 16))
        time.sleep(delay * random.uniform(0.8, 1.2))
