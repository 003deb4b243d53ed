import type { Redis } from 'ioredis';
import type { DueWatch } from '@agent-reach/dispatch';
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
 * Claims a task_id for a submission with the idempotency check (claim-2.lua), its watchdog entry
 * in the due set sent just before it when asked.
 */
export async function claimTask(
  redis: Redis,
  keys: ReachKeys,
  watch: DueWatch,
  c: ClaimRequest,
): Promise<Claimed> {
  const claim = () =>
    redis.reachClaim(
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
  // The watchdog entry goes out first, in one ZADD with every other claim of this tick (due-watch.ts).
  const reply = await (c.watchdogAt !== undefined
    ? watch.watchThen(c.taskId, c.watchdogAt, claim)
    : claim());
  const [state, createdAt = 0, deadlineMs = 0] = reply;
  return state === 2 ? { ours: false } : { ours: true, createdAt, deadlineMs };
}

/** The first attempt's stream entry for a claimed submission. */
export function firstAttempt(
  taskId: string,
  body: SubmitBody,
  payload: string,
  deadlineMs: number,
  lineage: Lineage | undefined,
): TaskMessage {
  return {
    task_id: taskId,
    capability: body.capability,
    payload,
    attempt: 1,
    trace_id: body.trace_id ?? '',
    callback_topic: body.callback_topic ?? '',
    deadline_ms: deadlineMs,
    ...(body.parent_task_id
      ? { parent_task_id: body.parent_task_id, hops: lineage?.hops ?? 0 }
      : {}),
  };
}
