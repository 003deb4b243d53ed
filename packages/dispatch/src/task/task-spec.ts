import type { RedisClient } from '@agent-reach/service-kit/redis';
import { DEFAULT_TENANT, scopedId, type ReachKeys, type TaskMessage } from '@agent-reach/protocol';
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
   * The W3C `traceparent` of the task's `submit` span, stored only while spans are exported:
   * every attempt's `deliver` span is its child, so a retry is a sibling attempt in one trace.
   */
  traceparent?: string;
}

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
  status: string;
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

/** Task hash fields of the constraints (claim-2.lua and reject-2.lua write them). */
const CONSTRAINT_FIELDS = [
  'tags',
  'region',
  'region_policy',
  'session_id',
  'parent_task_id',
  'hops',
  'trace_agents',
  'tenant',
  'priority',
  'max_execution_ms',
  'stream',
  'fallback_capabilities',
] as const;

const STORED_FIELDS = [
  'task_id',
  'capability',
  'payload',
  'callback_topic',
  'trace_id',
  'status',
  'attempt',
  'deadline_ms',
  'agent_id',
  'assigned_at',
  'due_at',
  'message_id',
  ...CONSTRAINT_FIELDS,
] as const;

const TRACED_FIELDS = [...STORED_FIELDS, 'traceparent'] as const;

/** One constraint a task has, as the claim, hold and reject scripts store it. */
export interface ConstraintArg {
  field: (typeof CONSTRAINT_FIELDS)[number] | 'traceparent';
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
  const add = (field: ConstraintArg['field'], value: string, none: string) => {
    if (value !== none) out.push({ field, value });
  };
  add('tags', JSON.stringify(c.tags), '[]');
  add('region', c.region, '');
  add('region_policy', c.region ? c.regionPolicy : '', '');
  add('session_id', c.sessionId, '');
  add('parent_task_id', c.parentTaskId, '');
  add('hops', String(c.hops), '0');
  add('trace_agents', JSON.stringify(c.traceAgents), '[]');
  add('tenant', c.tenant === DEFAULT_TENANT ? '' : c.tenant, '');
  add('priority', String(c.priority), '0');
  add('max_execution_ms', String(c.maxExecutionMs ?? 0), '0');
  add('stream', c.stream ? '1' : '', '');
  add('fallback_capabilities', JSON.stringify(c.fallbackCapabilities ?? []), '[]');
  add('traceparent', c.traceparent ?? '', '');
  return out;
}

function stringList(text: string | null | undefined): string[] {
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

/** Reads a task's spec and state in one HMGET; undefined when the task is unknown. */
export async function readStoredTask(
  redis: RedisClient,
  keys: ReachKeys,
  taskId: string,
): Promise<StoredTask | undefined> {
  // The submit span's traceparent is asked for only while spans are exported.
  const fields = tracing.on ? TRACED_FIELDS : STORED_FIELDS;
  const values = await redis.hmget(keys.task(taskId), ...fields);
  const v = Object.fromEntries(fields.map((f, i) => [f, values[i] ?? null])) as Record<
    (typeof TRACED_FIELDS)[number],
    string | null
  >;
  if (!v.status) return undefined;
  return {
    taskId,
    capability: v.capability ?? '',
    payload: v.payload ?? 'null',
    callbackTopic: v.callback_topic ?? '',
    traceId: v.trace_id ?? '',
    status: v.status,
    attempt: Number(v.attempt ?? 0),
    deadlineMs: Number(v.deadline_ms ?? 0),
    agentId: v.agent_id ?? '',
    assignedAt: Number(v.assigned_at ?? 0),
    dueAt: Number(v.due_at ?? 0),
    messageId: v.message_id ?? '',
    tags: stringList(v.tags),
    region: v.region ?? '',
    regionPolicy: v.region_policy === 'strict' ? 'strict' : 'prefer',
    sessionId: v.session_id ?? '',
    parentTaskId: v.parent_task_id ?? '',
    hops: Number(v.hops ?? 0),
    traceAgents: stringList(v.trace_agents),
    tenant: v.tenant ?? '',
    priority: Number(v.priority ?? 0),
    fallbackCapabilities: stringList(v.fallback_capabilities),
    ...(v.max_execution_ms ? { maxExecutionMs: Number(v.max_execution_ms) } : {}),
    ...(v.stream === '1' ? { stream: true } : {}),
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
