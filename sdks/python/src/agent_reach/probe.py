"""Answering registry-sync's liveness probes (docs/PROTOCOL.md section 3, "Probes"), with the
agent's own deep health check when it has one."""

import json
import logging
import math
import re
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

log = logging.getLogger("agent_reach")

#: A deep health check: True when the agent can work (model loaded, GPU free, a tool up), or a
#: dict ``{"ok": bool, "dependencies": {name: {"ok": bool, "latency_ms": n, "detail": str}}}``
#: that also says which of its dependencies are up; the probe's ack then carries it as ``health``.
HealthCheck = Callable[[], Union[bool, Dict[str, Any]]]

_DEPENDENCY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/-]{0,63}$")
#: Bounds on the dependency detail an ack carries: dependencies kept, characters of a detail.
MAX_DEPENDENCIES = 32
MAX_DETAIL_CHARS = 256


def _failed(error: str) -> Dict[str, Any]:
    return {"stage": "failed", "error": error[:1024], "error_code": "HEALTH_CHECK_FAILED", "retryable": False}


def _clean_dependency(raw: Any) -> Optional[Dict[str, Any]]:
    """One dependency as an ack carries it, or None when it has no bool ``ok``: ``latency_ms``
    only when a finite number >= 0 (rounded), ``detail`` only when text (cut to 256 characters)."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("ok"), bool):
        return None
    out: Dict[str, Any] = {"ok": raw["ok"]}
    latency = raw.get("latency_ms")
    if isinstance(latency, (int, float)) and not isinstance(latency, bool) and math.isfinite(latency) and latency >= 0:
        out["latency_ms"] = int(round(latency))
    detail = raw.get("detail")
    if isinstance(detail, str):
        out["detail"] = detail[:MAX_DETAIL_CHARS]
    return out


def clean_dependencies(raw: Any) -> Dict[str, Dict[str, Any]]:
    """A health check's dependency map as an ack carries it: well-named entries with a bool ``ok``,
    the first 32 of them. A map of any other shape is dropped (empty), never an error: the
    dependency detail only explains the probe's verdict."""
    out: Dict[str, Dict[str, Any]] = {}
    if not isinstance(raw, Mapping):
        return out
    try:
        for name, dep in raw.items():
            if len(out) >= MAX_DEPENDENCIES:
                break
            if not isinstance(name, str) or not _DEPENDENCY_NAME.fullmatch(name):
                continue
            cleaned = _clean_dependency(dep)
            if cleaned is not None:
                out[name] = cleaned
    except Exception:  # noqa: BLE001 (a map that cannot be read is dropped)
        return {}
    return out


def _dependencies_down(raw: Any) -> Tuple[bool, List[str]]:
    """Whether every dependency of the map the check returned says ``ok`` True, and the names of
    those that do not (all of them, as given, cleaned or not). A map that is not one, or cannot be
    read, is not a yes."""
    if not isinstance(raw, Mapping):
        return False, []
    try:
        down = [str(name) for name, dep in raw.items() if not (isinstance(dep, Mapping) and dep.get("ok") is True)]
    except Exception:  # noqa: BLE001 (a map that cannot be read is not a yes)
        return False, []
    return not down, down


def _health_outcome(answer: Mapping[str, Any], payload_text: str) -> Dict[str, Any]:
    """The outcome of a check that returned a dict: its ``ok`` when it gives one, else whether every
    dependency is ok; either way with the ``health`` field (JSON text) the ack carries."""
    try:
        given = answer.get("ok")
        raw = answer.get("dependencies")
        has_ok = "ok" in answer
    except Exception as err:  # noqa: BLE001 (a dict that cannot be read fails the probe)
        log.warning("health check answer could not be read (%r); probe failed", err)
        return _failed(f"health check failed: its answer could not be read: {type(err).__name__}")
    all_ok, down = _dependencies_down(raw)
    # An explicit verdict wins over the dependencies; one that is not a bool is no yes.
    ok = given is True if has_ok else all_ok
    health = json.dumps({"ok": ok, "dependencies": clean_dependencies(raw)}, separators=(",", ":"))
    if ok:
        return {"stage": "completed", "result": payload_text, "health": health}
    if down:
        why = f"dependencies down: {', '.join(down)}"
    elif has_ok and not isinstance(given, bool):
        why = "its ok is not true or false"
    elif has_ok:
        why = "it returned ok false"
    else:
        why = "it returned no ok and no dependency map"
    log.warning("health check said no (%s); probe failed", why[:200])
    return {**_failed(f"health check failed: {why}"), "health": health}


def probe_outcome(payload_text: str, health: Optional[HealthCheck], timeout_s: float) -> Dict[str, Any]:
    """A probe's outcome: ``completed`` with the payload text as its result, or ``failed`` with
    ``HEALTH_CHECK_FAILED`` when ``health`` returns anything but True or a dict whose verdict is
    yes, raises, or gives no answer within ``timeout_s`` (it runs on a thread of its own, left to
    finish in the background). A dict answer adds ``health``, the cleaned answer as JSON text."""
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
        if isinstance(answer[0], Mapping):
            return _health_outcome(answer[0], payload_text)
        if answer[0] is not True:
            log.warning("health check said no; probe failed")
            return _failed("health check failed: it returned false")
    return {"stage": "completed", "result": payload_text}
