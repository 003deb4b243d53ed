"""What a handler gets (:class:`Task`) and raises to fail its task (:class:`TaskFailed`)."""

import json
import threading
from typing import Any, Dict, Mapping, Optional

from .codecs import MAX_CHUNKS_PER_ACK, TaskMessage, pool_id, progress_json


class TaskFailed(Exception):
    """Raised by a handler to fail its task with an ``error_code`` and say whether to retry it."""

    def __init__(self, message: str, code: str = "HANDLER_ERROR", retryable: bool = True) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable


class Task:
    """What a handler gets: the task's fields, its payload parsed, and its output calls.

    ``shadow`` is True for a shadow copy of a caller's task, mirrored to this agent while it is in
    observation mode: its result is only compared with the serving agent's and never reaches the
    caller, so a handler should skip side effects (sending email, writing records) and just answer.
    """

    def __init__(self, agent: Any, msg: TaskMessage, stream: str, entry_id: str, pooled: bool) -> None:
        self._agent = agent
        self._stream = stream
        self._entry_id = entry_id
        #: Read from a pool: every ack names the pool and the entry (section 4, Pull agents).
        self._pool_id = pool_id(msg) if pooled else None
        self.task_id = msg.task_id
        self.capability = msg.capability
        self.attempt = msg.attempt
        self.trace_id = msg.trace_id
        self.deadline_ms = msg.deadline_ms
        self.parent_task_id = msg.parent_task_id
        self.traceparent = msg.traceparent
        #: A shadow copy (observation mode): answer, but leave the world unchanged.
        self.shadow = msg.shadow
        self.payload_text = msg.payload
        self.payload: Any = json.loads(msg.payload)
        #: Set when the task was cancelled (a notice on the control stream) or the agent stops
        #: waiting for it: a long handler should check it and return.
        self.cancelled = threading.Event()

    def progress(self, value: Any) -> None:
        """Reports progress: any JSON value up to 4 KiB (a number 0-1 or 0-100, an object)."""
        self._agent._output(self, "progress", progress=progress_json(value))

    def stream(self, *chunks: str) -> None:
        """Appends chunks of output text, in order."""
        for i in range(0, len(chunks), MAX_CHUNKS_PER_ACK):
            part = list(chunks[i : i + MAX_CHUNKS_PER_ACK])
            if not all(isinstance(c, str) for c in part):
                raise TypeError("a chunk is a string")
            self._agent._output(self, "chunk", chunks=json.dumps(part, separators=(",", ":")))

    def submit(self, request: Mapping[str, Any], *, wait_s: Optional[float] = None) -> Dict[str, Any]:
        """Submits a child task (``parent_task_id`` = this task's id: its deadline is this one's
        less a margin, and the loop guard counts its hops), as :meth:`ReachClient.submit` does;
        its result comes to the agent's own callback topic (``task.result(child_id)``)."""
        return self._agent.client.submit({**request, "parent_task_id": self.task_id}, wait_s=wait_s)

    def run(self, capability: str, payload: Any = None, *, timeout_s: Optional[float] = None, **fields: Any) -> Any:
        """Submits a child task and waits for its result, as :meth:`ReachClient.run` does."""
        return self._agent.client.run(capability, payload, timeout_s=timeout_s, parent_task_id=self.task_id, **fields)

    def result(self, task_id: str, *, timeout_s: Optional[float] = None) -> Dict[str, Any]:
        """A child task's final item from the agent's callback topic."""
        return self._agent.client.result(task_id, timeout_s=timeout_s)
