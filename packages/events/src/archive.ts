import { escape } from '@influxdata/influxdb-client';
import { fnv1a } from '@agent-reach/protocol';

/**
 * The InfluxDB measurement a final task's record is archived to, in the database the stage
 * events go to (docs/OBSERVABILITY.md, History). One point per task end.
 */
export const TASK_ARCHIVE_MEASUREMENT = 'task_archive';

/**
 * Longest `record` written, bytes of UTF-8: InfluxDB 1.x keeps string fields up to 64 KB, and
 * the record's other members need room beside a payload and a result cut at their own limit.
 */
export const MAX_ARCHIVE_RECORD_BYTES = 60_000;

/**
 * One point of {@link TASK_ARCHIVE_MEASUREMENT}: a task as it ended. Tags: `tenant` (absent for
 * the default tenant), `capability`, `agent_id` (absent when no agent ever had it), `status`.
 * Everything else is a field. The point's time is `ended_at_ms`; its sub-millisecond digits come
 * from the task_id, so two tasks ending in one millisecond with the same tags stay two points,
 * and archiving a task again rewrites the same point.
 */
export interface ArchivedTaskPoint {
  /** Tag; `''` for the default tenant (no tag written: `"tenant" = ''` finds them). */
  tenant: string;
  /** Tag. */
  capability: string;
  /** Tag: the agent of the last attempt; `''` when none (no tag written). */
  agent_id: string;
  /** Tag: the final status as `GET /v1/tasks/:id` shows it (`completed`, `dead`, `cancelled`). */
  status: string;
  /** String field: the id as stored (`<tenant>/<id>`, bare for the default tenant). */
  task_id: string;
  /** Integer field. */
  attempts: number;
  /** Integer field, epoch ms. */
  created_at_ms: number;
  /** Integer field, epoch ms; also the point's time. */
  ended_at_ms: number;
  /** Integer field: `ended_at_ms − created_at_ms`. */
  duration_ms: number;
  /** String field: the last failure's code; `''` when none. */
  error_code: string;
  /** String field: the stored id of the task whose handling submitted this one; `''` when none. */
  parent_task_id: string;
  /**
   * String field: the JSON of the task's view (`GET /v1/tasks/:id` for its own tenant, ids bare
   * there), with `payload` and `result` left out when the capability does not archive them and
   * each cut to a string of its first bytes when longer than the archive's limit.
   */
  record: string;
  /** Boolean field: the record's `payload` was cut. */
  payload_cut: boolean;
  /** Boolean field: the record's `result` was cut. */
  result_cut: boolean;
}

/** Thrown by {@link archivedTaskToLine} for a point that cannot be written. */
export class InvalidArchivedTaskError extends Error {
  override readonly name = 'InvalidArchivedTaskError';
  /** The offending property. */
  readonly field: string;
  constructor(field: string, message: string) {
    super(message);
    this.field = field;
  }
}

/** True when `err` is an {@link InvalidArchivedTaskError}. */
export function isInvalidArchivedTaskError(err: unknown): err is InvalidArchivedTaskError {
  return err instanceof InvalidArchivedTaskError;
}

/** The point's time in nanoseconds: its end millisecond, then six digits of the task_id's hash. */
export function archiveNanos(point: Pick<ArchivedTaskPoint, 'ended_at_ms' | 'task_id'>): string {
  const sub = String(fnv1a(point.task_id) % 1_000_000).padStart(6, '0');
  return `${Math.trunc(point.ended_at_ms)}${sub}`;
}

function requireInt(point: ArchivedTaskPoint, field: keyof ArchivedTaskPoint): number {
  const value = point[field];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
    throw new InvalidArchivedTaskError(field, `${field} must be a non-negative integer`);
  return value;
}

const quoted = (value: string): string => escape.quoted(value);

/**
 * The line-protocol line of one archived task, nanosecond precision, tags in key order, escaped
 * with the client library's escapers (built by hand: the archive writes one per final task, and
 * the library's `Point` costs several times as much).
 * @throws InvalidArchivedTaskError when a tag, `task_id` or a number is missing or malformed.
 */
