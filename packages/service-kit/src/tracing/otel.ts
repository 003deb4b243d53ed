/**
 * The OpenTelemetry side of the spans, loaded by start.ts only when an OTLP endpoint is set:
 * a BasicTracerProvider with a Resource naming the service, a BatchSpanProcessor (it reads the
 * `OTEL_BSP_*` settings) and the OTLP/HTTP exporter (it reads `OTEL_EXPORTER_OTLP_*`; JSON).
 */
import type { Logger } from 'pino';
import {
  diag,
  DiagLogLevel,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  RandomIdGenerator,
  type IdGenerator,
} from '@opentelemetry/sdk-trace-base';
import { parseTraceparent } from '../trace-context.ts';
import type { SpanFactory, SpanKindName, StartSpanOptions, TaskSpan } from './spans.ts';

const KINDS: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

const TRACE_ID = /^(?!0{32})[0-9a-f]{32}$/;

/**
 * Random ids, except that the next trace id may be named: a task's root span takes the task's
 * own `trace_id` when it is a W3C one, so its logs, events and spans share one id. Set and
 * taken within one synchronous `startSpan`.
 */
class TaskIds implements IdGenerator {
  next: string | undefined;
  private readonly random = new RandomIdGenerator();
  generateTraceId = (): string => {
    const id = this.next;
    this.next = undefined;
    return id ?? this.random.generateTraceId();
  };
  generateSpanId = (): string => this.random.generateSpanId();
}

class OtelSpan implements TaskSpan {
  readonly traceparent: string;
  constructor(private readonly span: Span) {
    const c = span.spanContext();
    const sampled = (c.traceFlags & 1) === 1; // TraceFlags.SAMPLED
    this.traceparent = `00-${c.traceId}-${c.spanId}-${sampled ? '01' : '00'}`;
  }
  setAttribute(key: string, value: string | number | boolean): void {
    this.span.setAttribute(key, value);
  }
  fail(message: string): void {
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  end(): void {
    this.span.end();
  }
}

/**
 * A span factory exporting over OTLP/HTTP as `serviceName`. The SDK's own warnings and errors (a
 * collector that cannot be reached, spans dropped from a full queue) go to `logger`.
 */
export function otelSpanFactory(serviceName: string, logger?: Logger): SpanFactory {
  if (logger) {
    const log = logger.child({ module: 'otel' });
    const line =
      (level: 'warn' | 'error') =>
      (message: string, ...args: unknown[]) =>
        log[level]({ detail: args.map((a) => (a instanceof Error ? a.message : a)) }, message);
    diag.setLogger(
      {
        error: line('error'),
        warn: line('warn'),
        info: () => undefined,
        debug: () => undefined,
        verbose: () => undefined,
      },
      { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
    );
  }
  const ids = new TaskIds();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    idGenerator: ids,
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  const tracer = provider.getTracer('agent-reach');
  return {
    start(name: string, o: StartSpanOptions): TaskSpan {
      const parent = o.parent ? parseTraceparent(o.parent) : undefined;
      const context = parent
        ? trace.setSpanContext(ROOT_CONTEXT, {
            traceId: parent.traceId,
            spanId: parent.parentId,
            traceFlags: Number.parseInt(parent.flags, 16) & 1, // TraceFlags.SAMPLED
            isRemote: true,
          })
        : ROOT_CONTEXT;
      if (!parent && o.traceId !== undefined && TRACE_ID.test(o.traceId)) ids.next = o.traceId;
      try {
        const span = tracer.startSpan(
          name,
          {
            kind: KINDS[o.kind ?? 'internal'],
            ...(o.attributes ? { attributes: o.attributes } : {}),
          },
          context,
        );
        return new OtelSpan(span);
      } finally {
        ids.next = undefined;
      }
    },
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}
