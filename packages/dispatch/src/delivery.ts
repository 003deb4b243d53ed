import type { Redis } from 'ioredis';
import { DueWatch } from './due-watch.ts';
import {
  Coalescer,
  encodeTask,
  PROBE_CAPABILITY,
  type ReachKeys,
  type TaskMessage,
  type TimelineEntry,
} from '@agent-reach/protocol';

/** The agent a delivery targets, as the snapshot showed it. */
export interface DeliveryTarget {
  agent_id: string;
  epoch: number;
}

/** Why a chosen agent did not take a task. */
export type DeliveryRefusal = 'gone' | 'epoch_changed' | 'not_live' | 'full';

/** Outcome of one delivery try. */
export type DeliveryResult =
  | { ok: true; messageId: string; sentAt: number; inflight: number }
  | { ok: false; refusal: DeliveryRefusal };

/** What the deliver script answers for one task. */
type DeliverReply = [number, string?, number?, number?];

const REFUSALS: Record<number, DeliveryRefusal> = {
  [-1]: 'gone',
  [-2]: 'epoch_changed',
  [-3]: 'not_live',
  [-4]: 'full',
};

/** Why an agent was chosen, kept in the `sent` stage of the timeline. */
export interface RoutingRecord {
  score?: number;
  load?: number;
  candidates?: number;
  runner_up?: string;
  snapshot_age_ms?: number;
  reason?: string;
  [key: string]: unknown;
}

/**
 * Delivers task attempts to agents' inboxes (the agent re-verified in the same script) and
 * records the `sent` stage. Used by the router for submissions and by registry-sync for retries.
 */
export class Delivery {
  /** Watchdog entries in the due set, batched per tick. */
  readonly watch: DueWatch;
  /** The deliveries of one tick, one script call per agent. */
  private readonly batches: Coalescer<(string | number)[], DeliverReply>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly offlineMs: number,
  ) {
    this.watch = new DueWatch(redis, keys.due());
    this.batches = new Coalescer((id, tasks) =>
      this.redis.reachDeliver(
        this.keys.agent(id),
        this.keys.inbox(id),
        this.keys.pending(id),
        this.offlineMs,
        ...tasks.flat(),
      ),
    );
  }

  /** One delivery try to `agent`. */
  async deliver(agent: DeliveryTarget, task: TaskMessage): Promise<DeliveryResult> {
    const fields = encodeTask(task);
    const [code, messageId = '', sentAt = 0, inflight = 0] = await this.batches.call(
      agent.agent_id,
      [
        agent.epoch,
        task.task_id,
        task.attempt,
        task.deadline_ms,
        task.capability === PROBE_CAPABILITY ? 1 : 0,
        fields.length,
        ...fields,
      ],
      task.payload.length,
    );
    if (code < 0) return { ok: false, refusal: REFUSALS[code] ?? 'gone' };
    return { ok: true, messageId, sentAt, inflight };
  }

  /**
   * Records `sent` for the attempt and drops the task's watchdog entry in the due set (or, for a
   * pooled task, moves it to when the task expires unclaimed), in one round trip. With
   * `watchdogAt` (the entry's score when the caller set or read it) the entry is dropped only if
   * it is still that one: a late record must not drop the entry of the retry that followed a fast
   * failure.
   */
  async markSent(
    taskId: string,
    agentId: string,
    attempt: number,
    messageId: string,
    sentAt: number,
    routing: RoutingRecord = {},
    pooled?: { stream: string; dueAt: number },
    watchdogAt?: number,
  ): Promise<void> {
    const entry: TimelineEntry & { routing?: RoutingRecord } = {
      stage: 'sent',
      at: sentAt,
      agent_id: agentId,
      attempt,
      message_id: messageId,
    };
    if (Object.keys(routing).length > 0) entry.routing = routing;
    if (agentId) entry.agent_id = agentId;
    else delete entry.agent_id;
    // Two commands on the auto-pipelined connection: they leave together with the other
    // commands of this tick, in order, without a pipeline object per task.
    const sent = this.redis.reachMarkSent(
      this.keys.task(taskId),
      this.keys.timeline(taskId),
      attempt,
      messageId,
      sentAt,
      pooled ? pooled.stream : this.keys.inbox(agentId),
      JSON.stringify(entry),
    );
    const due = pooled
      ? this.redis.zadd(this.keys.due(), pooled.dueAt, taskId)
      : watchdogAt !== undefined
        ? this.watch.unwatch(taskId, watchdogAt)
        : this.redis.zrem(this.keys.due(), taskId);
    await Promise.all([sent, due]);
  }
}
