import { TASK_STATUSES, type TaskStatus } from './states.ts';

/**
 * A task's state hash (`keys.task`) as TypeScript reads it. The scripts that own the task write it
 * (claim, hold, assign, deliver, ack, output, retry, cancel, replay); a field the hash lacks is
 * undefined here, and so is a number that does not parse.
 */
export interface TaskRecord {
  status: TaskStatus;
  taskId?: string;
  capability?: string;
  /** JSON text of the caller's payload; '' once the task is cancelled. */
  payload?: string;
  callbackTopic?: string;
  traceId?: string;
  /** The current attempt, from 1. */
  attempt?: number;
  /** The agent of the current (or last) attempt; '' for a pooled or held task. */
  agentId?: string;
  /** That agent's registration epoch when the attempt was assigned. */
  epoch?: number;
  /** The submission that claimed the task_id (claim-n.lua, hold-n.lua). */
  nonce?: string;
  createdAt?: number;
  assignedAt?: number;
  /** Epoch ms; 0 for none. */
  deadlineMs?: number;
  /** The routing record of the current attempt's send (dispatch's `packRoute`). */
  route?: string;
  /** When the current attempt was sent, copied by its first ack; 0 before. */
  sentAt?: number;
  /** The current attempt's entry id in its inbox or pool. */
  messageId?: string;
  receivedAt?: number;
  completedAt?: number;
  durationMs?: number;
  /** JSON text of the worker's result. */
  result?: string;
  error?: string;
  deadReason?: string;
  deadAt?: number;
  /** When a task waiting for a retry or its time is due. */
  dueAt?: number;
  /** Failed attempts that count against the retry budget from this one on (retry-2.lua). */
  budgetFrom?: number;
  cancelledAt?: number;
  /** The key that cancelled the task. */
  cancelledBy?: string;
  /** The status the task was cancelled in. */
  cancelledFrom?: TaskStatus;
  /** When the agent running a cancelled task stopped. */
  stoppedAt?: number;
  /** A caller was told the claimed task exists (mark-seen-1.lua): the claim is kept. */
  seen?: boolean;
  /** The task has a timeline list. */
  listed?: boolean;
  /**
   * The pool stream a pooled task's entry is in (record-pooled-1.lua). Before `streamOutput` had a
   * field of its own, `1` here meant the caller's `stream: true`; tasks stored then still say so.
   */
  stream?: string;
  /** The caller asked for `stream: true`: its callback topic also gets progress and chunks. */
  streamOutput?: boolean;
  /** The last output ack applied (output-3.lua), and the output's size so far. */
  outAck?: string;
  outChunks?: number;
  outBytes?: number;
  /** `1` once the output was cut at its limits. */
  outCut?: string;
  // The task's constraints (dispatch's `constraintArgs`): absent when not set.
  tags?: string[];
  region?: string;
  regionPolicy?: 'strict' | 'prefer';
  sessionId?: string;
  parentTaskId?: string;
  hops?: number;
  traceAgents?: string[];
  tenant?: string;
  priority?: number;
  maxExecutionMs?: number;
  fallbackCapabilities?: string[];
  /** `1` for a task submitted with `mode: "batch"`: it is only ever sent to its pool. */
  poolOnly?: boolean;
  /** The W3C `traceparent` of the task's `submit` span. */
  traceparent?: string;
}

/** A property of `TaskRecord`. */
export type TaskRecordKey = keyof TaskRecord;

/** Field names of a task's state hash (`keys.task`), one per `TaskRecord` property. */
export const TaskRecordField = {
  status: 'status',
  taskId: 'task_id',
  capability: 'capability',
  payload: 'payload',
  callbackTopic: 'callback_topic',
  traceId: 'trace_id',
  attempt: 'attempt',
  agentId: 'agent_id',
  epoch: 'epoch',
  nonce: 'nonce',
  createdAt: 'created_at',
  assignedAt: 'assigned_at',
  deadlineMs: 'deadline_ms',
  route: 'route',
  sentAt: 'sent_at',
  messageId: 'message_id',
  receivedAt: 'received_at',
  completedAt: 'completed_at',
  durationMs: 'duration_ms',
  result: 'result',
  error: 'error',
  deadReason: 'dead_reason',
  deadAt: 'dead_at',
  dueAt: 'due_at',
  budgetFrom: 'budget_from',
  cancelledAt: 'cancelled_at',
  cancelledBy: 'cancelled_by',
  cancelledFrom: 'cancelled_from',
  stoppedAt: 'stopped_at',
  seen: 'seen',
  listed: 'tl',
  stream: 'stream',
  streamOutput: 'stream_out',
  outAck: 'out_ack',
  outChunks: 'out_n',
  outBytes: 'out_bytes',
  outCut: 'out_cut',
  tags: 'tags',
  region: 'region',
  regionPolicy: 'region_policy',
  sessionId: 'session_id',
  parentTaskId: 'parent_task_id',
  hops: 'hops',
  traceAgents: 'trace_agents',
  tenant: 'tenant',
  priority: 'priority',
  maxExecutionMs: 'max_execution_ms',
  fallbackCapabilities: 'fallback_capabilities',
  poolOnly: 'pool_only',
  traceparent: 'traceparent',
} as const satisfies Record<TaskRecordKey, string>;

