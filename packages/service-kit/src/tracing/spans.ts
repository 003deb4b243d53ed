/**
 * The spans' hot-path side: one boolean (`tracing.on`) that every call site checks before it
 * builds anything, and thin calls into the OpenTelemetry SDK, which is loaded only when an OTLP
 * endpoint is configured (start.ts). With tracing off nothing here allocates.
 */

/** Kinds of span, as OpenTelemetry names them. */
export type SpanKindName = 'internal' | 'server' | 'client' | 'producer' | 'consumer';

/** Attribute values a span takes. */
export type SpanAttributes = Record<string, string | number | boolean>;

/** What a span is started with. */
export interface StartSpanOptions {
  /** The parent's W3C `traceparent` (from a stream entry, a request header or a stored task). */
  parent?: string | undefined;
  /**
   * With no valid parent: the trace id to start (32 lowercase hex digits, the task's own
   * `trace_id` when it is one); a new random id otherwise.
   */
  traceId?: string | undefined;
  /** @default 'internal' */
  kind?: SpanKindName;
  attributes?: SpanAttributes;
}

/** A started span. */
export interface TaskSpan {
  /** Its W3C `traceparent`: what a child span, in this process or another, is started under. */
  readonly traceparent: string;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Marks the span failed (status ERROR) with a short message. */
  fail(message: string): void;
  end(): void;
}

/** What start.ts installs once the SDK is loaded. */
export interface SpanFactory {
  start(name: string, options: StartSpanOptions): TaskSpan;
  /** Exports every ended span now. */
  flush(): Promise<void>;
  /** Exports what is left and stops the exporter. */
  shutdown(): Promise<void>;
}

/**
 * Whether this process traces. Checked on the hot path before anything span-related is built:
 * false unless `startTracing` found an OTLP endpoint and loaded the SDK.
 */
export const tracing: { readonly on: boolean } = { on: false };

let factory: SpanFactory | undefined;

/** Installs (or, with undefined, removes) the SDK's span factory and turns `tracing.on` with it. */
export function installSpanFactory(f: SpanFactory | undefined): void {
  factory = f;
  (tracing as { on: boolean }).on = f !== undefined;
}

/**
 * Starts a span. Call only when `tracing.on` is true (it is checked again: a span started
 * otherwise is a no-op whose `traceparent` is '').
 */
export function startSpan(name: string, options: StartSpanOptions = {}): TaskSpan {
  return factory ? factory.start(name, options) : NO_SPAN;
}

/** Ends `span` as failed with `err`'s message when given, else as it stands. */
export function endSpan(span: TaskSpan | undefined, err?: unknown): void {
  if (span === undefined) return;
  if (err !== undefined) span.fail(err instanceof Error ? err.message : 'failed');
  span.end();
}

const NO_SPAN: TaskSpan = {
  traceparent: '',
  setAttribute: () => undefined,
  fail: () => undefined,
  end: () => undefined,
};

/** The factory installed, for start.ts' flush and shutdown. */
export function spanFactory(): SpanFactory | undefined {
  return factory;
}
