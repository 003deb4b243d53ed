import { AckField, CallbackField, TaskField } from './fields.ts';
import { FailureCode, isFailureCode } from './failure-codes.ts';
import { isValidId } from './ids.ts';
import { decodeProbeHealth, type ProbeHealth } from './probe-health.ts';
import { isValidScopedId, splitScopedId } from './tenants.ts';
import { ACK_STAGES, RENEW_STAGE, type AckStage } from './states.ts';
import {
  MAX_CHUNKS_PER_ACK,
  MAX_PROGRESS_BYTES,
  OUTPUT_STAGES,
  type OutputStage,
} from './task-output.ts';

/** A task as it sits in an agent's inbox or a capability pool. */
export interface TaskMessage {
  task_id: string;
  capability: string;
  /** JSON text of the caller's payload. */
  payload: string;
  attempt: number;
  trace_id: string;
  /** Empty when the caller gave no callback topic. */
  callback_topic: string;
  /** Epoch milliseconds after which the task is no longer worth running; 0 for none. */
  deadline_ms: number;
  /** The task whose handling submitted this one, or empty. */
  parent_task_id?: string;
  /** How many submissions deep this task is (0 for a caller's own). */
  hops?: number;
  /** Routing tags the agent must have (each among its tags or capabilities); absent when none. */
  tags?: string[];
  /** The region the task asks for; absent when none. */
  region?: string;
  /** With `region`: `strict` (only an agent there) or `prefer` (the default). */
  region_policy?: 'strict' | 'prefer';
  /** The W3C `traceparent` of the span that sent this attempt; absent when the sender traces nothing. */
  traceparent?: string;
  /** A shadow copy (observation mode): its result never reaches a caller. Absent otherwise. */
  shadow?: boolean;
}

/** Most task ids one `renew` ack names; a worker running more sends several. */
export const MAX_RENEW_TASK_IDS = 1000;

/** A receipt, completion, failure or lease renewal reported by a worker on the acks stream. */
export interface AckMessage {
  task_id: string;
  stage: AckStage | typeof RENEW_STAGE | OutputStage;
  agent_id: string;
  instance_id: string;
  epoch: number;
  attempt: number;
  /** JSON text; completed only. */
  result?: string;
  duration_ms?: number;
  error?: string;
  /** A failure's code (failure-codes.ts); `HANDLER_ERROR` when the worker named none. */
  error_code?: string;
  retryable?: boolean;
  /** Pull agents: the capability pool the task was read from, and the pool entry's id. */
  pool?: string;
  message_id?: string;
  /** Optional on a completion: the task's capability (the execution-time EWMA is updated with the slot release). */
  capability?: string;
  /** Optional on a completion or failure that stands for its receipt too: ms since the entry was read. */
  received_ago_ms?: number;
  /** `renew` only: every task whose execution lease it renews (`task_id` among them). */
  task_ids?: string[];
  /** `progress` only: the progress value as JSON text. */
  progress?: string;
  /** `chunk` only: the output's next chunks, in order. */
  chunks?: string[];
  /** Completion or failure: the W3C `traceparent` of the worker's span that wrote it. */
  traceparent?: string;
  /** A probe's completion or failure: the health check's answer with its dependencies. */
  health?: ProbeHealth;
}

/** An ack that reports a task's stage: a receipt, completion or failure (not a renewal). */
export type TaskAckMessage = AckMessage & { stage: AckStage };

/** True for a receipt, completion or failure; false for a `renew`, `progress` or `chunk`. */
export function isTaskAck(ack: AckMessage): ack is TaskAckMessage {
  return (ACK_STAGES as readonly string[]).includes(ack.stage);
}

/** True for a `progress` or `chunk` ack (a running task's output). */
export function isOutputAck(ack: AckMessage): ack is AckMessage & { stage: OutputStage } {
  return (OUTPUT_STAGES as readonly string[]).includes(ack.stage);
}

