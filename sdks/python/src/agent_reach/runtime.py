"""Runtime figures a heartbeat carries (docs/OBSERVABILITY.md, Agent runtime): how late a thread
that sleeps 20 ms at a time wakes (its p99 since the last heartbeat: what a handler holding the
GIL costs everyone else) and the resident set size."""

import os
import resource
import threading
import time
from typing import Any, Dict, List

TICK_S = 0.02


def rss_bytes() -> int:
    """The resident set size now (``/proc/self/statm``), else the peak ``getrusage`` reports."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class RuntimeFigures:
    """Samples the wake-up delay on a daemon thread until :meth:`stop`; :meth:`take` reports."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lags: List[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="reach-runtime", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            start = time.monotonic()
            if self._stop.wait(TICK_S):
                return
            late = max(0.0, time.monotonic() - start - TICK_S)
            with self._lock:
                self._lags.append(late)
                if len(self._lags) > 10_000:
                    del self._lags[: len(self._lags) - 10_000]

    def take(self) -> Dict[str, Any]:
        """The figures since the last take, and a fresh start."""
        with self._lock:
            lags, self._lags = sorted(self._lags), []
        p99 = lags[min(len(lags) - 1, int(0.99 * len(lags)))] if lags else 0.0
        return {"loop_lag_p99_ms": round(p99 * 1000, 1), "rss_bytes": rss_bytes()}

    def stop(self) -> None:
        self._stop.set()
