"""The agents' side of registry-sync's HTTP API (docs/PROTOCOL.md sections 1 and 2), on urllib."""

from typing import Any, Dict, Optional

from ._http import join_url, request_ok, segment
from .errors import ReachHttpError

__all__ = ["ReachHttpError", "RegistryClient"]


class RegistryClient:
    """``register``, ``heartbeat`` and ``deregister`` against registry-sync at ``base_url``.
    A refusal raises :class:`ReachHttpError` (its stable ``code``), no answer
    :class:`~agent_reach.errors.ReachConnectionError` (an ``OSError``)."""

    def __init__(self, base_url: str, api_key: Optional[str] = None, timeout_s: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s

    def register(self, body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /v1/agents/register`` with the API key, if any; the register reply."""
        return self._post("/v1/agents/register", body, self.api_key)

    def heartbeat(self, session: Dict[str, Any], body: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /v1/agents/:id/heartbeat`` with the registration's token."""
        return self._post(f"/v1/agents/{segment(session['agent_id'])}/heartbeat", body, session["token"])

    def deregister(self, session: Dict[str, Any]) -> Dict[str, Any]:
        """``POST /v1/agents/:id/deregister``: the agent drains and is removed once idle."""
        return self._post(f"/v1/agents/{segment(session['agent_id'])}/deregister", {}, session["token"])

    def _post(self, path: str, body: Dict[str, Any], token: Optional[str]) -> Dict[str, Any]:
        reply = request_ok("POST", join_url(self.base_url, path), body=body, token=token, timeout_s=self.timeout_s)
        return reply if isinstance(reply, dict) else {}
