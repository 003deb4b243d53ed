import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import { poolBandOf, TaskRecordField, watchdogMember, type ReachKeys } from '@agent-reach/protocol';
import {
  assignRetry,
  CapacityWaiter,
  DueWatch,
  parsePendingEntry,
  poolOf,
  readStoredTask,
  routeWithFallback,
  type Decision,
  type Delivery,
  type RoutingContext,
  type SnapshotHolder,
  type StoredTask,
  type TaskSender,
  unpackRoute,
  type WaitingRoom,
} from '@agent-reach/dispatch';
import { nextNonce } from '@agent-reach/service-kit';
import type { TaskOutcomes } from './outcomes.ts';

/** Settings of re-sends. */
export interface ResendSettings {
  dispatchGraceMs: number;
  noAgentWaitMs: number;
}

/** What a resender works with. */
export interface ResenderOptions {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  /** The concurrency watermark in force. */
  watermark: () => number;
  sender: TaskSender;
  /** Where a waiting task is assigned, in its tick's call for its task shard. */
  delivery: Pick<Delivery, 'assigns'>;
  outcomes: TaskOutcomes;
  /** The waiting rooms: a queued task's due entry is its deadline there. */
  room: WaitingRoom;
  settings: ResendSettings;
  logger: Logger;
}

/** What happened to a due task. */
export type ResendResult = 'sent' | 'waiting' | 'skipped' | 'dead';

const WAIT_AGAIN_MS = 1000;
/** How long an announcement of parked retries counts without being renewed (a pass renews it every 20 ms at most). */
const ANNOUNCE_TTL_MS = 1000;
/**
 * How long a retry stays parked before it lets go (its due entry brings it back within a second).
 * Long, so the routers see it waiting without gaps: each sweep would otherwise park it anew.
 */
const PARK_MS = 60_000;
const MAX_CANDIDATES = 3;

/**
 * Sends every task again that waits for another attempt — a retry after its backoff, a task
 * taken back from a dead or stuck agent, a task drained from its pool, a replayed dead letter, a
 * submission a router claimed and never delivered. The task is routed by the constraints stored
 * with it (tags, region and its policy, session, trace), preferring another agent than the last,
 * and sent through the one task sender with an assignment only one sender wins. A task that
 * finds no agent waits and is tried again.
 */
export class Resender {
  private readonly log: Logger;
  private readonly routing: RoutingContext;
  /** Retries that found every agent busy, waiting in this process for a slot to free. */
  private readonly capacity: CapacityWaiter;
  /** task_id → capability of the retries parked here. */
  private readonly parked = new Map<string, string>();
  /** The due set's watchdog entries over this process's sends. */
  private readonly watch: DueWatch;

  constructor(private readonly o: ResenderOptions) {
    this.log = o.logger.child({ module: 'resender' });
    this.routing = { redis: o.redis, keys: o.keys, snapshot: o.snapshot, watermark: o.watermark };
    this.watch = new DueWatch({ redis: o.redis, keys: o.keys });
    // Routers leave freed slots to the retries parked here: they read how many there are.
    this.capacity = new CapacityWaiter({
      redis: o.redis,
      keys: o.keys,
      snapshot: o.snapshot,
      hooks: {
        announce: (capability) => this.announce(capability),
      },
    });
  }

  /** Lets the parked retries go; their due entries bring them back at the next sweep. */
  close(): void {
    this.capacity.close();
  }

