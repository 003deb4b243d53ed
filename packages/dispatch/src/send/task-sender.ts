import { slotPipeline, type RedisClient } from '@agent-reach/service-kit/redis';
import { endSpan, startSpan, tracing } from '@agent-reach/service-kit/tracing';
import type { Logger } from 'pino';
import { encodeTask, poolBandOf, type ReachKeys } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import type { Delivery } from '../delivery.ts';
import { timeReplyMs } from '../redis-clock.ts';
import { packRoute, type RoutingRecord } from '../task/timeline.ts';
import type { Candidate } from '../routing/policy.ts';
import type { SnapshotHolder } from '../snapshot/snapshot-holder.ts';
import { attemptMessage, poolOf, type TaskSpec } from '../task/task-spec.ts';
import type { AttemptClaim } from './attempt-claims.ts';
import type { ShadowMirror } from '../shadow/shadow-mirror.ts';

/** Why a task went to its capability's pool. */
export type PoolReason = 'batch' | 'pull_agents' | 'no_agent' | 'at_capacity';

/** Where a send goes: the ranked candidates, tried in order, or the capability's pool. */
export type SendTarget =
  | {
      agents: readonly Candidate[];
      /** How many candidates the decision had in all (recorded with the `sent` stage). */
      count: number;
      /** How many of `agents` to try. @default all */
      tries?: number;
      /** The first candidate was already counted in the snapshot when it was chosen. */
      firstReserved?: boolean;
    }
  | {
      pool: PoolReason;
      /** How long the task waits in the pool for an agent when it has no deadline. */
      waitMs: number;
    };

/** One send of one attempt of a task. */
export interface SendRequest {
  task: TaskSpec;
  /** How the attempt is taken: a submission's claim or a retry's assignment. */
  claim: AttemptClaim;
  to: SendTarget;
  /** Why this send happens (kept in the `sent` stage): `retry`, `undelivered`, … */
  reason?: string;
  /** The agent of the attempt before this one. */
  previousAgent?: string;
  /** A watchdog entry in the due set (`#<task_id>`) covers this send; dropped once it is sent. */
  watched?: boolean;
  /**
   * The fallback capability this send goes to (`routeWithFallback`), when the task's own had no
   * live agent: the agent gets the task under it, and the `sent` stage says so.
   */
  fallback?: string;
}

/** What a send did. */
export type SendOutcome =
  | {
      kind: 'sent';
      attempt: number;
      /** '' for a pooled task. */
      agentId: string;
      stream: string;
      messageId: string;
      sentAt: number;
      /** Settles once the send's follow-ups (watchdog entry, pooled record, session) are written. */
      recorded: Promise<void>;
    }
  | {
      kind: 'refused';
      /** `agent_id:refusal` of each candidate tried. */
      refusals: string[];
      /** Every candidate tried was full. */
      allFull: boolean;
      /** Some candidate tried was full. */
      someFull: boolean;
    }
  /** The attempt was not ours to take: another submission owns the task_id, or the task moved on. */
  | { kind: 'not_ours' };

/** A send as the sender carries it: a fallback's task runs as the fallback capability. */
type Send = SendRequest & {
  /** The task's own capability, when `task.capability` is the fallback it is sent to. */
  ownCapability?: string;
};

/** What the sender works with. */
export interface TaskSenderOptions {
  redis: RedisClient;
  keys: ReachKeys;
  delivery: Delivery;
  snapshot: SnapshotHolder;
  events: EventSink;
  logger: Logger;
  /** How long a session sticks to the agent its task was sent to, seconds. */
  sessionTtlS: number;
  /** Mirrors a share of first attempts to observing agents (docs/PROTOCOL.md §7). */
  shadow?: ShadowMirror | undefined;
}

/**
 * The one writer of the `sent` stage: every send of a task — first, batch, retry, reclaim, pool
 * drain, replay — takes its attempt, delivers it with the constraints the task carries, records
 * `sent` (timeline, due set, event, session) here, and nowhere else.
 */
export class TaskSender {
  private readonly log: Logger;

  constructor(private readonly o: TaskSenderOptions) {
    this.log = o.logger.child({ module: 'task-sender' });
  }

  /** Sends one attempt of `req.task` to the first candidate that takes it, or to its pool. */
  send(req: SendRequest): Promise<SendOutcome> {
    // A fallback send is the task under the capability it runs as; the claim keeps its own.
    const r: Send = req.fallback
      ? {
          ...req,
          task: { ...req.task, capability: req.fallback },
          ownCapability: req.task.capability,
        }
      : req;
    if (tracing.on) return this.traced(r);
    return 'pool' in r.to ? this.toPool(r, r.to) : this.toAgents(r, r.to);
  }

