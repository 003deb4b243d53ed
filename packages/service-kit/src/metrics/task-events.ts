import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { EventSink, EventSinkStats, TaskEvent } from '@agent-reach/events';

/** Latency buckets (seconds) from a millisecond hand-off to a long-running agent's work. */
export const STAGE_LATENCY_BUCKETS = [
  0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900,
];

/** What {@link observeTaskEvents} records besides forwarding each event. */
export interface TaskEventObserverOptions {
  registry: Registry;
  /** Each stage is logged once through `logger.child({ module: 'task-events' })`. */
  logger: Logger;
  /** Called with each event after it was counted, e.g. to remember recent tasks. Must not throw. */
  onEvent?: (event: TaskEvent) => void;
  /**
   * Most distinct `capability` label values the latency histogram keeps; later ones are counted
   * under {@link OTHER_CAPABILITY}, so callers naming made-up capabilities cannot grow the scrape
   * without bound. @default 256
   */
  maxCapabilityLabels?: number;
}

/** Most distinct `reason` labels of `reach_task_retries_total`; the retry reasons are a short fixed list. */
const MAX_REASON_LABELS = 32;

/** The `capability` label of stages of capabilities past the label limit. */
export const OTHER_CAPABILITY = '_other';

/** A label value for each of at most `max` distinct values, then `_other` for the rest. */
export function boundedLabel(max: number): (value: string) => string {
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= max) return OTHER_CAPABILITY;
    seen.add(value);
    return value;
  };
}

/**
 * Wraps an {@link EventSink} so that every task stage this instance records is also:
 * - counted in `reach_task_events_total{stage}` (so `stage="dead"` counts dead letters and
 *   `stage="retried"` retries, as soon as the code that decides them writes their events);
 * - a retry also in `reach_task_retries_total{reason}` (`receipt_timeout`, `failed`,
 *   `agent_offline`, `lease_lapse`, …: why the attempt was given up on);
 * - timed in `reach_task_stage_latency_seconds{stage,capability}` when the event carries a
 *   latency: `sent` = accepted → sent (delivery), `received` = sent → received (receipt),
 *   `completed`/`failed` = received → result (execution);
 * - logged as one JSON line with `task_id` and `trace_id`, so a trace id found anywhere leads
 *   to every log line of the task.
 * The sink's InfluxDB counters become `reach_events_*` metrics. Everything here is O(1) and
 * synchronous, like `write()` itself: observing never slows dispatch.
 */
export function observeTaskEvents(sink: EventSink, opts: TaskEventObserverOptions): EventSink {
  const { registry } = opts;
  const log = opts.logger.child({ module: 'task-events' });
  const events = new Counter({
    name: 'reach_task_events_total',
    help: 'Task stages recorded by this instance (sent, received, completed, failed, retried, dead, …)',
    labelNames: ['stage'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'reach_task_stage_latency_seconds',
    help: 'Time to reach a stage from the one before: sent = accepted→sent (delivery), received = sent→received (receipt), completed/failed = received→result (execution)',
    labelNames: ['stage', 'capability'] as const,
    buckets: STAGE_LATENCY_BUCKETS,
    registers: [registry],
  });
  const retries = new Counter({
    name: 'reach_task_retries_total',
    help: 'Task attempts given up on and retried, by reason (receipt_timeout, failed, agent_offline, lease_lapse, …)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const capabilityLabel = boundedLabel(opts.maxCapabilityLabels ?? 256);
  const reasonLabel = boundedLabel(MAX_REASON_LABELS);
  registerEventSinkMetrics(registry, () => sink.stats());
  return {
    write(event: TaskEvent): void {
      sink.write(event);
      events.inc({ stage: event.stage });
      if (event.stage === 'retried')
        retries.inc({ reason: reasonLabel(event.reason || 'unknown') });
      if (
        typeof event.latency_ms === 'number' &&
        Number.isFinite(event.latency_ms) &&
        event.latency_ms >= 0
      ) {
        latency.observe(
          { stage: event.stage, capability: capabilityLabel(event.capability) },
          event.latency_ms / 1000,
        );
      }
      // A line per stage of every task: at debug, as the task's timeline and InfluxDB hold the
      // stages anyway, and at info they would cost more than recording them.
      log.debug(
        {
          task_id: event.task_id,
          trace_id: event.trace_id,
          stage: event.stage,
          capability: event.capability,
          agent_id: event.agent_id,
          attempt: event.attempt,
          latency_ms: event.latency_ms,
        },
        'task stage',
      );
      opts.onEvent?.(event);
    },
    flush: () => sink.flush(),
    close: () => sink.close(),
    stats: () => sink.stats(),
  };
}

/**
 * Exposes an event sink's counters: `reach_events_written_total`, `reach_events_dropped_total`,
 * `reach_events_write_failures_total` (InfluxDB write requests that failed, retries included)
 * and `reach_events_buffered`. Read at scrape time.
 */
export function registerEventSinkMetrics(registry: Registry, stats: () => EventSinkStats): void {
  const counter = (name: string, help: string, pick: (s: EventSinkStats) => number) => {
    let seen = 0;
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        // The sink's counters only go up; a Counter is advanced by the difference.
        const now = pick(stats());
        if (now > seen) this.inc(now - seen);
        seen = Math.max(seen, now);
      },
    });
  };
  counter('reach_events_written_total', 'Task events InfluxDB acknowledged', (s) => s.written);
  counter(
    'reach_events_dropped_total',
    'Task events given up on (buffer full, retries exhausted, rejected, left at shutdown)',
    (s) => s.dropped,
  );
  counter(
    'reach_events_write_failures_total',
    'InfluxDB write requests that failed, each retry counted',
    (s) => s.failedWrites,
  );
  new Gauge({
    name: 'reach_events_buffered',
    help: 'Task events held in memory, waiting for a write to InfluxDB',
    registers: [registry],
    collect() {
      this.set(stats().buffered);
    },
  });
}
