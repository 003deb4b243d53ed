"""Agent-Reach for Python: an agent that registers with registry-sync, reads tasks from Redis and
reports them on its acks stream, and a caller's client for the router (docs/PROTOCOL.md)."""

from .agent import Agent
from .task import Task, TaskFailed
from .client import ReachClient
from .connection import RedisConnection
from .codecs import MalformedEntry, TaskMessage, decode_task, encode_ack, fields_to_dict
from .errors import (
    ERROR_CODES,
    ReachClosedError,
    ReachConnectionError,
    ReachError,
    ReachHttpError,
    ReachProtocolError,
    ResultTimeoutError,
    SubmitFailedError,
    TaskFailedError,
)
from .registry import RegistryClient
from .settings import setting
from .signature import sign_ack, signing_text, with_signature
from .task_events import TaskEvent
from .webhooks import WebhookVerificationError, verify_webhook

__all__ = [
    "ERROR_CODES",
    "Agent",
    "MalformedEntry",
    "ReachClient",
    "ReachClosedError",
    "ReachConnectionError",
    "ReachError",
    "ReachHttpError",
    "ReachProtocolError",
    "RedisConnection",
    "RegistryClient",
    "ResultTimeoutError",
    "SubmitFailedError",
    "Task",
    "TaskEvent",
    "TaskFailed",
    "TaskFailedError",
    "TaskMessage",
    "decode_task",
    "encode_ack",
    "fields_to_dict",
    "setting",
    "sign_ack",
    "signing_text",
    "with_signature",
    "verify_webhook",
    "WebhookVerificationError",
]
