import { Point } from '@influxdata/influxdb-client';
import { EVENT_STAGES, MAX_REASON_CHARS, MEASUREMENT, type TaskEvent } from './types.ts';

const STAGES: ReadonlySet<string> = new Set(EVENT_STAGES);

/** Thrown by {@link eventToLine} for an event that cannot become a valid point. */
export class InvalidTaskEventError extends Error {
  override readonly name = 'InvalidTaskEventError';
  /** The offending property of the event. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** True when `err` is an {@link InvalidTaskEventError}. */
export function isInvalidTaskEventError(err: unknown): err is InvalidTaskEventError {
  return err instanceof InvalidTaskEventError;
}

function requireString(event: TaskEvent, field: 'capability' | 'agent_id' | 'task_id'): string {
  const value: unknown = event[field];
  if (typeof value !== 'string' || value === '') {
    throw new InvalidTaskEventError(field, `${field} must be a non-empty string`);
  }
  return value;
}

let sequence = 0;

/**
 * The event's time in nanoseconds: its millisecond plus a per-process sequence in the
 * sub-millisecond digits. InfluxDB identifies a point by measurement, tags and time, and
 * task_id is a field, so two tasks of one stage, capability and agent within the same
 * millisecond would otherwise overwrite each other.
 */
function uniqueNanos(atMs: number): string {
  sequence = (sequence + 1) % 1_000_000;
  return `${Math.trunc(atMs)}${String(sequence).padStart(6, '0')}`;
}

/**
 * Builds the line-protocol line of one event, nanosecond precision, with the client library's
 * `Point` (which does all escaping). `latency_ms` and `duration_ms` are always float fields —
 * InfluxDB fixes a field's type per shard, so mixing integer and float would reject points —
 * and are left out when missing or not finite.
 * @throws InvalidTaskEventError when a tag, `task_id`, `attempt` or `at` is missing or malformed.
 */
export function eventToLine(event: TaskEvent): string {
  if (typeof event !== 'object' || event === null) {
    throw new InvalidTaskEventError('event', 'event must be an object');
  }
  if (!STAGES.has(event.stage)) {
    throw new InvalidTaskEventError('stage', `stage must be one of ${EVENT_STAGES.join('|')}`);
  }
  if (!Number.isSafeInteger(event.attempt) || event.attempt < 0) {
    throw new InvalidTaskEventError('attempt', 'attempt must be a non-negative integer');
  }
  if (!Number.isFinite(event.at) || event.at < 0) {
    throw new InvalidTaskEventError('at', 'at must be epoch milliseconds');
  }
  const point = new Point(MEASUREMENT)
    .tag('stage', event.stage)
    .tag('capability', requireString(event, 'capability'))
    .tag('agent_id', requireString(event, 'agent_id'))
    .stringField('task_id', requireString(event, 'task_id'))
    .intField('attempt', event.attempt)
    .timestamp(uniqueNanos(event.at));
  // A tenant's task has the scoped id `<tenant>/<task_id>`: its tenant is a tag, so stats can be
  // read per tenant. The default tenant's (bare ids) have none: `"tenant" = ''` finds them.
  const slash = event.task_id.indexOf('/');
  if (slash > 0) point.tag('tenant', event.task_id.slice(0, slash));
  // A failure's code is a tag (few distinct values), so stats can group failures by it.
  if (typeof event.error_code === 'string' && event.error_code !== '')
    point.tag('error_code', event.error_code);
  // A task's priority is a tag (ten values at most), written only above the default 0.
  if (Number.isInteger(event.priority) && (event.priority ?? 0) > 0)
    point.tag('priority', String(event.priority));
  if (typeof event.fallback_for === 'string' && event.fallback_for !== '')
    point.stringField('fallback_for', event.fallback_for);
  if (Number.isFinite(event.latency_ms)) point.floatField('latency_ms', event.latency_ms);
  if (Number.isFinite(event.duration_ms)) point.floatField('duration_ms', event.duration_ms);
  if (typeof event.trace_id === 'string' && event.trace_id !== '') {
    point.stringField('trace_id', event.trace_id);
  }
  if (typeof event.parent_task_id === 'string' && event.parent_task_id !== '')
    point.stringField('parent_task_id', event.parent_task_id);
  if (typeof event.reason === 'string' && event.reason !== '') {
    point.stringField('reason', event.reason.slice(0, MAX_REASON_CHARS));
  }
  const line = point.toLineProtocol();
  // Unreachable with the checks above (the point always has fields), kept for the type.
  if (line === undefined) throw new InvalidTaskEventError('event', 'event has no fields');
  return line;
}
