import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  DEFAULT_TENANT,
  encodeTaskField,
  scopedId,
  TaskRecordField,
  taskFields,
  type ReachKeys,
  type TaskFieldList,
  type TaskMessage,
  type TaskRecordKey,
  type TaskStatus,
} from '@agent-reach/protocol';
import { tracing } from '@agent-reach/service-kit/tracing';

/** How strictly a task keeps to its region. */
export type RegionPolicy = 'strict' | 'prefer';

/**
 * What a task asks of the agent that runs it. Stored with the task when it is accepted, and read
 * back by every later send (retry, reclaim, pool drain, replay), so no send routes without it.
 */
export interface TaskConstraints {
  /** Tags every agent that takes the task must have (or serve as a capability). */
  tags: readonly string[];
  /** The region asked for; '' for none. */
  region: string;
  /** `strict`: never outside `region`; `prefer`: elsewhere only when no agent there is live. */
  regionPolicy: RegionPolicy;
  /** The session whose agent the task sticks to while it is healthy; '' for none. */
  sessionId: string;
  /** The task whose handling submitted this one; '' for a caller's own. */
  parentTaskId: string;
  /** Submissions deep: the parent's hops + 1 (0 for a caller's own). */
  hops: number;
  /** Agents that handled the task's ancestors: never routed to (a loop). */
  traceAgents: readonly string[];
  /**
   * The tenant of the key that submitted the task ('' for the default tenant): only its agents
   * and shared ones take it, and its ids (task, topic, pool) are scoped to it (`scopedId`).
   */
  tenant: string;
  /**
   * The task's priority, 0–9 (9 most urgent; the caller's `priority`): tasks held for a slot and
   * pooled tasks are taken highest first, FIFO within a priority. Not the registration's
   * agent-side `priority` bias.
   */
  priority: number;
  /**
   * Capabilities the task may run on, in order, when no agent of `capability` is live (the
   * caller's `fallback_capabilities`; none when absent); every send checks `capability` first.
   */
  fallbackCapabilities?: readonly string[];
  /**
   * The longest an attempt may run, renewals or not (the caller's `max_execution_ms`): its
   * execution lease lapses then. 0 or absent for no cap.
   */
  maxExecutionMs?: number;
  /**
   * The caller's `stream: true`: the callback topic also gets the task's progress values and
   * output chunks (registry-sync's output step reads the stored `stream` field).
   */
  stream?: boolean;
  /**
   * The caller's `mode: "batch"`: every send puts the task in its capability's pool, for pull
   * agents (or the pool drainer) to take, never straight to a push agent.
   */
  poolOnly?: boolean;
  /**
   * The W3C `traceparent` of the task's `submit` span, stored only while spans are exported:
   * every attempt's `deliver` span is its child, so a retry is a sibling attempt in one trace.
   */
  traceparent?: string;
}

/** The constraints of a task whose submission set none: any agent of its capability may run it. */
export const NO_CONSTRAINTS: TaskConstraints = {
  tags: [],
  region: '',
  regionPolicy: 'prefer',
  sessionId: '',
  parentTaskId: '',
  hops: 0,
  traceAgents: [],
  tenant: '',
  priority: 0,
};

/** A task as every send of it needs it: what the caller gave, and its constraints. */
export interface TaskSpec extends TaskConstraints {
  taskId: string;
  capability: string;
  /** JSON text of the caller's payload. */
  payload: string;
  /** '' when the caller gave no callback topic. */
  callbackTopic: string;
  /** '' when the task has none. */
  traceId: string;
}

/** A task as stored: its spec plus where it stands. */
export interface StoredTask extends TaskSpec {
  status: TaskStatus;
  attempt: number;
  /** Epoch ms; 0 for none. */
  deadlineMs: number;
  /** The agent of the current (or last) attempt; '' for a pooled task. */
  agentId: string;
  assignedAt: number;
  /** When a task waiting for a retry is due. */
  dueAt: number;
  messageId: string;
}

/** The constraints' properties of the task record (claim-n.lua and reject-3.lua write them). */
const CONSTRAINT_KEYS = [
  'tags',
  'region',
  'regionPolicy',
  'sessionId',
  'parentTaskId',
  'hops',
  'traceAgents',
  'tenant',
  'priority',
  'maxExecutionMs',
  'streamOutput',
  'fallbackCapabilities',
  'poolOnly',
] as const satisfies readonly TaskRecordKey[];

type StoredKey =
  | 'taskId'
  | 'capability'
  | 'payload'
  | 'callbackTopic'
  | 'traceId'
  | 'status'
  | 'attempt'
  | 'deadlineMs'
  | 'agentId'
  | 'assignedAt'
  | 'dueAt'
  | 'messageId'
  | 'stream'
  | (typeof CONSTRAINT_KEYS)[number];

const STORED_KEYS: readonly StoredKey[] = [
  'taskId',
  'capability',
  'payload',
  'callbackTopic',
  'traceId',
  'status',
  'attempt',
  'deadlineMs',
  'agentId',
  'assignedAt',
  'dueAt',
  'messageId',
  'stream',
  ...CONSTRAINT_KEYS,
];

