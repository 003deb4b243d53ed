"""Answering registry-sync's liveness probes (docs/PROTOCOL.md section 3, "Probes"), with the
agent's own deep health check when it has one."""

import json
import logging
import threading
from typing import Any, Callable, Dict, List, Optional

log = logging.getLogger("agent_reach")

#: A deep health check: True when the agent can work (model loaded, GPU free, a tool up).
HealthCheck = Callable[[], bool]


def _failed(error: str) -> Dict[str, Any]:
    return {"stage": "failed", "error": error[:1024], "error_code": "HEALTH_CHECK_FAILED", "retryable": False}


def probe_outcome(payload_text: str, health: Optional[HealthCheck], timeout_s: float) -> Dict[str, Any]:
    """A probe's outcome: ``completed`` with the payload text as its result, or ``failed`` with
    ``HEALTH_CHECK_FAILED`` when ``health`` returns anything but True, raises, or gives no answer
    within ``timeout_s`` (it runs on a thread of its own, left to finish in the background)."""
    try:
        json.loads(payload_text)
    except ValueError:
        return {"stage": "failed", "error": "payload is not valid JSON text", "error_code": "INVALID_PAYLOAD",
                "retryable": False}
    if health is not None:
        answer: List[Any] = []

        def ask() -> None:
            try:
                answer.append(health())
            except Exception as err:  # noqa: BLE001 (a failing check fails the probe)
                answer.append(err)

        t = threading.Thread(target=ask, name="reach-health", daemon=True)
        t.start()
        t.join(timeout_s)
        if not answer:
            log.warning("health check gave no answer within %g s; probe failed", timeout_s)
            return _failed(f"health check failed: no answer within {timeout_s:g} s")
        if isinstance(answer[0], Exception):
            log.warning("health check raised %r; probe failed", answer[0])
            return _failed(f"health check failed: {type(answer[0]).__name__}: {answer[0]}")
        if answer[0] is not True:
            log.warning("health check said no; probe failed")
            return _failed("health check failed: it returned false")
    return {"stage": "completed", "result": payload_text}