/** A final result published on a callback topic. */
export interface CallbackMessage {
  task_id: string;
  /**
   * The final statuses, or a non-final item of a task submitted with `stream: true`: `progress`,
   * `chunk` or `truncated` (then `completed_at` is the item's time).
   */
  status: 'completed' | 'failed' | 'dead' | 'cancelled' | 'progress' | 'chunk' | 'truncated';
  capability: string;
  agent_id: string;
  attempt: number;
  /** JSON text, when completed. */
  result?: string;
  error?: string;
  duration_ms?: number;
  completed_at: number;
  /** `progress` items: the value as JSON text. */
  progress?: string;
  /** `chunk` items: the chunk's text. */
  chunk?: string;
}

/** A callback message with a final status (not a `stream: true` task's progress, chunk or truncated item). */
export type FinalCallbackMessage = CallbackMessage & {
  status: 'completed' | 'failed' | 'dead' | 'cancelled';
};

/** True for a task's final callback message. */
export function isFinalCallback(msg: CallbackMessage): msg is FinalCallbackMessage {
  return (
    msg.status === 'completed' ||
    msg.status === 'failed' ||
    msg.status === 'dead' ||
    msg.status === 'cancelled'
  );
}

/** Outcome of decoding input that came from outside the process. */
export type Decoded<T> = { ok: true; value: T } | { ok: false; error: string };

/** Turns the flat `[field, value, …]` array of a stream entry into a record. */
export function fieldsToRecord(fields: readonly string[]): Record<string, string> {
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2)
    record[fields[i] as string] = fields[i + 1] as string;
  return record;
}

/** Turns a record into the flat array XADD takes, skipping undefined values. */
export function recordToFields(
  record: Record<string, string | number | boolean | undefined>,
): string[] {
  const out: string[] = [];
  // for…in, not Object.entries: no array of pairs per call (an ack, a task: every hop of a task).
  for (const k in record) put(out, k, record[k]);
  return out;
}

/** Appends `key` and `value` to `out` (the flat array XADD takes) unless `value` is undefined. */
function put(out: string[], key: string, value: string | number | boolean | undefined): void {
  if (value !== undefined) out.push(key, String(value));
}

const REGION = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * The placement fields of a task entry. A task whose constraints cannot be read must not run
 * anywhere it should not, so anything unreadable is an error, never "no constraint"; empty
 * values (`tags` `[]` or '', `region` '') mean none, and a region without a policy is `prefer`.
 */
