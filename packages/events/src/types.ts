import type { Logger } from 'pino';

/** The InfluxDB measurement every task stage is written to (schema in docs/OBSERVABILITY.md). */
export const MEASUREMENT = 'reach_task_events';

/** Every stage a task event can record, in the order a task usually meets them. */
export const EVENT_STAGES = [
  /** Held until its time: a `delay_ms` / `run_at` submission or a schedule's tick (`reason`: `until=<ms>`). */
  'delayed',
  /** Into its capability's waiting room: no free slot (`reason`: `ahead=<tasks waiting before it>`). */
  'queued',
  'sent',
  'received',
  'completed',
  'failed',
  'retried',
  'dead',
  /** POST /v1/tasks/:id/cancel made the task final (`reason`: the key that cancelled it). */
  'cancelled',
  'probe',
  /** An agent turned DEGRADED (task_id `agent:<agent_id>`, one point per capability). */
  'degraded',
  /** A DEGRADED agent came back (task_id `agent:<agent_id>`, one point per capability). */
  'recovered',
  /** A task's first progress value or output chunk (`latency_ms`: since its receipt). */
  'streaming',
  /** A task's output reached its bound (`reason`: what was kept); later chunks are dropped. */
  'truncated',
] as const;

/** One stage of a task's life: tag `stage` of {@link MEASUREMENT}. */
export type EventStage = (typeof EVENT_STAGES)[number];

/**
 * One point of {@link MEASUREMENT}. Tags: `stage`, `capability`, `agent_id`. Everything else is a
 * field, `task_id` included, so series cardinality grows with agents and capabilities, never tasks.
 *
 * The sink keeps a reference until the next flush: don't mutate an event after writing it.
 */
export interface TaskEvent {
  /** Tag. */
  stage: EventStage;
  /** Tag. */
  capability: string;
  /** Tag. */
  agent_id: string;
  /** String field, not a tag. */
  task_id: string;
  /** Integer field; the first delivery is attempt 1. */
  attempt: number;
  /** The point's timestamp, epoch milliseconds. */
  at: number;
  /** Float field, written only when given (e.g. sent → received). */
  latency_ms?: number;
  /** Float field, written only when given (the handler's run time). */
  duration_ms?: number;
  /** String field, written only when given. */
  trace_id?: string;
  /** String field, written only when given; cut to {@link MAX_REASON_CHARS} characters. */
  reason?: string;
  /** Tag, `failed` points only: the failure's code (`HANDLER_ERROR`, a worker's own…). */
  error_code?: string;
  /** String field, `sent` points of a child task only: the task whose handling submitted it. */
  parent_task_id?: string;
  /** Tag, written only for a task priority above 0 (`priority` on submit, 1–9; none = 0). */
  priority?: number;
  /**
   * String field, `sent` points of a fallback send only: the task's own capability, which had no
   * live agent (the point's `capability` tag is the fallback it was sent to).
   */
  fallback_for?: string;
}

/** Longest `reason` written; longer ones are cut so one stack trace cannot bloat a batch. */
export const MAX_REASON_CHARS = 1024;

/**
 * Counters of a sink. Every accepted point ends up in exactly one of `written` or `dropped`;
 * until then it is `buffered`.
 */
export interface EventSinkStats {
  /** Points InfluxDB acknowledged. */
  written: number;
  /** Points given up on: buffer overflow, retries exhausted, rejected by InfluxDB, invalid, left at close. */
  dropped: number;
  /** Write requests that failed (each retry counts). */
  failedWrites: number;
  /** Points held in memory, waiting for a write or a retry. */
  buffered: number;
  /** The write API in use; `'none'` for a no-op sink or while `'auto'` detection is pending. */
  api: 'v1' | 'v2' | 'none';
}

/** Records task events in InfluxDB without ever blocking or slowing the caller. */
export interface EventSink {
  /** Queues one event. Synchronous, O(1), never throws; when the buffer is full the oldest point is dropped. */
  write(event: TaskEvent): void;
  /** Sends what is buffered now (one attempt per batch, never more than one request in flight). Never rejects. */
  flush(): Promise<void>;
  /** Idempotent: flushes what it can within `closeTimeoutMs`, counts the rest as dropped, stops timers. Never rejects. */
  close(): Promise<void>;
  /** A snapshot of the counters. */
  stats(): EventSinkStats;
}

/** Which InfluxDB write endpoint to use. */
export type InfluxApi = 'auto' | 'v1' | 'v2';

/** Settings of {@link EventSink}; resolved once by `compileEventSinkOptions()`. */
export interface EventSinkOptions {
  /**
   * InfluxDB base URL, e.g. `http://127.0.0.1:8086`.
   * @default undefined → a no-op sink
   */
  url?: string;
  /**
   * Database (v1) or bucket (v2).
   * @default 'reach'
   */
  bucket?: string;
  /**
   * `'v1'`: POST `/write?db=` (InfluxDB 1.x). `'v2'`: `/api/v2/write` through @influxdata/influxdb-client
   * (InfluxDB 1.8+, 2.x, 3.x). `'auto'`: GET `/ping` once and pick v1 below 1.8, else v2.
   * @default 'auto'
   */
  api?: InfluxApi;
  /** API token (v2: `Authorization: Token …`; v1 sends the same header, which InfluxDB 1.8+ accepts). */
  token?: string;
  /**
   * Organization (v2 only; InfluxDB 1.8's compatibility endpoint ignores it).
   * @default ''
   */
  org?: string;
  /**
   * How often buffered points are sent.
   * @default 1000
   */
  flushIntervalMs?: number;
  /**
   * Most points per write request.
   * @default 5000
   */
  batchSize?: number;
  /**
   * Most points held while InfluxDB is slow or down; beyond it the oldest are dropped (counted).
   * In v2 mode the client's retry buffer holds up to as many again.
   * @default 20000
   */
  maxBufferPoints?: number;
  /**
   * Timeout of each HTTP request (ping, CREATE DATABASE, write).
   * @default 2000
   */
  requestTimeoutMs?: number;
  /**
   * Retries of a failed batch (5xx, 429, network errors) before it is dropped.
   * @default 3
   */
  maxRetries?: number;
  /**
   * First retry delay; it doubles per retry (with jitter), capped at 30 s.
   * @default 500
   */
  retryBaseDelayMs?: number;
  /**
   * Longest time `close()` spends flushing.
   * @default 5000
   */
  closeTimeoutMs?: number;
  /**
   * Parent logger; the sink logs through `logger.child({ module: 'events' })`, rate-limited.
   * @default pino() at level info
   */
  logger?: Logger;
}
