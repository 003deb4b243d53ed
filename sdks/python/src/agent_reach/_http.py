"""JSON over HTTP on urllib, with the SDK's error model: a non-2xx reply raises
:class:`ReachHttpError`, no answer :class:`ReachConnectionError`."""

import http.client
import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from email.message import Message
from typing import Any, Dict, Mapping, Optional, Tuple

from .errors import ReachConnectionError, ReachHttpError

#: Errors that mean no (complete) answer came back.
NO_ANSWER = (urllib.error.URLError, http.client.HTTPException, ConnectionError, socket.timeout, TimeoutError)


def join_url(base: str, path: str, query: Optional[Mapping[str, Any]] = None) -> str:
    """``base`` (its trailing slashes dropped) + ``path`` + the query, ``None`` values left out."""
    url = base.rstrip("/") + path
    params = {k: str(v) for k, v in (query or {}).items() if v is not None}
    return url + ("?" + urllib.parse.urlencode(params) if params else "")


def segment(value: str) -> str:
    """One path segment, escaped (a scoped id's ``/`` becomes ``%2F``)."""
    return urllib.parse.quote(value, safe="")


def parse_body(raw: bytes) -> Any:
    """The JSON of a reply; its text when it is not JSON; None when empty."""
    text = raw.decode("utf-8", "replace")
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def open_request(
    method: str,
    url: str,
    *,
    body: Any = None,
    token: Optional[str] = None,
    timeout_s: float,
    headers: Optional[Dict[str, str]] = None,
) -> Tuple[int, Any, Message]:
    """Sends one request; ``(status, parsed body, headers)`` for any status. Raises
    :class:`ReachConnectionError` when no answer came."""
    h = {"accept": "application/json", **(headers or {})}
    data = None
    if body is not None:
        data = json.dumps(body, separators=(",", ":")).encode("utf-8")
        h["content-type"] = "application/json"
    if token:
        h["authorization"] = f"Bearer {token}"
    req = urllib.request.Request(url, data, h, method=method)
    try:
        with urllib.request.urlopen(req, timeout=timeout_s) as res:
            return res.status, parse_body(res.read()), res.headers
    except urllib.error.HTTPError as err:
        with err:
            return err.code, parse_body(err.read()), err.headers
    except NO_ANSWER as err:
        reason = getattr(err, "reason", err)
        timed_out = isinstance(reason, (socket.timeout, TimeoutError))
        raise ReachConnectionError(f"{method} {url}", timed_out, err) from err


def request_ok(method: str, url: str, **kwargs: Any) -> Any:
    """:func:`open_request`, raising :class:`ReachHttpError` for a status other than 2xx."""
    status, parsed, headers = open_request(method, url, **kwargs)
    if not 200 <= status < 300:
        raise ReachHttpError(method, url, status, parsed, retry_after_s=_seconds(headers.get("retry-after")))
    return parsed


def _seconds(value: Optional[str]) -> Optional[float]:
    """A ``retry-after`` header in seconds (the HTTP-date form is not used by the services)."""
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None