export function archivedTaskToLine(point: ArchivedTaskPoint): string {
  for (const field of ['capability', 'status', 'task_id'] as const) {
    if (typeof point[field] !== 'string' || point[field] === '')
      throw new InvalidArchivedTaskError(field, `${field} must be a non-empty string`);
  }
  const attempts = requireInt(point, 'attempts');
  const created = requireInt(point, 'created_at_ms');
  const ended = requireInt(point, 'ended_at_ms');
  let line = TASK_ARCHIVE_MEASUREMENT;
  if (point.agent_id !== '') line += `,agent_id=${escape.tag(point.agent_id)}`;
  line += `,capability=${escape.tag(point.capability)},status=${escape.tag(point.status)}`;
  if (point.tenant !== '') line += `,tenant=${escape.tag(point.tenant)}`;
  return (
    `${line} attempts=${attempts}i,created_at_ms=${created}i,` +
    `duration_ms=${Math.max(0, ended - created)}i,ended_at_ms=${ended}i,` +
    `error_code=${quoted(point.error_code)},parent_task_id=${quoted(point.parent_task_id)},` +
    `payload_cut=${point.payload_cut ? 'T' : 'F'},record=${quoted(point.record)},` +
    `result_cut=${point.result_cut ? 'T' : 'F'},task_id=${quoted(point.task_id)} ` +
    archiveNanos(point)
  );
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '');
const int = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : undefined;

/**
 * Reads one row of an InfluxQL `SELECT * FROM task_archive …` (as `queryInfluxQL` or analytics'
 * `queryStatements` flatten it: columns by name, a missing tag `null`). `ended_at_ms` falls back
 * to the row's `time` (epoch ms). Undefined for a row that is not an archived task.
 */
export function decodeArchivedTaskRow(row: Record<string, unknown>): ArchivedTaskPoint | undefined {
  const taskId = text(row.task_id);
  const capability = text(row.capability);
  const status = text(row.status);
  const ended = int(row.ended_at_ms) ?? int(row.time);
  if (taskId === '' || capability === '' || status === '' || ended === undefined) return undefined;
  const created = int(row.created_at_ms) ?? ended;
  return {
    tenant: text(row.tenant),
    capability,
    agent_id: text(row.agent_id),
    status,
    task_id: taskId,
    attempts: int(row.attempts) ?? 0,
    created_at_ms: created,
    ended_at_ms: ended,
    duration_ms: int(row.duration_ms) ?? Math.max(0, ended - created),
    error_code: text(row.error_code),
    parent_task_id: text(row.parent_task_id),
    record: text(row.record),
    payload_cut: row.payload_cut === true,
    result_cut: row.result_cut === true,
  };
}

/** A value of a record as archived: the value itself, or its first bytes as a string when cut. */
export interface CutValue {
  value: unknown;
  cut: boolean;
}

/** The longest prefix of `s` that is at most `maxBytes` bytes of UTF-8, never splitting a character. */
export function utf8Prefix(s: string, maxBytes: number): string {
  if (maxBytes <= 0) return '';
  if (s.length * 3 <= maxBytes) return s;
  const bytes = Buffer.from(s, 'utf8');
  if (bytes.length <= maxBytes) return s;
  let end = maxBytes;
  // Back off continuation bytes (10xxxxxx) so the cut lands on a character boundary.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/**
 * A payload or result (`json`: its JSON text as stored) as the archive keeps it: the parsed value
 * when its text fits in `maxBytes`, else the text's first `maxBytes` bytes as a string, cut.
 * Text that is not JSON is kept as a string.
 */
export function cutJsonText(json: string, maxBytes: number): CutValue {
  if (Buffer.byteLength(json, 'utf8') > maxBytes)
    return { value: utf8Prefix(json, maxBytes), cut: true };
  try {
    return { value: JSON.parse(json) as unknown, cut: false };
  } catch {
    return { value: json, cut: false };
  }
}

/**
 * Whether final tasks are archived (REACH_TASK_ARCHIVE): `on`, or `auto` with an InfluxDB to
 * write to (`INFLUX_URL`); `off` never.
 */
export function taskArchiveEnabled(
  mode: 'auto' | 'on' | 'off' | undefined,
  influxUrl: string | undefined,
): boolean {
  if (mode === 'on') return true;
  if (mode === 'off') return false;
  return typeof influxUrl === 'string' && influxUrl !== '';
}
