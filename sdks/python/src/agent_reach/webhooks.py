"""Verifying the webhooks Agent-Reach sends for tasks submitted with ``callback_url``
(docs/PROTOCOL.md, Webhook callbacks). They follow Standard Webhooks: the ``webhook-id``,
``webhook-timestamp`` and ``webhook-signature`` headers, the signature ``v1,<base64>`` of
HMAC-SHA256 over ``<id>.<timestamp>.<body>`` keyed by the tenant's ``whsec_...`` secret (several,
space-separated, while a rotation's grace runs). Standard library only."""

import base64
import hashlib
import hmac
import json
import time
from typing import Any, Iterable, Mapping, Optional, Union

_PREFIX = "whsec_"


class WebhookVerificationError(Exception):
    """A delivery whose signature does not verify: answer it 4xx and use nothing of it.
    ``problem`` is ``missing_headers``, ``stale_timestamp`` or ``bad_signature``."""

    def __init__(self, problem: str, message: str) -> None:
        super().__init__(message)
        self.problem = problem


def _header(headers: Mapping[str, Any], name: str) -> Optional[str]:
    for key, value in headers.items():
        if key.lower() == name:
            return value[0] if isinstance(value, (list, tuple)) else str(value)
    return None


def _key(secret: str) -> bytes:
    return base64.b64decode(secret[len(_PREFIX):] if secret.startswith(_PREFIX) else secret)


def verify_webhook(
    secret: Union[str, Iterable[str]],
    body: Union[bytes, str],
    headers: Mapping[str, Any],
    tolerance_s: int = 300,
    now: Optional[float] = None,
) -> Any:
    """Verifies a webhook and returns its body, parsed. ``body`` is the raw request body as
    received; ``secret`` the tenant's secret, or several (either verifies, for a rotation).
    Deliveries are at least once: de-duplicate on ``webhook-id``; order stream items by
    ``data["seq"]``. Raises WebhookVerificationError."""
    msg_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signature = _header(headers, "webhook-signature")
    if not msg_id or not timestamp or not signature:
        raise WebhookVerificationError(
            "missing_headers", "webhook-id, webhook-timestamp and webhook-signature are all needed")
    current = time.time() if now is None else now
    if not timestamp.isdigit() or abs(current - int(timestamp)) > tolerance_s:
        raise WebhookVerificationError("stale_timestamp", "webhook-timestamp is too far from now")
    raw = body.encode("utf-8") if isinstance(body, str) else body
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + raw
    given = [base64.b64decode(s[3:]) for s in signature.split(" ") if s.startswith("v1,")]
    secrets = [secret] if isinstance(secret, str) else list(secret)
    for s in secrets:
        expected = hmac.new(_key(s), signed, hashlib.sha256).digest()
        if any(hmac.compare_digest(expected, g) for g in given):
            return json.loads(raw)
    raise WebhookVerificationError("bad_signature", "no webhook-signature matches the secret")