function decodePlacement(
  r: Record<string, string>,
): Decoded<Pick<TaskMessage, 'tags' | 'region' | 'region_policy'>> {
  const out: Pick<TaskMessage, 'tags' | 'region' | 'region_policy'> = {};
  const tagsText = r[TaskField.tags];
  if (tagsText !== undefined && tagsText !== '') {
    let tags: unknown;
    try {
      tags = JSON.parse(tagsText);
    } catch {
      tags = undefined;
    }
    if (!Array.isArray(tags) || !tags.every(isValidId))
      return { ok: false, error: 'tags must be a JSON array of tag ids' };
    if (tags.length > 0) out.tags = tags;
  }
  const region = r[TaskField.region];
  if (region !== undefined && region !== '') {
    if (!REGION.test(region)) return { ok: false, error: 'region is invalid' };
    const policy = r[TaskField.regionPolicy] || 'prefer';
    if (policy !== 'strict' && policy !== 'prefer')
      return { ok: false, error: 'region_policy must be strict or prefer' };
    out.region = region;
    out.region_policy = policy;
  }
  return { ok: true, value: out };
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * True for a `traceparent` of the W3C form (version-traceid-parentid-flags, lowercase hex). Only
 * the shape is checked here: a reader that cannot use one starts its spans a trace of their own.
 */
export function isTraceparent(value: string | undefined): value is string {
  return value !== undefined && TRACEPARENT.test(value);
}

function toInt(value: string | undefined): number | undefined {
  if (value === undefined || !/^-?\d{1,16}$/.test(value)) return undefined;
  return Number(value);
}

/** Encodes a task for XADD. */
export function encodeTask(task: TaskMessage): string[] {
  return recordToFields({
    [TaskField.taskId]: task.task_id,
    [TaskField.capability]: task.capability,
    [TaskField.payload]: task.payload,
    [TaskField.attempt]: task.attempt,
    [TaskField.traceId]: task.trace_id,
    [TaskField.callbackTopic]: task.callback_topic,
    [TaskField.deadlineMs]: task.deadline_ms,
    [TaskField.parentTaskId]: task.parent_task_id || undefined,
    [TaskField.hops]: task.hops || undefined,
    [TaskField.tags]: task.tags && task.tags.length > 0 ? JSON.stringify(task.tags) : undefined,
    [TaskField.region]: task.region || undefined,
    [TaskField.regionPolicy]: task.region ? task.region_policy : undefined,
    [TaskField.traceparent]: task.traceparent,
    [TaskField.shadow]: task.shadow ? '1' : undefined,
  });
}

/**
 * Decodes a task entry read from an inbox or pool. An entry whose placement fields (`tags`,
 * `region`, `region_policy`) cannot be read is refused like any malformed entry.
 */
export function decodeTask(fields: readonly string[]): Decoded<TaskMessage> {
  const r = fieldsToRecord(fields);
  const taskId = r[TaskField.taskId];
  // A tenant's task carries its scoped id (`<tenant>/<task_id>`).
  if (!isValidScopedId(taskId)) return { ok: false, error: 'task_id missing or invalid' };
  const capability = r[TaskField.capability];
  if (!isValidId(capability)) return { ok: false, error: 'capability missing or invalid' };
  const attempt = toInt(r[TaskField.attempt]);
  if (attempt === undefined || attempt < 1)
    return { ok: false, error: 'attempt missing or invalid' };
  const placement = decodePlacement(r);
  if (!placement.ok) return placement;
  return {
    ok: true,
    value: {
      task_id: taskId,
      capability,
      payload: r[TaskField.payload] ?? 'null',
      attempt,
      trace_id: r[TaskField.traceId] ?? '',
      callback_topic: r[TaskField.callbackTopic] ?? '',
      deadline_ms: toInt(r[TaskField.deadlineMs]) ?? 0,
      ...(r[TaskField.parentTaskId] ? { parent_task_id: r[TaskField.parentTaskId] } : {}),
      ...(toInt(r[TaskField.hops]) ? { hops: toInt(r[TaskField.hops]) } : {}),
      ...placement.value,
      ...(isTraceparent(r[TaskField.traceparent]) ? { traceparent: r[TaskField.traceparent] } : {}),
      ...(r[TaskField.shadow] === '1' ? { shadow: true } : {}),
    },
  };
}

/** Encodes an ack for XADD. */
export function encodeAck(ack: AckMessage): string[] {
  // Field by field, in this order, rather than through a record: an ack is encoded per stage of
  // every task, and most of its optional fields are absent.
  const out: string[] = [];
  put(out, AckField.taskId, ack.task_id);
  put(out, AckField.stage, ack.stage);
  put(out, AckField.agentId, ack.agent_id);
  put(out, AckField.instanceId, ack.instance_id);
  put(out, AckField.epoch, ack.epoch);
  put(out, AckField.attempt, ack.attempt);
  put(out, AckField.result, ack.result);
  put(out, AckField.durationMs, ack.duration_ms);
  put(out, AckField.error, ack.error);
  put(out, AckField.errorCode, ack.error_code);
  if (ack.retryable !== undefined) out.push(AckField.retryable, ack.retryable ? 'true' : 'false');
  put(out, AckField.pool, ack.pool);
  put(out, AckField.messageId, ack.message_id);
  put(out, AckField.capability, ack.capability);
  put(out, AckField.receivedAgoMs, ack.received_ago_ms);
  put(out, AckField.taskIds, ack.task_ids?.join(' '));
  put(out, AckField.progress, ack.progress);
  if (ack.chunks !== undefined) out.push(AckField.chunks, JSON.stringify(ack.chunks));
  put(out, AckField.traceparent, ack.traceparent);
  if (ack.health !== undefined) out.push(AckField.health, JSON.stringify(ack.health));
  return out;
}

/**
 * Decodes an ack entry. Acks come from workers in any language, so every field is checked; a
 * malformed ack is refused (and counted by the caller), never thrown.
 */
export function decodeAck(fields: readonly string[]): Decoded<AckMessage> {
  const r = fieldsToRecord(fields);
  const taskId = r[AckField.taskId];
  // A tenant's task carries its scoped id (`<tenant>/<task_id>`).
  if (!isValidScopedId(taskId)) return { ok: false, error: 'task_id missing or invalid' };
  const stage = r[AckField.stage] as AckMessage['stage'] | undefined;
  if (
    stage === undefined ||
    !(
      stage === RENEW_STAGE ||
      ACK_STAGES.includes(stage as AckStage) ||
      OUTPUT_STAGES.includes(stage as OutputStage)
    )
  ) {
    const all = [...ACK_STAGES, RENEW_STAGE, ...OUTPUT_STAGES];
    return { ok: false, error: `stage must be one of ${all.join('|')}` };
  }
  const agentId = r[AckField.agentId];
  if (!isValidId(agentId)) return { ok: false, error: 'agent_id missing or invalid' };
  const instanceId = r[AckField.instanceId] ?? '';
  const epoch = toInt(r[AckField.epoch]);
  if (epoch === undefined) return { ok: false, error: 'epoch missing or not an integer' };
  // attempt is optional for hand-written workers: 0 means "whatever attempt is current".
  const attempt = toInt(r[AckField.attempt]) ?? 0;
  const ack: AckMessage = {
    task_id: taskId,
    stage,
    agent_id: agentId,
    instance_id: instanceId,
    epoch,
    attempt,
  };
  if (stage === RENEW_STAGE) {
    const text = r[AckField.taskIds];
    const ids = text === undefined || text === '' ? [taskId] : text.split(' ');
    if (ids.length > MAX_RENEW_TASK_IDS)
      return { ok: false, error: `task_ids names more than ${MAX_RENEW_TASK_IDS} tasks` };
    if (!ids.every(isValidScopedId))
      return { ok: false, error: 'task_ids must be task ids separated by single spaces' };
    ack.task_ids = ids;
    return { ok: true, value: ack };
  }
  if (stage === 'progress' || stage === 'chunk') return decodeOutput(r, ack);
  if (stage === 'completed') {
    const result = r[AckField.result] ?? 'null';
    try {
      JSON.parse(result);
    } catch {
      return { ok: false, error: 'result is not valid JSON text' };
    }
    ack.result = result;
  }
  const duration = toInt(r[AckField.durationMs]);
  if (duration !== undefined && duration >= 0) ack.duration_ms = duration;
  if (stage === 'failed') {
    ack.error = (r[AckField.error] ?? 'unknown error').slice(0, 4096);
    ack.retryable = r[AckField.retryable] !== 'false';
    // A code that is not one (a typo, a sentence) is no reason to refuse the failure.
    const code = r[AckField.errorCode];
    ack.error_code = isFailureCode(code) ? code : FailureCode.handlerError;
  }
  const pool = r[AckField.pool];
  if (pool !== undefined && pool !== '') {
    // The pool id: the capability, `<tenant>/<capability>` for a tenant's pool, whose tenant is
    // the task's.
    if (!isValidScopedId(pool) || splitScopedId(pool).tenant !== splitScopedId(taskId).tenant)
      return { ok: false, error: "pool is not the pool of the task's tenant and capability" };
    const messageId = r[AckField.messageId] ?? '';
    if (!/^\d{1,20}-\d{1,20}$/.test(messageId))
      return { ok: false, error: 'message_id must be the pool entry id with pool' };
    ack.pool = pool;
    ack.message_id = messageId;
  }
  const capability = r[AckField.capability];
  if (capability !== undefined && capability !== '') {
    if (!isValidId(capability))
      return { ok: false, error: 'capability is not a valid capability id' };
    ack.capability = capability;
  }
  const receivedAgo = toInt(r[AckField.receivedAgoMs]);
  if (receivedAgo !== undefined && receivedAgo >= 0 && stage !== 'received')
    ack.received_ago_ms = receivedAgo;
  const traceparent = r[AckField.traceparent];
  if (isTraceparent(traceparent)) ack.traceparent = traceparent;
  if (stage === 'completed' || stage === 'failed') {
    const health = decodeProbeHealth(r[AckField.health]);
    if (health) ack.health = health;
  }
  return { ok: true, value: ack };
}

/** The value of a `progress` ack or the chunks of a `chunk` ack, checked. */
function decodeOutput(r: Record<string, string>, ack: AckMessage): Decoded<AckMessage> {
  if (ack.stage === 'progress') {
    const text = r[AckField.progress] ?? '';
    if (Buffer.byteLength(text) > MAX_PROGRESS_BYTES)
      return { ok: false, error: `progress is longer than ${MAX_PROGRESS_BYTES} bytes` };
    try {
      JSON.parse(text);
    } catch {
      return { ok: false, error: 'progress is not valid JSON text' };
    }
    ack.progress = text;
    return { ok: true, value: ack };
  }
  let chunks: unknown;
  try {
    chunks = JSON.parse(r[AckField.chunks] ?? '');
  } catch {
    chunks = undefined;
  }
  if (
    !Array.isArray(chunks) ||
    chunks.length === 0 ||
    chunks.length > MAX_CHUNKS_PER_ACK ||
    !chunks.every((c) => typeof c === 'string')
  )
    return {
      ok: false,
      error: `chunks must be a JSON array of 1 to ${MAX_CHUNKS_PER_ACK} strings`,
    };
  ack.chunks = chunks;
  return { ok: true, value: ack };
}

/** Encodes a callback-topic entry. */
export function encodeCallback(msg: CallbackMessage): string[] {
  return recordToFields({
    [CallbackField.taskId]: msg.task_id,
    [CallbackField.status]: msg.status,
    [CallbackField.capability]: msg.capability,
    [CallbackField.agentId]: msg.agent_id,
    [CallbackField.attempt]: msg.attempt,
    [CallbackField.result]: msg.result,
    [CallbackField.error]: msg.error,
    [CallbackField.durationMs]: msg.duration_ms,
    [CallbackField.completedAt]: msg.completed_at,
    [CallbackField.progress]: msg.progress,
    [CallbackField.chunk]: msg.chunk,
  });
}

/** Decodes a callback-topic entry (written by the server, so trusted but still typed). */
export function decodeCallback(fields: readonly string[]): CallbackMessage {
  const r = fieldsToRecord(fields);
  const msg: CallbackMessage = {
    task_id: r[CallbackField.taskId] ?? '',
    status: (r[CallbackField.status] ?? 'failed') as CallbackMessage['status'],
    capability: r[CallbackField.capability] ?? '',
    agent_id: r[CallbackField.agentId] ?? '',
    attempt: toInt(r[CallbackField.attempt]) ?? 0,
    completed_at: toInt(r[CallbackField.completedAt]) ?? 0,
  };
  if (r[CallbackField.result] !== undefined) msg.result = r[CallbackField.result];
  if (r[CallbackField.error] !== undefined) msg.error = r[CallbackField.error];
  const d = toInt(r[CallbackField.durationMs]);
  if (d !== undefined) msg.duration_ms = d;
  if (r[CallbackField.progress] !== undefined) msg.progress = r[CallbackField.progress];
  if (r[CallbackField.chunk] !== undefined) msg.chunk = r[CallbackField.chunk];
  return msg;
}

/** Milliseconds part of a stream entry id (`<ms>-<seq>`): Redis server time of the XADD. */
export function streamIdMs(id: string): number {
  const dash = id.indexOf('-');
  return Number(dash === -1 ? id : id.slice(0, dash));
}