const STATUSES: ReadonlySet<string> = new Set(TASK_STATUSES);

const text = (v: string): string => v;

function num(v: string): number | undefined {
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

const flag = (v: string): boolean => v === '1';

function status(v: string): TaskStatus | undefined {
  return STATUSES.has(v) ? (v as TaskStatus) : undefined;
}

function stringList(v: string): string[] | undefined {
  try {
    const parsed: unknown = JSON.parse(v);
    return Array.isArray(parsed)
      ? parsed.filter((t): t is string => typeof t === 'string')
      : undefined;
  } catch {
    return undefined;
  }
}

const regionPolicy = (v: string): 'strict' | 'prefer' => (v === 'strict' ? 'strict' : 'prefer');

/** How each field's text becomes its property's value. */
const DECODE: { [K in TaskRecordKey]-?: (v: string) => TaskRecord[K] | undefined } = {
  status,
  taskId: text,
  capability: text,
  payload: text,
  callbackTopic: text,
  traceId: text,
  attempt: num,
  agentId: text,
  epoch: num,
  nonce: text,
  createdAt: num,
  assignedAt: num,
  deadlineMs: num,
  route: text,
  sentAt: num,
  messageId: text,
  receivedAt: num,
  completedAt: num,
  durationMs: num,
  result: text,
  error: text,
  deadReason: text,
  deadAt: num,
  dueAt: num,
  budgetFrom: num,
  cancelledAt: num,
  cancelledBy: text,
  cancelledFrom: status,
  stoppedAt: num,
  seen: flag,
  listed: flag,
  stream: text,
  streamOutput: flag,
  outAck: text,
  outChunks: num,
  outBytes: num,
  outCut: text,
  tags: stringList,
  region: text,
  regionPolicy,
  sessionId: text,
  parentTaskId: text,
  hops: num,
  traceAgents: stringList,
  tenant: text,
  priority: num,
  maxExecutionMs: num,
  fallbackCapabilities: stringList,
  poolOnly: flag,
  traceparent: text,
};

/** One field of a task hash decoded (the reply of an HGET); undefined when absent. */
export function decodeTaskField<K extends TaskRecordKey>(
  key: K,
  value: string | null | undefined,
): TaskRecord[K] | undefined {
  if (value === null || value === undefined) return undefined;
  const decode = DECODE[key] as (v: string) => TaskRecord[K] | undefined;
  return decode(value);
}

/** Some fields of a task's record, each undefined when the hash lacks it. */
export type TaskRecordPart<K extends TaskRecordKey> = { [P in K]?: TaskRecord[P] };

function decodeInto(
  out: Record<string, unknown>,
  key: TaskRecordKey,
  value: string | null | undefined,
) {
  const decoded = decodeTaskField(key, value);
  if (decoded !== undefined) out[key] = decoded;
}

/**
 * A task hash as HGETALL returns it, decoded; undefined when the task is unknown or expired (no
 * `status`). Fields the record does not name are left out.
 */
export function decodeTaskRecord(hash: Record<string, string | undefined>): TaskRecord | undefined {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(TaskRecordField) as TaskRecordKey[])
    decodeInto(out, key, hash[TaskRecordField[key]]);
  return out.status === undefined ? undefined : (out as unknown as TaskRecord);
}

/**
 * A named list of a task hash's fields, read with one HMGET: `fields` are its arguments, in the
 * order of `keys`, and `decode` turns its reply into the record's properties.
 */
export interface TaskFieldList<K extends TaskRecordKey> {
  readonly keys: readonly K[];
  readonly fields: readonly string[];
  decode(values: readonly (string | null | undefined)[]): TaskRecordPart<K>;
}

/** The field list of these properties (build it once, at module level, for a hot path). */
export function taskFields<K extends TaskRecordKey>(...keys: K[]): TaskFieldList<K> {
  return {
    keys,
    fields: keys.map((k) => TaskRecordField[k]),
    decode(values) {
      const out: Record<string, unknown> = {};
      keys.forEach((key, i) => decodeInto(out, key, values[i]));
      return out as TaskRecordPart<K>;
    },
  };
}

/**
 * A property's value as the task hash stores it: numbers as decimal text, flags as `1` (or ''),
 * lists as JSON arrays. `decodeTaskField` reads it back.
 */
export function encodeTaskField<K extends TaskRecordKey>(
  _key: K,
  value: NonNullable<TaskRecord[K]>,
): string {
  if (Array.isArray(value)) return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? '1' : '';
  return String(value);
}