  /**
   * A send while spans are exported: one `deliver` span per attempt, a child of the task's
   * `submit` span (so a retry's is its sibling), whose traceparent the delivered entry carries.
   */
  private async traced(r: Send): Promise<SendOutcome> {
    const span = startSpan('deliver', {
      parent: r.task.traceparent,
      traceId: r.task.traceId,
      kind: 'producer',
      attributes: {
        'reach.task_id': r.task.taskId,
        'reach.capability': r.task.capability,
        ...(r.reason ? { 'reach.send_reason': r.reason } : {}),
      },
    });
    try {
      const tp = span.traceparent;
      const outcome = await ('pool' in r.to
        ? this.toPool(r, r.to, tp)
        : this.toAgents(r, r.to, tp));
      if (outcome.kind === 'sent') {
        span.setAttribute('reach.attempt', outcome.attempt);
        span.setAttribute('reach.agent_id', outcome.agentId || 'pool');
      } else span.setAttribute('reach.outcome', outcome.kind);
      span.end();
      return outcome;
    } catch (err: unknown) {
      endSpan(span, err);
      throw err;
    }
  }

  private async toAgents(
    req: Send,
    to: Extract<SendTarget, { agents: unknown }>,
    traceparent?: string,
  ): Promise<SendOutcome> {
    const { snapshot, delivery } = this.o;
    const tried = to.agents.slice(0, to.tries ?? to.agents.length);
    const refusals: string[] = [];
    let full = 0;
    // A reserved first candidate is given back if the send ends before its delivery.
    let outstanding = to.firstReserved ? tried[0]?.agent.agent_id : undefined;
    try {
      for (const [i, candidate] of tried.entries()) {
        const agent = candidate.agent;
        const runnerUp = to.agents[i + 1];
        // Recorded with the claim: the delivery's pending entry and this are the `sent` stage.
        const routing: RoutingRecord = {
          score: Number(candidate.score.toFixed(4)),
          load: Number(candidate.load.toFixed(4)),
          candidates: to.count,
          snapshot_age_ms: snapshot.info().age_ms,
          ...(runnerUp
            ? {
                runner_up: runnerUp.agent.agent_id,
                runner_up_score: Number(runnerUp.score.toFixed(4)),
              }
            : {}),
          ...this.why(req, refusals),
          // A task that went to an agent short of HEALTHY says so in its timeline.
          ...(agent.status !== 'HEALTHY' ? { agent_status: agent.status } : {}),
        };
        const taken = await req.claim.take(agent, packRoute(routing));
        if (!taken.ok) return { kind: 'not_ours' };
        if (outstanding === agent.agent_id && i === 0) outstanding = undefined;
        else snapshot.reserve(agent.agent_id);
        const message = attemptMessage(req.task, taken.attempt, taken.deadlineMs);
        if (traceparent) message.traceparent = traceparent;
        let result;
        try {
          result = await delivery.deliver(agent, message);
        } catch (err: unknown) {
          snapshot.settle(agent.agent_id);
          throw err;
        }
        const refusedFull = !result.ok && result.refusal === 'full';
        snapshot.settle(
          agent.agent_id,
          result.ok ? result.inflight : refusedFull ? agent.max_concurrency : undefined,
        );
        if (!result.ok) {
          refusals.push(`${agent.agent_id}:${result.refusal}`);
          if (refusedFull) full++;
          continue;
        }
        return this.sent(req, {
          attempt: taken.attempt,
          createdAt: taken.createdAt,
          agentId: agent.agent_id,
          stream: this.o.keys.inbox(agent.agent_id),
          messageId: result.messageId,
          sentAt: result.sentAt,
          deadlineMs: taken.deadlineMs,
        });
      }
    } finally {
      if (outstanding) snapshot.settle(outstanding);
    }
    await req.claim.release();
    return {
      kind: 'refused',
      refusals,
      allFull: tried.length > 0 && full === tried.length,
      someFull: full > 0,
    };
  }