  /**
   * Sends one task from the due set again, if it is due. `watchdog`: the due entry found was the
   * watchdog over a send (`#<task_id>`), which only re-drives a claim left undelivered. A retry
   * parked here waits for its turn (`fromPark`: its turn came): a sweep that found a slot first
   * would pass over retries of a higher priority parked after it.
   */
  async resend(
    taskId: string,
    now: number = Date.now(),
    via: 'due' | 'watchdog' = 'due',
    fromPark = false,
  ): Promise<ResendResult> {
    if (!fromPark && via === 'due' && this.parked.has(taskId)) return 'waiting';
    const { redis, keys } = this.o;
    const task = await readStoredTask(redis, keys, taskId);
    if (task?.status === 'queued') return this.queuedDue(task, now);
    // A delayed task's hold is its watchdog member (send/hold.ts): sent once due, like a retry.
    const delayed = task?.status === 'delayed';
    if (via === 'watchdog' && task?.status === 'retry_wait') {
      // A retry's send that failed before its assignment (a command refused during a failover)
      // left only the watchdog entry it took over: the task's own entry comes back (unless a
      // later retry already has it) and the next sweep sends it.
      await redis
        .multi()
        .zadd(keys.dueOf(taskId), 'NX', task.dueAt, taskId)
        .zrem(keys.dueOf(taskId), watchdogMember(taskId))
        .exec();
      return 'skipped';
    }
    if (via === 'watchdog' && task?.status !== 'accepted' && !delayed) {
      // The send it watched is over: whatever follows has the task's own entry.
      await redis.zrem(keys.dueOf(taskId), watchdogMember(taskId));
      return 'skipped';
    }
    if (task?.status === 'sent' && !task.agentId && task.capability) {
      return this.expirePooled(task, now);
    }
    if (
      !task ||
      !task.capability ||
      (task.status !== 'retry_wait' && task.status !== 'accepted' && !delayed)
    ) {
      await redis.zrem(keys.dueOf(taskId), taskId, watchdogMember(taskId));
      return 'skipped';
    }
    const waiting = (task.status === 'retry_wait' || delayed) && task.dueAt <= now;
    const stale =
      task.status === 'accepted' && now - task.assignedAt >= this.o.settings.dispatchGraceMs;
    if (!waiting && !stale) return 'skipped';
    if (stale && (await this.delivered(task))) {
      // Its sender stopped after the delivery: the agent holds the attempt, and its acks (or
      // the inflight sweep, should the agent fail) take the task from here.
      await redis.zrem(keys.dueOf(taskId), taskId, watchdogMember(taskId));
      return 'skipped';
    }
    // A retry prefers another agent than the one that just failed it: that one comes last.
    // Its own capability first, each time: a fallback only while that has no live agent.
    const route = () =>
      routeWithFallback(this.routing, task, {
        picks: MAX_CANDIDATES,
        ...(task.agentId ? { avoid: task.agentId } : {}),
      });
    let routed = await route();
    // Every agent may only look full (counts as old as the snapshot): read the true counts first.
    if (
      routed.decision.count() === 0 &&
      (await this.capacity.room(routed.capability, routed.decision)) > 0
    ) {
      routed = await route();
    }
    const { decision } = routed;
    const fallback = routed.fallback ? routed.capability : undefined;
    const candidates = decision.best(MAX_CANDIDATES);
    const since = task.dueAt || task.assignedAt || now;
    if (candidates.length === 0)
      return this.noAgent(task, since, now, busy(decision), routed.capability);
    // From here a watchdog entry covers the send; the retry's own entry is left to whatever the
    // attempt being sent leads to (a fast failure schedules the next one there).
    if (waiting) await this.watch.takeOver(taskId, now + this.o.settings.dispatchGraceMs);
    const outcome = await this.o.sender.send({
      task,
      claim: assignRetry(redis, keys, this.o.delivery, {
        taskId,
        attempt: task.attempt,
        nonce: nextNonce(),
        graceMs: this.o.settings.dispatchGraceMs,
      }),
      to: { agents: candidates, count: decision.count() },
      reason: stale ? 'undelivered' : delayed ? 'delayed' : 'retry',
      ...(task.agentId ? { previousAgent: task.agentId } : {}),
      watched: true,
      ...(fallback ? { fallback } : {}),
    });
    if (outcome.kind === 'not_ours') return 'skipped';
    if (outcome.kind === 'refused')
      return this.noAgent(task, since, now, outcome.someFull, routed.capability);
    await outcome.recorded;
    this.log.debug(
      { task_id: taskId, attempt: outcome.attempt, agent_id: outcome.agentId },
      'task sent again',
    );
    return 'sent';
  }

  /**
   * The pool stream a pooled task waits in: its priority's band of its capability's pool, or of
   * the fallback's its `sent` stage names.
   */
  private async pooledIn(task: StoredTask): Promise<string> {
    let pool = poolOf(task);
    if ((task.fallbackCapabilities ?? []).length > 0) {
      const route = await this.o.redis.hget(this.o.keys.task(task.taskId), TaskRecordField.route);
      pool = (route ? unpackRoute(route).pool : undefined) ?? pool;
    }
    return this.o.keys.poolBand(pool, poolBandOf(task.priority));
  }

  /**
   * A queued task's due entry came due (its watchdog member): at its deadline it leaves the room
   * dead — `deadline`, or `no_agent` when no agent of its capability is live. Before it, the entry
   * watched a send from the room that stopped midway: the task goes back to its place and the
   * entry back to its deadline.
   */
  private async queuedDue(task: StoredTask, now: number): Promise<ResendResult> {
    const { redis, keys, room } = this.o;
    const { taskId, capability } = task;
    if (task.deadlineMs > now) {
      await room.giveBack(capability, taskId);
      await redis.zadd(keys.dueOf(taskId), 'XX', task.deadlineMs, watchdogMember(taskId));
      return 'skipped';
    }
    const live = this.o.snapshot
      .agentsFor(capability)
      .some((a) => a.status !== 'OFFLINE' && a.status !== 'DRAINING');
    const terminal = live ? 'deadline' : 'no_agent';
    const decision = await this.o.outcomes.retry({
      taskId,
      attempt: task.attempt,
      reason: terminal,
      terminal,
    });
    await room.leave(capability, taskId);
    return decision.kind === 'dead' ? 'dead' : 'skipped';
  }

