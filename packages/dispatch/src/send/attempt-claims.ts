import type { RedisClient } from '@agent-reach/service-kit/redis';
import { watchdogMember, type ReachKeys } from '@agent-reach/protocol';
import { releaseClaimScript } from '../commands/release-claim.ts';
import { unassignScript } from '../commands/unassign.ts';
import type { Delivery, DeliveryTarget } from '../delivery.ts';
import { constraintArgs, type TaskSpec } from '../task/task-spec.ts';

/** An attempt taken for one agent (or for the pool): what its stream entry needs. */
export type Taken =
  { ok: true; attempt: number; createdAt: number; deadlineMs: number } | { ok: false };

/**
 * How a send takes the task's attempt before delivering it, and gives it back when no candidate
 * took it. A submission claims the task_id (and creates the task); a later send re-assigns the
 * waiting task. Either way only one sender wins a given attempt.
 */
export interface AttemptClaim {
  /**
   * Takes (or re-takes, for the next candidate) the attempt for `agent`, none for a pool, with
   * the send's routing record (task/timeline.ts `packRoute`), which the `sent` stage shows.
   */
  take(agent: DeliveryTarget | undefined, route: string): Promise<Taken>;
  /** Gives the attempt back: no candidate took the task. */
  release(): Promise<void>;
}

/** A new submission's claim (claim-n.lua). */
export interface SubmissionClaim {
  task: TaskSpec;
  /** Identifies this submission across re-sent commands. */
  nonce: string;
  /** 0 for none. */
  timeoutMs: number;
  /** The watchdog entry's score in the due set, added in the same round trip as the first claim. */
  watchdogAt: number;
}

/**
 * Claims the task_id of a submission with the idempotency check and stores the task with its
 * constraints. The watchdog entry goes out just before the first claim, in the tick's one ZADD
 * (due-watch.ts), so a router that dies after claiming leaves the task to registry-sync. The
 * task's `created_at` is the Redis time the deliveries' replies show (`delivery.clock`): the
 * claim asks Redis for no `TIME`.
 */
export function claimSubmission(
  redis: RedisClient,
  keys: ReachKeys,
  delivery: Pick<Delivery, 'watch' | 'clock' | 'claims'>,
  c: SubmissionClaim,
): AttemptClaim {
  const { watch, clock, claims } = delivery;
  const t = c.task;
  let first = true;
  return {
    async take(agent, route) {
      const now = Math.floor(clock.now());
      // In the tick's claim call for the task's shard (send/claim-batch.ts).
      const claim = () =>
        claims.claim({
          nonce: c.nonce,
          taskId: t.taskId,
          capability: t.capability,
          payload: t.payload,
          callbackTopic: t.callbackTopic,
          traceId: t.traceId,
          timeoutMs: c.timeoutMs,
          agentId: agent?.agent_id ?? '',
          epoch: agent?.epoch ?? 0,
          route,
          now,
          constraints: constraintArgs(t).flatMap((f) => [f.field, f.value]),
        });
      const reply = first ? await watch.watchThen(t.taskId, c.watchdogAt, claim) : await claim();
      first = false;
      return reply.ours
        ? { ok: true, attempt: 1, createdAt: reply.createdAt, deadlineMs: reply.deadlineMs }
        : { ok: false };
    },
    async release() {
      // The caller's 503 leaves nothing behind: the claim and its watchdog entry both go — unless
      // another submission of the task_id was told it exists (release-claim-2.lua keeps it): its
      // watchdog entry then stays, and registry-sync sends the task when it comes due.
      const released = await releaseClaimScript.run(redis, {
        keys: { task: keys.task(t.taskId), timeline: keys.timeline(t.taskId) },
        args: { nonce: c.nonce },
      });
      if (released === 'kept') return;
      await redis.zrem(keys.dueOf(t.taskId), watchdogMember(t.taskId));
    },
  };
}

/** A waiting task's re-assignment (assign-n.lua). */
export interface RetryAssignment {
  taskId: string;
  /** The attempt the task is at; the assignment moves only that one. */
  attempt: number;
  nonce: string;
  /** How long an assignment may stay undelivered before another sender re-takes it. */
  graceMs: number;
  /** What the task waits as when no candidate took it. @default 'retry_wait' */
  waitsAs?: 'retry_wait' | 'queued';
}

/**
 * Takes a task that waits for another attempt for the chosen agent, one sender per attempt: in
 * the tick's assign-n.lua call for its task shard (send/assign-batch.ts).
 */
export function assignRetry(
  redis: RedisClient,
  keys: ReachKeys,
  delivery: Pick<Delivery, 'assigns'>,
  a: RetryAssignment,
): AttemptClaim {
  return {
    async take(agent, route) {
      const reply = await delivery.assigns.assign(a.taskId, {
        nonce: a.nonce,
        attempt: a.attempt,
        agentId: agent?.agent_id ?? '',
        epoch: agent?.epoch ?? 0,
        graceMs: a.graceMs,
        route,
      });
      return reply.ok ? { ...reply, ok: true } : { ok: false };
    },
    async release() {
      await unassignScript.run(redis, {
        keys: { task: keys.task(a.taskId) },
        args: { nonce: a.nonce, status: a.waitsAs ?? 'retry_wait' },
      });
    },
  };
}
