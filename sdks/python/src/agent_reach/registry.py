"""The agents' side of registry-sync's HTTP API (docs/PROTOCOL.md sections 1 and 2), on urllib."""

import json
import urllib.error
import urllib.request
from typing import Any, Dict, Optional


class ReachHttpError(Exception):
    """A reply other than 2xx: ``status``, and ``code`` from the body's ``error`` (``STALE_EPOCH``, ...)."""

    def __init__(self, method: str, url: str, status: int, body: Any) -> None:
        self.status = status
        self.code = body.get("error") if isinstance(body, dict) else None
        self.body = body
        message = body.get("message") if isinstance(body, dict) else body
        super().__init__(f"{method} {url}: {status} {self.code or ''} {message or ''}".strip())


class RegistryClient:
    """``register``, ``heartbeat`` and ``deregister`` against registry-sync at ``base_url``."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s

    def register(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /v1/agents/register`` with the API key, if any; the register reply."""
        return self._post("/v1/agents/register", body, self.api_key)

    def heartbeat(self, session: Dict[str, Any], body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /v1/agents/:id/heartbeat`` with the registration's token."""
        return self._post(f"/v1/agents/{session['agent_id']}/heartbeat", body, session["token"])

    def deregister(self, session: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /v1/agents/:id/deregister``: the agent drains and is removed once idle."""
        return self._post(f"/v1/agents/{session['agent_id']}/deregister", {}, session["token"])

    def _post(self, path: str, body: Dict[str, Any], token: Optional[str]) -> Dict[str, Any]:
        url = self.base_url + path
        headers = {"content-type": "application/json"}
        if token:
            headers["authorization"] = f"Bearer {token}"
        req = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                text = res.read().decode("utf-8")
                return json.loads(text) if text else {}
        except urllib.error.HTTPError as err:
            text = err.read().decode("utf-8", "replace")
            try:
                parsed: Any = json.loads(text)
            except ValueError:
                parsed = text
            raise ReachHttpError("POST", url, err.code, parsed) from None
