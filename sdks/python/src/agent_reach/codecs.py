"""Inbox entries and acks as the wire protocol writes them (docs/PROTOCOL.md sections 3 and 4)."""

import json
import re
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

PROBE_CAPABILITY = "_probe"
_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_SCOPED_ID = re.compile(r"^(?:[A-Za-z0-9_.:-]{1,128}/)?[A-Za-z0-9_.:-]{1,128}$")
_REGION = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_FAILURE_CODE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
MAX_PROGRESS_BYTES = 4096
MAX_CHUNKS_PER_ACK = 1000
MAX_RENEW_TASK_IDS = 1000


class MalformedEntry(ValueError):
    """An inbox entry that is not a task: acknowledged and skipped, never run."""


@dataclass(frozen=True)
class TaskMessage:
    """One inbox entry, decoded."""

    task_id: str
    capability: str
    payload: str
    attempt: int
    trace_id: str = ""
    callback_topic: str = ""
    deadline_ms: int = 0
    parent_task_id: Optional[str] = None
    #: Placement the task asks for (section 3): routing tags, region and its policy.
    tags: Tuple[str, ...] = ()
    region: str = ""
    region_policy: str = "prefer"
    #: The sender's ``deliver`` span, when it exports OpenTelemetry spans.
    traceparent: str = ""
    #: A shadow copy of a caller's task, mirrored to an agent in observation mode: its result is
    #: only compared with the serving agent's and never reaches the caller.
    shadow: bool = False


def fields_to_dict(fields: Sequence[str]) -> Dict[str, str]:
    """A flat ``[name, value, ...]`` list as a dict (the first of a repeated name wins)."""
    out: Dict[str, str] = {}
    for i in range(0, len(fields) - 1, 2):
        out.setdefault(fields[i], fields[i + 1])
    return out


def _int(text: Optional[str]) -> Optional[int]:
    if text is None or not re.fullmatch(r"-?\d{1,16}", text):
        return None
    return int(text)


def decode_task(entry: Mapping[str, str]) -> TaskMessage:
    """Decodes an inbox entry's fields; raises :class:`MalformedEntry` when it is not a task."""
    task_id = entry.get("task_id")
    if task_id is None or not _SCOPED_ID.match(task_id):
        raise MalformedEntry("task_id missing or invalid")
    capability = entry.get("capability")
    if capability is None or not _ID.match(capability):
        raise MalformedEntry("capability missing or invalid")
    attempt = _int(entry.get("attempt"))
    if attempt is None or attempt < 1:
        raise MalformedEntry("attempt missing or invalid")
    # Constraints that cannot be read must not run anywhere they should not: an error, never
    # "no constraint". Empty values mean none; a region without a policy is `prefer`.
    tags: Tuple[str, ...] = ()
    if entry.get("tags"):
        try:
            parsed = json.loads(entry["tags"])
        except ValueError:
            parsed = None
        if not isinstance(parsed, list) or not all(isinstance(t, str) and _ID.match(t) for t in parsed):
            raise MalformedEntry("tags must be a JSON array of tag ids")
        tags = tuple(parsed)
    region = entry.get("region") or ""
    policy = "prefer"
    if region:
        if not _REGION.match(region):
            raise MalformedEntry("region is invalid")
        policy = entry.get("region_policy") or "prefer"
        if policy not in ("strict", "prefer"):
            raise MalformedEntry("region_policy must be strict or prefer")
    return TaskMessage(
        task_id=task_id,
        capability=capability,
        payload=entry.get("payload", "null"),
        attempt=attempt,
        trace_id=entry.get("trace_id", ""),
        callback_topic=entry.get("callback_topic", ""),
        deadline_ms=_int(entry.get("deadline_ms")) or 0,
        parent_task_id=entry.get("parent_task_id") or None,
        tags=tags,
        region=region,
        region_policy=policy,
        traceparent=entry.get("traceparent", ""),
        # Only the exact mark: any other value is a real task, whose side effects must happen.
        shadow=entry.get("shadow") == "1",
    )


def placement_miss(
    msg: TaskMessage, region: Optional[str], tags: Iterable[str], capabilities: Iterable[str]
) -> Optional[str]:
    """Why an agent registered with ``region``, ``tags`` and ``capabilities`` may not take the task
    (section 4, "Check the placement"): ``"region"`` (a strict region of elsewhere), ``"tags"`` (a
    tag it neither has nor serves), or None when it may."""
    if msg.region and msg.region_policy == "strict" and (region or "") != msg.region:
        return "region"
    offered = set(tags) | set(capabilities)
    if any(t not in offered for t in msg.tags):
        return "tags"
    return None


def pool_id(msg: TaskMessage) -> str:
    """The pool a task was read from, as its acks name it: the capability, prefixed
    ``<tenant>/`` when the task_id is scoped."""
    tenant, sep, _ = msg.task_id.partition("/")
    return f"{tenant}/{msg.capability}" if sep else msg.capability


def encode_ack(**fields: Any) -> List[str]:
    """An ack's fields in the order given, ``None`` left out, values as text (bools ``true``/``false``)."""
    out: List[str] = []
    for name, value in fields.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        out += [name, str(value)]
    return out


def failure_code(code: Optional[str]) -> str:
    """``code`` when it is a failure code (``^[A-Z][A-Z0-9_]{0,63}$``), else ``HANDLER_ERROR``."""
    return code if code is not None and _FAILURE_CODE.match(code) else "HANDLER_ERROR"


def progress_json(value: Any) -> str:
    """A progress value as JSON text, refused over 4 KiB."""
    text = json.dumps(value, separators=(",", ":"))
    if len(text.encode("utf-8")) > MAX_PROGRESS_BYTES:
        raise ValueError(f"progress value is longer than {MAX_PROGRESS_BYTES} bytes as JSON")
    return text
