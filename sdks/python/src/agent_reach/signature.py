"""Ack signatures (docs/PROTOCOL.md section 4, "Signed acks").

The signed text is every field and value of the entry except ``sig``, in the order written,
each as ``<byte length>:<bytes>``; the signature is HMAC-SHA256 of it, lower-case hex, under
the text of the register reply's ``ack_key``.
"""

import hashlib
import hmac
from typing import List, Sequence

SIG_FIELD = "sig"


def signing_text(fields: Sequence[str]) -> bytes:
    """The bytes a signature covers: ``fields`` is the flat list ``[name, value, name, value, ...]``."""
    out = bytearray()
    for i in range(0, len(fields) - 1, 2):
        name, value = fields[i], fields[i + 1]
        if name == SIG_FIELD:
            continue
        for part in (name.encode("utf-8"), value.encode("utf-8")):
            out += str(len(part)).encode("ascii") + b":" + part
    return bytes(out)


def sign_ack(fields: Sequence[str], ack_key: str) -> str:
    """HMAC-SHA256 (hex) of :func:`signing_text` under ``ack_key`` used as text."""
    return hmac.new(ack_key.encode("utf-8"), signing_text(fields), hashlib.sha256).hexdigest()


def with_signature(fields: Sequence[str], ack_key: str) -> List[str]:
    """The fields with ``sig`` appended."""
    return [*fields, SIG_FIELD, sign_ack(fields, ack_key)]
