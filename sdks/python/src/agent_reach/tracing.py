"""OpenTelemetry spans around a task's handling (docs/PROTOCOL.md sections 3 and 4,
``traceparent``), only while the ``opentelemetry-api`` package is installed: nothing of it is
imported otherwise, and a task runs the same. ``receive`` (a child of the router's ``deliver``
span the entry names) holds ``handle``, current while the handler runs so that its own spans nest
under it, and ``ack``, whose ``traceparent`` the completion or failure carries so that
registry-sync's ``apply`` span becomes its child."""

import importlib.util
from contextlib import contextmanager
from typing import Any, Dict, Iterator, Optional

_otel: Any = None
_loaded = False


def _load() -> Any:
    """The OpenTelemetry API (``trace``, ``propagator``), or None when it is not installed."""
    global _otel, _loaded
    if not _loaded:
        _loaded = True
        if importlib.util.find_spec("opentelemetry") is not None:
            from opentelemetry import trace
            from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

            _otel = (trace, TraceContextTextMapPropagator())
    return _otel


class TaskTrace:
    """The spans of one task's handling; every method does nothing when tracing is off (no
    OpenTelemetry, a probe, or an entry without ``traceparent``)."""

    def __init__(self, task_id: str, capability: str, attempt: int, traceparent: str) -> None:
        self._attrs: Dict[str, Any] = {"reach.task_id": task_id, "reach.attempt": attempt}
        otel = _load() if traceparent else None
        self._receive: Any = None
        self._ack: Any = None
        if otel is None:
            return
        trace, propagator = otel
        self._trace, self._propagator = trace, propagator
        self._tracer = trace.get_tracer("agent_reach")
        parent = propagator.extract({"traceparent": traceparent})
        self._receive = self._tracer.start_span(
            "receive", context=parent, kind=trace.SpanKind.CONSUMER,
            attributes={**self._attrs, "reach.capability": capability},
        )

    @contextmanager
    def handle(self) -> Iterator[None]:
        """The ``handle`` span, current while the block runs; an exception marks it failed."""
        if self._receive is None:
            yield
            return
        trace = self._trace
        ctx = trace.set_span_in_context(self._receive)
        span = self._tracer.start_span("handle", context=ctx, attributes=self._attrs)
        with trace.use_span(span, end_on_exit=True, record_exception=True, set_status_on_exception=True):
            yield

    def failed(self, error: str) -> None:
        """Marks the task's ``receive`` span failed (a failure the handler reported)."""
        if self._receive is not None:
            self._receive.set_status(self._trace.Status(self._trace.StatusCode.ERROR, error[:256]))

    def ack_traceparent(self) -> Optional[str]:
        """Starts the ``ack`` span; its ``traceparent`` for the completion or failure ack."""
        if self._receive is None:
            return None
        trace = self._trace
        ctx = trace.set_span_in_context(self._receive)
        self._ack = self._tracer.start_span("ack", context=ctx, kind=trace.SpanKind.PRODUCER, attributes=self._attrs)
        carrier: Dict[str, str] = {}
        self._propagator.inject(carrier, context=trace.set_span_in_context(self._ack))
        return carrier.get("traceparent")

    def end(self) -> None:
        """Ends ``ack`` and ``receive``."""
        for span in (self._ack, self._receive):
            if span is not None:
                span.end()


def current_traceparent() -> Optional[str]:
    """The ``traceparent`` of the caller's current span, for a submission's header (the router's
    spans then hang under it); None without OpenTelemetry or a current span."""
    otel = _load()
    if otel is None:
        return None
    carrier: Dict[str, str] = {}
    otel[1].inject(carrier)
    return carrier.get("traceparent")
