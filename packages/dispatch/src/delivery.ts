import type { Redis } from 'ioredis';
import { DueWatch } from './due-watch.ts';
import {
  Coalescer,
  encodeTask,
  type ReachKeys,
  type TaskMessage,
  type TimelineEntry,
} from '@agent-reach/protocol';
import { decodeDeliverReply, type DeliverReply } from './commands/replies.ts';

/** The agent a delivery targets, as the snapshot showed it. */
export interface DeliveryTarget {
  agent_id: string;
  epoch: number;
}

/** Outcome of one delivery try. */
export type DeliveryResult = DeliverReply;

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

/** What the `sent` stage records for one attempt. */
export interface SentRecord {
  taskId: string;
  /** '' for a task put in its capability's pool. */
  agentId: string;
  attempt: number;
  messageId: string;
  sentAt: number;
  routing?: RoutingRecord;
  /** For a pooled task: its pool stream and when it expires there unclaimed. */
  pooled?: { stream: string; dueAt: number };
  /** A watchdog entry (`#<task_id>` in the due set) covers this send: it is dropped once sent. */
  watched?: boolean;
}

/**
 * Delivers task attempts to agents' inboxes (the agent re-verified in the same script) and
 * records the `sent` stage. Only the task sender (send/task-sender.ts) and the prober use it.
 */
export class Delivery {
  /** Watchdog entries in the due set, batched per tick. */
  readonly watch: DueWatch;
  /** The deliveries of one tick, one script call per agent. */
  private readonly batches: Coalescer<(string | number)[], unknown[]>;

  /** `offlineMs`: the lease age past which an agent is not delivered to (read at each call). */
  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    offlineMs: number | (() => number),
  ) {
    const offline = typeof offlineMs === 'number' ? () => offlineMs : offlineMs;
    this.watch = new DueWatch(redis, keys.due());
    this.batches = new Coalescer((id, tasks) =>
      this.redis.reachDeliver(
        this.keys.agent(id),
        this.keys.inbox(id),
        this.keys.pending(id),
        offline(),
        ...tasks.flat(),
      ),
    );
  }

  /**
   * One delivery try to `agent`. A liveness probe says so (`probe`): its pending entry is marked,
   * which is how registry-sync tells a probe from a caller's task — never by its id.
   */
  async deliver(
    agent: DeliveryTarget,
    task: TaskMessage,
    opts: { probe?: boolean } = {},
  ): Promise<DeliveryResult> {
    const fields = encodeTask(task);
    const reply = await this.batches.call(
      agent.agent_id,
      [
        agent.epoch,
        task.task_id,
        task.attempt,
        task.deadline_ms,
        opts.probe ? 1 : 0,
        fields.length,
        ...fields,
      ],
      task.payload.length,
    );
    return decodeDeliverReply(reply);
  }

  /**
   * Records `sent` for the attempt and drops the task's watchdog entry in the due set (a pooled
   * task gets its own entry for when it expires unclaimed), in one round trip.
   */
  async markSent(r: SentRecord): Promise<void> {
    const entry: TimelineEntry & { routing?: RoutingRecord } = {
      stage: 'sent',
      at: r.sentAt,
      attempt: r.attempt,
      message_id: r.messageId,
    };
    if (r.agentId) entry.agent_id = r.agentId;
    if (r.routing && Object.keys(r.routing).length > 0) entry.routing = r.routing;
    // Two commands on the auto-pipelined connection: they leave together with the other
    // commands of this tick, in order, without a pipeline object per task.
    const sent = this.redis.reachMarkSent(
      this.keys.task(r.taskId),
      this.keys.timeline(r.taskId),
      r.attempt,
      r.messageId,
      r.sentAt,
      r.pooled ? r.pooled.stream : this.keys.inbox(r.agentId),
      JSON.stringify(entry),
    );
    const due: Promise<unknown>[] = [];
    if (r.pooled) due.push(this.redis.zadd(this.keys.due(), r.pooled.dueAt, r.taskId));
    if (r.watched) due.push(this.watch.unwatch(r.taskId));
    await Promise.all([sent, ...due]);
  }
}
