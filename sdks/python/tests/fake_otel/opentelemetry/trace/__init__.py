"""The subset of ``opentelemetry.trace`` agent_reach.tracing uses; spans land in ``SPANS``."""

import contextlib


class SpanKind:
    INTERNAL = "internal"
    CONSUMER = "consumer"
    PRODUCER = "producer"


class StatusCode:
    ERROR = "error"


class Status:
    def __init__(self, code, description=None):
        self.code, self.description = code, description


SPANS = []


class Span:
    def __init__(self, name, parent, kind, attributes):
        self.name, self.parent, self.kind, self.attributes = name, parent, kind, dict(attributes or {})
        self.status, self.ended = None, False
        self.span_id = f"{len(SPANS) + 1:016x}"
        SPANS.append(self)

    def set_status(self, status):
        self.status = status

    def end(self):
        self.ended = True


class _Tracer:
    def start_span(self, name, context=None, kind=SpanKind.INTERNAL, attributes=None):
        return Span(name, (context or {}).get("span"), kind, attributes)


def get_tracer(name):
    return _Tracer()


def set_span_in_context(span):
    return {"span": span}


@contextlib.contextmanager
def use_span(span, end_on_exit=False, record_exception=True, set_status_on_exception=True):
    try:
        yield span
    except Exception as err:
        span.set_status(Status(StatusCode.ERROR, str(err)))
        raise
    finally:
        if end_on_exit:
            span.end()