  /** The task's agent holds a delivery of its current attempt (a pending entry for it). */
  private async delivered(task: StoredTask): Promise<boolean> {
    if (!task.agentId) return false;
    const value = await this.o.redis.hget(this.o.keys.pending(task.agentId), task.taskId);
    return value !== null && parsePendingEntry(task.taskId, value)?.attempt === task.attempt;
  }

  /** A task that waited in its pool until its due time without any agent taking it. */
  private async expirePooled(task: StoredTask, now: number): Promise<ResendResult> {
    const { taskId, attempt, messageId } = task;
    const deadline = task.deadlineMs;
    const terminal = deadline > 0 && now >= deadline ? 'deadline' : 'no_agent';
    const decision = await this.o.outcomes.retry({ taskId, attempt, reason: terminal, terminal });
    if (messageId) await this.o.redis.xdel(await this.pooledIn(task), messageId);
    return decision.kind === 'dead' ? 'dead' : 'skipped';
  }

  /**
   * No agent took the task. When live agents serve the capability but all are at capacity
   * (`busy`), it waits for a slot as long as it takes, up to its deadline: busy agents are not
   * missing ones. It is parked here meanwhile, tried again the moment a slot frees, and its due
   * entry brings it back a second later should this process stop. Otherwise it is dead-lettered
   * (`no_agent`) once it waited `noAgentWaitMs`.
   */
  private async noAgent(
    task: StoredTask,
    since: number,
    now: number,
    busy: boolean,
    capability: string,
  ): Promise<ResendResult> {
    const { taskId, attempt } = task;
    const deadline = task.deadlineMs;
    const terminal = busy
      ? deadline > 0 && now >= deadline
        ? 'deadline'
        : undefined
      : now - since >= this.o.settings.noAgentWaitMs
        ? 'no_agent'
        : undefined;
    if (terminal) {
      const decision = await this.o.outcomes.retry({ taskId, attempt, reason: terminal, terminal });
      return decision.kind === 'dead' ? 'dead' : 'skipped';
    }
    // Back to the task's own entry: a send that was tried handed its watchdog over.
    await this.o.redis
      .multi()
      .zadd(this.o.keys.dueOf(taskId), now + WAIT_AGAIN_MS, taskId)
      .zrem(this.o.keys.dueOf(taskId), watchdogMember(taskId))
      .exec();
    if (busy) this.park(taskId, capability, task.priority);
    return 'waiting';
  }

  /**
   * Holds the retry here until a slot of `capability` frees, then tries again, as long as it
   * finds the agents busy. The sweeps of this process leave it to its turn (highest priority
   * first); its due entry stays due, so another instance's sweeps take it if this process stops.
   */
  private park(taskId: string, capability: string, priority: number): void {
    if (this.parked.has(taskId)) return;
    this.parked.set(taskId, capability);
    void this.holdForSlot(taskId, capability, priority).finally(() => {
      this.parked.delete(taskId);
      void this.announce(capability).catch(() => undefined);
    });
  }

  /** Parked retries are let go highest priority first, FIFO within a priority. */
  private async holdForSlot(taskId: string, capability: string, priority: number): Promise<void> {
    try {
      while (await this.capacity.wait(capability, PARK_MS, priority)) {
        // A sweep may try it at the same time: the assignment lets one of them send it. Busy
        // again, it stays parked (noAgent finds it in `parked`) and waits for the next slot.
        if ((await this.resend(taskId, Date.now(), 'due', true)) !== 'waiting') return;
      }
    } catch (err: unknown) {
      this.log.warn({ err, task_id: taskId }, 'parked retry not sent; the next sweep tries again');
    }
  }

  /**
   * Tells routers how many retries of `capability` this process holds (`retriesWaiting`, kept
   * ANNOUNCE_TTL_MS, renewed on every pass of the capability's wait), or that none are left.
   */
  private announce(capability: string): Promise<unknown> {
    let waiting = 0;
    for (const c of this.parked.values()) if (c === capability) waiting++;
    const key = this.o.keys.retriesWaiting(capability);
    return waiting > 0
      ? this.o.redis.set(key, waiting, 'PX', ANNOUNCE_TTL_MS)
      : this.o.redis.del(key);
  }
}

/** Live agents serve the capability and every one of them is at capacity. */
/**
 * No candidate, and some agent of the capability is only busy: full, or SUSPECT for a dependency
 * flagged down fleet-wide (docs/PROTOCOL.md §6, Dependencies). The retry waits for it up to its
 * deadline rather than spending its attempts or dying `no_agent`.
 */
function busy(decision: Decision): boolean {
  return (
    decision.count() === 0 &&
    decision.all.some((c) => c.excluded === 'full' || c.excluded === 'dependency_down')
  );
}
