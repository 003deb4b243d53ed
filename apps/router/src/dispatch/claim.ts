import type { Redis } from 'ioredis';
import type { ReachKeys, SubmitBody, TaskMessage } from '@agent-reach/protocol';
import type { Lineage } from './lineage.ts';

/** A submission being claimed: what the claim script records. */
export interface ClaimRequest {
  taskId: string;
  body: SubmitBody;
  payload: string;
  lineage: Lineage | undefined;
  /** Identifies this submission across re-sent commands. */
  nonce: string;
  timeoutMs: number;
  /** The agent it is assigned to; empty for a pooled task. */
  agentId: string;
  epoch: number;
  /** Add the watchdog entry in the due set in the same round trip. */
  watchdogAt?: number;
}

/** Outcome of a claim: ours (new, or our own re-sent command), or another submission's task. */
export type Claimed = { ours: true; createdAt: number; deadlineMs: number } | { ours: false };

/**
 * Claims a task_id for a submission with the idempotency check, in one round trip with the
 * optional watchdog entry (see claim-2.lua).
 */
export async function claimTask(redis: Redis, keys: ReachKeys, c: ClaimRequest): Promise<Claimed> {
  // Two commands, not a MULTI (the due set and the task live in different slots): issued in
  // the same tick on the auto-pipelined connection, they leave in one write with every other
  // submission's commands of that tick, the watchdog entry first.
  const watchdog = c.watchdogAt !== undefined ? redis.zadd(keys.due(), 'NX', c.watchdogAt, c.taskId) : undefined;
  const claim = redis.reachClaim(
    keys.task(c.taskId),
    keys.timeline(c.taskId),
    c.nonce,
    c.taskId,
    c.body.capability,
    c.payload,
    c.body.callback_topic ?? '',
    c.body.trace_id ?? '',
    c.timeoutMs,
    c.agentId,
    c.epoch,
    c.body.parent_task_id ?? '',
    c.lineage?.hops ?? 0,
    JSON.stringify(c.lineage?.agents ?? []),
  );
  const [, reply] = await Promise.all([watchdog, claim]);
  const [state, createdAt = 0, deadlineMs = 0] = reply;
  return state === 2 ? { ours: false } : { ours: true, createdAt, deadlineMs };
}

/** The first attempt's stream entry for a claimed submission. */
export function firstAttempt(taskId: string, body: SubmitBody, payload: string, deadlineMs: number, lineage: Lineage | undefined): TaskMessage {
  return {
    task_id: taskId,
    capability: body.capability,
    payload,
    attempt: 1,
    trace_id: body.trace_id ?? '',
    callback_topic: body.callback_topic ?? '',
    deadline_ms: deadlineMs,
    ...(body.parent_task_id ? { parent_task_id: body.parent_task_id, hops: lineage?.hops ?? 0 } : {}),
  };
}
