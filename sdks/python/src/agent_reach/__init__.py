"""Agent-Reach worker SDK: an agent that registers with registry-sync, reads tasks from its Redis
inbox and reports them on its acks stream (docs/PROTOCOL.md)."""

from .agent import Agent, Task, TaskFailed
from .codecs import MalformedEntry, TaskMessage, decode_task, encode_ack, fields_to_dict
from .registry import ReachHttpError, RegistryClient
from .settings import setting
from .signature import sign_ack, signing_text, with_signature

__all__ = [
    "Agent",
    "MalformedEntry",
    "ReachHttpError",
    "RegistryClient",
    "Task",
    "TaskFailed",
    "TaskMessage",
    "decode_task",
    "encode_ack",
    "fields_to_dict",
    "setting",
    "sign_ack",
    "signing_text",
    "with_signature",
]
