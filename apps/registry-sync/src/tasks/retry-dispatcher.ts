import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ReachKeys, TaskMessage } from '@agent-reach/protocol';
import {
  CapacityWaiter,
  decide,
  type Decision,
  type Delivery,
  type SnapshotHolder,
} from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import type { TaskOutcomes } from './outcomes.ts';

/** Settings of retry dispatch. */
export interface RetryDispatchSettings {
  dispatchGraceMs: number;
  noAgentWaitMs: number;
}

/** What happened to a due task. */
export type DispatchResult = 'sent' | 'waiting' | 'skipped' | 'dead';

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
 * Delivers tasks that wait for another attempt: picks a live agent (another one than the last,
 * when there is a choice), takes the attempt with an atomic assignment so only one dispatcher
 * sends it, delivers, records `sent`. A task that finds no agent waits and is tried again.
 */
export class RetryDispatcher {
  private readonly log: Logger;
  /** Retries that found every agent busy, waiting in this process for a slot to free. */
  private readonly capacity: CapacityWaiter;
  /** task_id → capability of the retries parked here. */
  private readonly parked = new Map<string, string>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly snapshot: SnapshotHolder,
    private readonly delivery: Delivery,
    private readonly outcomes: TaskOutcomes,
    private readonly events: EventSink,
    private readonly settings: RetryDispatchSettings,
    logger: Logger,
  ) {
    this.log = logger.child({ module: 'retry-dispatch' });
    // Routers leave freed slots to the retries parked here: they read how many there are.
    this.capacity = new CapacityWaiter(redis, keys, snapshot, {
      announce: (capability) => this.announce(capability),
    });
  }

  /** Lets the parked retries go; their due entries bring them back at the next sweep. */
  close(): void {
    this.capacity.close();
  }

  /** Dispatches one task from the due set. */
  async dispatch(taskId: string, now: number = Date.now()): Promise<DispatchResult> {
    const [
      status,
      attemptText,
      capability,
      payload,
      topic,
      traceId,
      deadline,
      lastAgent,
      assignedAt,
      dueAt,
      parent,
      hops,
    ] = await this.redis.hmget(
      this.keys.task(taskId),
      'status',
      'attempt',
      'capability',
      'payload',
      'callback_topic',
      'trace_id',
      'deadline_ms',
      'agent_id',
      'assigned_at',
      'due_at',
      'parent_task_id',
      'hops',
    );
    const attempt = Number(attemptText ?? 0);
    if (status === 'sent' && !lastAgent && capability)
      return this.expirePooled(taskId, attempt, capability, Number(deadline ?? 0), now);
    const waiting = status === 'retry_wait' && Number(dueAt ?? 0) <= now;
    const stale =
      status === 'accepted' && now - Number(assignedAt ?? 0) >= this.settings.dispatchGraceMs;
    if (!status || !capability || (status !== 'retry_wait' && status !== 'accepted')) {
      await this.redis.zrem(this.keys.due(), taskId);
      return 'skipped';
    }
    if (!waiting && !stale) return 'skipped';
    // A retry prefers another agent than the one that just failed it: that one comes last.
    const choose = (): Decision =>
      decide(
        this.snapshot.agentsFor(capability),
        { taskId, capability, ...(lastAgent ? { avoid: lastAgent } : {}) },
        this.snapshot.ringFor(capability),
        this.snapshot.inflightOf,
      );
    let decision = choose();
    // Every agent may only look full (counts as old as the snapshot): read the true counts first.
    if (decision.count() === 0 && (await this.capacity.room(capability, decision)) > 0)
      decision = choose();
    const candidates = decision.best(MAX_CANDIDATES);
    const since = Number(dueAt ?? assignedAt ?? now);
    const deadlineAt = Number(deadline ?? 0);
    if (candidates.length === 0)
      return this.noAgent(taskId, capability, attempt, since, now, busy(decision), deadlineAt);

    const nonce = randomUUID();
    let full = false;
    for (const candidate of candidates) {
      const agent = candidate.agent;
      const [code, assigned = attempt, , deadlineMs = Number(deadline ?? 0)] =
        await this.redis.reachAssign(
          this.keys.task(taskId),
          this.keys.timeline(taskId),
          nonce,
          attempt,
          agent.agent_id,
          agent.epoch,
          this.settings.dispatchGraceMs,
        );
      if (code < 0) return 'skipped';
      const task: TaskMessage = {
        task_id: taskId,
        capability,
        payload: payload ?? 'null',
        attempt: assigned,
        trace_id: traceId ?? '',
        callback_topic: topic ?? '',
        deadline_ms: deadlineMs,
        ...(parent ? { parent_task_id: parent, hops: Number(hops ?? 0) } : {}),
      };
      const res = await this.delivery.deliver(agent, task);
      if (!res.ok) {
        if (res.refusal === 'full') {
          this.snapshot.noteInflight(agent.agent_id, agent.max_concurrency);
          full = true;
        }
        continue;
      }
      this.snapshot.noteInflight(agent.agent_id, res.inflight);
      await this.delivery.markSent(
        taskId,
        agent.agent_id,
        assigned,
        res.messageId,
        res.sentAt,
        {
          load: Number(candidate.load.toFixed(4)),
          candidates: decision.count(),
          reason: stale ? 'undelivered' : 'retry',
          ...(lastAgent && lastAgent !== agent.agent_id ? { previous_agent: lastAgent } : {}),
          // A retry's due entry has the task's due_at as its score: dropped only while it is still that one.
        },
        undefined,
        waiting && dueAt ? Number(dueAt) : undefined,
      );
      this.events.write({
        stage: 'sent',
        capability,
        agent_id: agent.agent_id,
        task_id: taskId,
        attempt: assigned,
        at: res.sentAt,
        ...(traceId ? { trace_id: traceId } : {}),
      });
      this.log.info(
        { task_id: taskId, attempt: assigned, agent_id: agent.agent_id },
        'retry delivered',
      );
      return 'sent';
    }
    await this.redis.reachUnassign(this.keys.task(taskId), nonce);
    return this.noAgent(taskId, capability, attempt, since, now, full, deadlineAt);
  }

  /** A task that waited in its pool until its due time without any agent taking it. */
  private async expirePooled(
    taskId: string,
    attempt: number,
    capability: string,
    deadline: number,
    now: number,
  ): Promise<DispatchResult> {
    const messageId = await this.redis.hget(this.keys.task(taskId), 'message_id');
    const terminal = deadline > 0 && now >= deadline ? 'deadline' : 'no_agent';
    const decision = await this.outcomes.retry({ taskId, attempt, reason: terminal, terminal });
    if (messageId) await this.redis.xdel(this.keys.pool(capability), messageId);
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
    taskId: string,
    capability: string,
    attempt: number,
    since: number,
    now: number,
    busy: boolean,
    deadline: number,
  ): Promise<DispatchResult> {
    const terminal = busy
      ? deadline > 0 && now >= deadline
        ? 'deadline'
        : undefined
      : now - since >= this.settings.noAgentWaitMs
        ? 'no_agent'
        : undefined;
    if (terminal) {
      const decision = await this.outcomes.retry({ taskId, attempt, reason: terminal, terminal });
      return decision.kind === 'dead' ? 'dead' : 'skipped';
    }
    await this.redis.zadd(this.keys.due(), 'XX', now + WAIT_AGAIN_MS, taskId);
    if (busy) this.park(taskId, capability);
    return 'waiting';
  }

  /**
   * Holds the retry here until a slot of `capability` frees, then tries again, as long as it
   * finds the agents busy. The sweeps still find the task through its due entry every second
   * meanwhile (and send it if they see room first), and take it again if this process stops.
   */
  private park(taskId: string, capability: string): void {
    if (this.parked.has(taskId)) return;
    this.parked.set(taskId, capability);
    void this.holdForSlot(taskId, capability).finally(() => {
      this.parked.delete(taskId);
      void this.announce(capability).catch(() => undefined);
    });
  }

  private async holdForSlot(taskId: string, capability: string): Promise<void> {
    try {
      while (await this.capacity.wait(capability, PARK_MS)) {
        // A sweep may try it at the same time: the assignment lets one of them send it. Busy
        // again, it stays parked (noAgent finds it in `parked`) and waits for the next slot.
        if ((await this.dispatch(taskId)) !== 'waiting') return;
      }
    } catch (err: unknown) {
      this.log.warn(
        { err, task_id: taskId },
        'parked retry not dispatched; the next sweep tries again',
      );
    }
  }

  /**
   * Tells routers how many retries of `capability` this process holds (`retriesWaiting`, kept
   * ANNOUNCE_TTL_MS, renewed on every pass of the capability's wait), or that none are left.
   */
  private announce(capability: string): Promise<unknown> {
    let waiting = 0;
    for (const c of this.parked.values()) if (c === capability) waiting++;
    const key = this.keys.retriesWaiting(capability);
    return waiting > 0 ? this.redis.set(key, waiting, 'PX', ANNOUNCE_TTL_MS) : this.redis.del(key);
  }
}

/** Live agents serve the capability and every one of them is at capacity. */
function busy(decision: Decision): boolean {
  return decision.count() === 0 && decision.all.some((c) => c.excluded === 'full');
}