  private async toPool(
    req: Send,
    to: Extract<SendTarget, { pool: unknown }>,
    traceparent?: string,
  ): Promise<SendOutcome> {
    const { redis, keys } = this.o;
    // A tenant's pooled tasks wait in its own pool of the capability, which its pull agents read.
    const pool = poolOf(req.task);
    const taken = await req.claim.take(
      undefined,
      packRoute({ pool, reason: to.pool, ...this.why(req, []) }),
    );
    if (!taken.ok) return { kind: 'not_ours' };
    // Its priority's band of the pool: pull agents read the higher bands first (pool-bands.ts).
    const stream = keys.poolBand(pool, poolBandOf(req.task.priority));
    const message = attemptMessage(req.task, taken.attempt, taken.deadlineMs);
    if (traceparent) message.traceparent = traceparent;
    const fields = encodeTask(message);
    // The pool's stream and the set of pools lie in different slots (a pipeline per master).
    const added = await slotPipeline(redis)
      .add(stream, (p) => p.time().xadd(stream, '*', ...fields))
      .add(keys.pools(), (p) => p.sadd(keys.pools(), pool))
      .exec();
    const time = added[0]?.[1] as [string, string] | undefined;
    const [xerr, messageId] = added[1] ?? [new Error('xadd: empty reply')];
    if (xerr) throw xerr;
    const sentAt = time ? Math.floor(timeReplyMs(time)) : Date.now();
    this.o.delivery.clock.observe(sentAt);
    const expiresAt = taken.deadlineMs > 0 ? taken.deadlineMs : sentAt + to.waitMs;
    return this.sent(req, {
      attempt: taken.attempt,
      createdAt: taken.createdAt,
      agentId: '',
      stream,
      messageId: messageId as string,
      sentAt,
      deadlineMs: taken.deadlineMs,
      pooled: { dueAt: expiresAt },
    });
  }

  private why(req: SendRequest, refusals: readonly string[]): RoutingRecord {
    const notes: string[] = [];
    if (req.reason) notes.push(req.reason);
    if (refusals.length > 0) notes.push(`re-routed after ${refusals.join(', ')}`);
    return {
      ...(notes.length > 0 ? { reason: notes.join('; ') } : {}),
      ...(req.previousAgent ? { previous_agent: req.previousAgent } : {}),
      ...(req.fallback ? { capability: req.fallback, fallback: true } : {}),
    };
  }

  /**
   * The XADD returned an id: the attempt is sent. What is left rides the same connection in the
   * background — the watchdog entry's removal (a process that dies first leaves
   * it to registry-sync, which finds the delivery), a pooled task's record, the session; the
   * event is written at once.
   */
  private sent(
    req: Send,
    s: {
      attempt: number;
      createdAt: number;
      agentId: string;
      stream: string;
      messageId: string;
      sentAt: number;
      /** The attempt's deadline (0 for none). */
      deadlineMs: number;
      pooled?: { dueAt: number };
    },
  ): SendOutcome {
    const { redis, keys, delivery, events } = this.o;
    const task = req.task;
    const writes: Promise<unknown>[] = [];
    if (s.pooled) {
      writes.push(
        delivery.recordPooled({
          taskId: task.taskId,
          attempt: s.attempt,
          stream: s.stream,
          messageId: s.messageId,
          sentAt: s.sentAt,
          dueAt: s.pooled.dueAt,
          ...(req.watched ? { watched: true } : {}),
        }),
      );
    } else if (req.watched) {
      writes.push(delivery.watch.unwatch(task.taskId));
    }
    if (task.sessionId && s.agentId) {
      writes.push(redis.set(keys.session(task.sessionId), s.agentId, 'EX', this.o.sessionTtlS));
    }
    // A first attempt may be mirrored to observing agents, beside the send: nothing waits for it
    // (the mirror logs its own failures).
    if (s.attempt === 1 && this.o.shadow) void this.o.shadow.mirror(task, s.deadlineMs);
    const recorded = Promise.all(writes).then(
      () => undefined,
      (err: unknown) =>
        this.log.warn(
          { err, task_id: task.taskId },
          'send not followed up; the watchdog will check the task',
        ),
    );
    events.write({
      stage: 'sent',
      capability: task.capability,
      agent_id: s.agentId || 'pool',
      task_id: task.taskId,
      attempt: s.attempt,
      at: s.sentAt,
      // From acceptance to the first send; a later attempt's wait is the retry's backoff.
      ...(s.attempt === 1 && s.createdAt > 0
        ? { latency_ms: Math.max(0, s.sentAt - s.createdAt) }
        : {}),
      ...(task.traceId ? { trace_id: task.traceId } : {}),
      // A child's sends name its parent, so the link can be read back from InfluxDB too.
      ...(task.parentTaskId ? { parent_task_id: task.parentTaskId } : {}),
      ...(task.priority > 0 ? { priority: task.priority } : {}),
      ...(req.ownCapability ? { fallback_for: req.ownCapability } : {}),
    });
    return {
      kind: 'sent',
      attempt: s.attempt,
      agentId: s.agentId,
      stream: s.stream,
      messageId: s.messageId,
      sentAt: s.sentAt,
      recorded,
    };
  }
}
