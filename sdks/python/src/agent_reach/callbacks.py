"""Reading a callback topic (docs/PROTOCOL.md section 6): pages by long poll, and the final
items of a client's own topic handed to whoever waits for their task."""

import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Optional

from .errors import ReachClosedError, ReachError, ResultTimeoutError

#: A task's final statuses on its topic; ``progress``, ``chunk`` and ``truncated`` items are not.
FINAL_STATUSES = frozenset({"completed", "failed", "dead", "cancelled"})

#: ``fetch(after, wait_s)`` -> a page ``{"items": [...], "cursor": "..."}``.
FetchPage = Callable[[str, float], Dict[str, Any]]


class CallbackPoller:
    """Long-polls one topic in whichever thread waits: one poll at a time however many threads
    wait, final items nobody waits for yet kept (at most ``max_buffered``, oldest forgotten
    first), the cursor kept between waits."""

    def __init__(self, fetch: FetchPage, poll_wait_s: float, max_buffered: int) -> None:
        self._fetch = fetch
        self._poll_wait_s = poll_wait_s
        self._max = max_buffered
        self._arrived: "OrderedDict[str, Dict[str, Any]]" = OrderedDict()
        self._lock = threading.Lock()
        self._polling = threading.Lock()
        self.cursor = "0"
        self.closed = False

    def wait(self, task_id: str, timeout_s: float, on_error: Callable[[Exception], float]) -> Dict[str, Any]:
        """The task's final item. Raises :class:`ResultTimeoutError` after ``timeout_s``,
        :class:`ReachClosedError` once closed, and what ``on_error`` raises for a failed poll
        (else it returns how long to back off)."""
        deadline = time.monotonic() + timeout_s
        while True:
            item = self._take(task_id)
            if item is not None:
                return item
            if self.closed:
                raise ReachClosedError("client")
            left = deadline - time.monotonic()
            if left <= 0:
                raise ResultTimeoutError(task_id, timeout_s)
            if not self._polling.acquire(timeout=min(left, self._poll_wait_s + 1)):
                continue
            try:
                if self._take(task_id) is not None:
                    continue  # another thread's poll brought it
                try:
                    page = self._fetch(self.cursor, min(self._poll_wait_s, left))
                except (ReachError, OSError) as err:
                    delay = on_error(err)
                    time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
                    continue
                self.cursor = page["cursor"]
                for it in page["items"]:
                    self._keep(it)
            finally:
                self._polling.release()

    def _keep(self, item: Dict[str, Any]) -> None:
        if item.get("status") not in FINAL_STATUSES or not isinstance(item.get("task_id"), str):
            return
        with self._lock:
            self._arrived[item["task_id"]] = item
            self._arrived.move_to_end(item["task_id"])
            while len(self._arrived) > self._max:
                self._arrived.popitem(last=False)

    def _take(self, task_id: str) -> Optional[Dict[str, Any]]:
        with self._lock:
            return self._arrived.get(task_id)