const STORED = taskFields(...STORED_KEYS);
const TRACED = taskFields(...STORED_KEYS, 'traceparent');

/** A constraint's property of the task record. */
type ConstraintKey = (typeof CONSTRAINT_KEYS)[number] | 'traceparent';

/** One constraint a task has, as the claim, hold and reject scripts store it. */
export interface ConstraintArg {
  field: (typeof TaskRecordField)[ConstraintKey];
  value: string;
}

/**
 * The constraints the task has, each a field and its value as the claim, hold and reject scripts
 * store them (their `constraints` items): an empty one is left out (a missing field reads as none
 * in `readStoredTask`), so a task without constraints costs no more to store than one before
 * constraints were stored.
 */
export function constraintArgs(c: TaskConstraints): ConstraintArg[] {
  const out: ConstraintArg[] = [];
  const add = (key: ConstraintKey, value: string, none: string) => {
    if (value !== none) out.push({ field: TaskRecordField[key], value });
  };
  add('tags', encodeTaskField('tags', [...c.tags]), '[]');
  add('region', c.region, '');
  add('regionPolicy', c.region ? c.regionPolicy : '', '');
  add('sessionId', c.sessionId, '');
  add('parentTaskId', c.parentTaskId, '');
  add('hops', encodeTaskField('hops', c.hops), '0');
  add('traceAgents', encodeTaskField('traceAgents', [...c.traceAgents]), '[]');
  add('tenant', c.tenant === DEFAULT_TENANT ? '' : c.tenant, '');
  add('priority', encodeTaskField('priority', c.priority), '0');
  add('maxExecutionMs', encodeTaskField('maxExecutionMs', c.maxExecutionMs ?? 0), '0');
  add('streamOutput', c.stream ? '1' : '', '');
  add('poolOnly', c.poolOnly ? '1' : '', '');
  add(
    'fallbackCapabilities',
    encodeTaskField('fallbackCapabilities', [...(c.fallbackCapabilities ?? [])]),
    '[]',
  );
  add('traceparent', c.traceparent ?? '', '');
  return out;
}

/** Reads a task's spec and state in one HMGET; undefined when the task is unknown. */
export async function readStoredTask(
  redis: RedisClient,
  keys: ReachKeys,
  taskId: string,
): Promise<StoredTask | undefined> {
  // The submit span's traceparent is asked for only while spans are exported.
  const list: TaskFieldList<StoredKey | 'traceparent'> = tracing.on ? TRACED : STORED;
  const v = list.decode(await redis.hmget(keys.task(taskId), ...list.fields));
  if (!v.status) return undefined;
  return {
    taskId,
    capability: v.capability ?? '',
    payload: v.payload ?? 'null',
    callbackTopic: v.callbackTopic ?? '',
    traceId: v.traceId ?? '',
    status: v.status,
    attempt: v.attempt ?? 0,
    deadlineMs: v.deadlineMs ?? 0,
    agentId: v.agentId ?? '',
    assignedAt: v.assignedAt ?? 0,
    dueAt: v.dueAt ?? 0,
    messageId: v.messageId ?? '',
    tags: v.tags ?? [],
    region: v.region ?? '',
    regionPolicy: v.regionPolicy ?? 'prefer',
    sessionId: v.sessionId ?? '',
    parentTaskId: v.parentTaskId ?? '',
    hops: v.hops ?? 0,
    traceAgents: v.traceAgents ?? [],
    tenant: v.tenant ?? '',
    priority: v.priority ?? 0,
    fallbackCapabilities: v.fallbackCapabilities ?? [],
    ...(v.maxExecutionMs ? { maxExecutionMs: v.maxExecutionMs } : {}),
    // `stream` = '1' is how tasks stored before `stream_out` said it.
    ...(v.streamOutput || v.stream === '1' ? { stream: true } : {}),
    ...(v.poolOnly ? { poolOnly: true } : {}),
    ...(v.traceparent ? { traceparent: v.traceparent } : {}),
  };
}

/** The stream entry of one attempt of the task: what an agent reads. */
export function attemptMessage(spec: TaskSpec, attempt: number, deadlineMs: number): TaskMessage {
  return {
    task_id: spec.taskId,
    capability: spec.capability,
    payload: spec.payload,
    attempt,
    trace_id: spec.traceId,
    callback_topic: spec.callbackTopic,
    deadline_ms: deadlineMs,
    ...(spec.parentTaskId ? { parent_task_id: spec.parentTaskId, hops: spec.hops } : {}),
    ...(spec.tags.length > 0 ? { tags: [...spec.tags] } : {}),
    ...(spec.region ? { region: spec.region, region_policy: spec.regionPolicy } : {}),
  };
}

/**
 * The pool a task of its tenant waits in when pooled: `scopedId(tenant, capability)` (the bare
 * capability for the default tenant), read by the pull agents of that tenant.
 */
export function poolOf(spec: Pick<TaskSpec, 'tenant' | 'capability'>): string {
  return scopedId(spec.tenant || DEFAULT_TENANT, spec.capability);
}
