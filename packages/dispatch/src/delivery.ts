import type { RedisClient } from '@agent-reach/service-kit/redis';
import { DueWatch } from './due-watch.ts';
import { AssignBatch } from './send/assign-batch.ts';
import { ClaimBatch } from './send/claim-batch.ts';
import { HoldBatch } from './send/hold-batch.ts';
import { RedisClock, timeReplyMs } from './redis-clock.ts';
import { Coalescer, encodeTask, type ReachKeys, type TaskMessage } from '@agent-reach/protocol';
import { deliverScript, type DeliverReply, type DeliverTask } from './commands/deliver.ts';
import { recordPooledScript } from './commands/record-pooled.ts';

/** The agent a delivery targets, as the snapshot showed it. */
export interface DeliveryTarget {
  agent_id: string;
  epoch: number;
}

/** Outcome of one delivery try. */
export type DeliveryResult = DeliverReply;

/** A task put in its capability's pool: what its `sent` record holds. */
export interface PooledRecord {
  taskId: string;
  attempt: number;
  /** The pool stream and the entry's id there. */
  stream: string;
  messageId: string;
  sentAt: number;
  /** When the task expires in the pool unclaimed (its own entry in the due set). */
  dueAt: number;
  /** A watchdog entry (`#<task_id>` in the due set) covers this send: it is dropped once sent. */
  watched?: boolean;
}

/** What a delivery needs. */
export interface DeliveryOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /**
   * The lease age past which an agent is not delivered to whatever its status (read at each
   * call): how long deliveries go on while no registry-sync renews leases.
   */
  leaseBoundMs: number | (() => number);
}

/**
 * Delivers task attempts to agents' inboxes (the agent re-verified in the same script). The
 * delivery's pending entry in the agent's slot is the `sent` record: the task hash gets its
 * `sent_at` from there with the first ack (see task/timeline.ts). Only the task sender
 * (send/task-sender.ts) and the prober use it.
 */
export class Delivery {
  /** Watchdog entries in the due set, batched per tick. */
  readonly watch: DueWatch;
  /** Redis server time as the deliveries' replies show it (a claim's `created_at`). */
  readonly clock = new RedisClock();
  /** The submissions' claims of one tick, one script call per task shard. */
  readonly claims: ClaimBatch;
  /** The assignments of waiting tasks of one tick, one script call per task shard. */
  readonly assigns: AssignBatch;
  /** The tasks stored `delayed` or `queued` in one tick, one script call per task shard. */
  readonly holds: HoldBatch;
  /** The deliveries of one tick, one script call per agent. */
  private readonly batches: Coalescer<DeliverTask, DeliverReply>;

  constructor(private readonly o: DeliveryOptions) {
    const { leaseBoundMs } = o;
    const bound = typeof leaseBoundMs === 'number' ? () => leaseBoundMs : leaseBoundMs;
    this.claims = new ClaimBatch({ redis: o.redis, keys: o.keys });
    this.assigns = new AssignBatch({ redis: o.redis, keys: o.keys });
    this.holds = new HoldBatch({ redis: o.redis, keys: o.keys });
    // The claims and holds a tick's watchdog entries cover leave in the entries' write.
    this.watch = new DueWatch({
      redis: o.redis,
      keys: o.keys,
      issued: () => {
        this.claims.flush();
        this.holds.flush();
      },
    });
    this.batches = new Coalescer((id, tasks) =>
      deliverScript.run(this.o.redis, {
        keys: { agent: o.keys.agent(id), inbox: o.keys.inbox(id), pending: o.keys.pending(id) },
        args: { leaseBoundMs: bound() },
        items: tasks,
      }),
    );
  }

  /** Bounds {@link clock} by Redis's `TIME` every few seconds (RedisClock.follow) until close(). */
  followRedisTime(): void {
    this.clock.follow(async () => timeReplyMs(await this.o.redis.time()));
  }

  /** Stops following Redis's time. */
  close(): void {
    this.clock.stop();
  }

  /**
   * One delivery try to `agent`. A liveness probe (`probe`) or a shadow copy (`shadow`) says so:
   * its pending entry is marked, which is how registry-sync tells one from a caller's task —
   * never by its id. A shadow copy's entry carries `shadow` = 1 for the handler, and only an
   * agent in observation mode takes one.
   */
  async deliver(
    agent: DeliveryTarget,
    task: TaskMessage,
    opts: { probe?: boolean; shadow?: boolean } = {},
  ): Promise<DeliveryResult> {
    const fields = encodeTask(opts.shadow ? { ...task, shadow: true } : task);
    const result = await this.batches.call(
      agent.agent_id,
      {
        epoch: agent.epoch,
        taskId: task.task_id,
        attempt: task.attempt,
        deadlineMs: task.deadline_ms,
        mark: opts.probe ? 'probe' : opts.shadow ? 'shadow' : '',
        entry: fields,
      },
      task.payload.length,
    );
    if (result.ok) this.clock.observe(result.sentAt);
    return result;
  }

  /**
   * Records `sent` for a task put in its capability's pool (no agent holds a pending entry for
   * it), its expiry in the due set, and drops its watchdog entry, in one round trip.
   */
  async recordPooled(r: PooledRecord): Promise<void> {
    const taskKey = this.o.keys.task(r.taskId);
    const dueKey = this.o.keys.dueOf(r.taskId);
    // Sent together, without waiting between them: one round trip.
    await Promise.all([
      recordPooledScript.run(this.o.redis, {
        keys: { task: taskKey },
        args: { attempt: r.attempt, messageId: r.messageId, sentAt: r.sentAt, stream: r.stream },
      }),
      this.o.redis.zadd(dueKey, r.dueAt, r.taskId),
      r.watched ? this.watch.unwatch(r.taskId) : undefined,
    ]);
  }
}
