import type { RedisClient } from '@agent-reach/service-kit/redis';
import { endSpan, startSpan, tracing, type TaskSpan } from '@agent-reach/service-kit/tracing';
import type { Logger } from 'pino';
import {
  Coalescer,
  decodeAck,
  entryShapeProblem,
  FailureCode,
  jsonTextDepth,
  MAX_JSON_DEPTH,
  isOutputAck,
  isTaskAck,
  PROBE_CAPABILITY,
  streamIdMs,
  WORKER_GROUP,
  type AckMessage,
  type CallbackMessage,
  type ReachKeys,
  type ScriptRefusal,
  type TaskAckMessage,
  type TimelineEntry,
} from '@agent-reach/protocol';
import { poolStreamOf, type CallbackPublisher } from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import type { AckSignatures } from './ack-signatures.ts';
import type { OutcomeRecorder, TaskOutcomes } from '../tasks/outcomes.ts';
import { parkEntry } from './parking.ts';
import type { OutputStep } from './output-step.ts';
import { ackAgentScript, type AckAgentItem, type AckAgentReply } from '../commands/ack-agent.ts';
import { ackTaskScript } from '../commands/ack-task.ts';
import { releaseScript } from '../commands/release.ts';
import { renewScript } from '../commands/renew.ts';
import { requeueScript } from '../commands/requeue.ts';
import { slowScript } from '../commands/slow.ts';
import { ownValue } from '../capability-settings.ts';

/** Settings the applier needs. */
export interface AckSettings {
  taskRetentionS: number;
  slowMs: number;
  slowMsByCapability: Record<string, number>;
}

/** Whether a completion's result nests past MAX_JSON_DEPTH (text shorter than 2 × that cannot). */
function resultTooDeep(ack: AckMessage): boolean {
  return (
    ack.stage === 'completed' &&
    ack.result !== undefined &&
    ack.result.length > 2 * MAX_JSON_DEPTH &&
    jsonTextDepth(ack.result, MAX_JSON_DEPTH) > MAX_JSON_DEPTH
  );
}

/** Weight of the newest sample in the execution-time EWMA routers read. */
const EWMA_ALPHA = 0.2;

/**
 * Why an ack changed nothing (counted as `acks_refused:<reason>`): a script's refusal, an entry
 * that does not decode, or (signed acks required) one without a valid signature (`bad_signature`).
 * `not_eligible`: a pull agent reported a pooled task it may not
 * take (its region or tags do not meet the task's). `duplicate`: the stage was applied already or
 * the task is final (the scripts' `already_final`); the counter keeps the name docs/PROTOCOL.md
 * gives it.
 */
export type AckRefusal =
  | 'malformed'
  | 'bad_signature'
  | 'duplicate'
  | Extract<
      ScriptRefusal,
      'unknown_agent' | 'stale_epoch' | 'unknown_task' | 'not_assigned' | 'not_eligible'
    >;

/** The ack's refusal for a script's: `already_final` is counted as `duplicate`. */
function ackRefusalOf(refusal: Exclude<AckRefusal, 'duplicate'> | 'already_final'): AckRefusal {
  return refusal === 'already_final' ? 'duplicate' : refusal;
}

/** Outcome of applying one ack entry. */
export type AckOutcome = { applied: true; final: boolean } | { applied: false; reason: AckRefusal };

/** The agent step of an ack that it applied. */
type AgentStep = Extract<AckAgentReply, { ok: true }>;

/**
 * Turns one entry of the acks stream into task state, a callback-topic entry and an event.
 * Every step is idempotent, so an entry processed twice (a crash before XACK) changes nothing
 * more and publishes at most one completion per task.
 */
export class AckApplier {
  private readonly log: Logger;
  /** The agent steps of one tick's acks, one script call per agent. */
  private readonly agentSteps: Coalescer<AckAgentItem, AckAgentReply>;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReachKeys,
    private readonly events: EventSink,
    private readonly callbacks: CallbackPublisher,
    private readonly outcomes: TaskOutcomes,
    private readonly settings: AckSettings,
    logger: Logger,
    /** Given when acks must be signed (REACH_AGENT_ACL=on). */
    private readonly signatures?: AckSignatures,
    /** Notes completions and probes in the agents' health windows (failures: TaskOutcomes). */
    private readonly health?: OutcomeRecorder,
    /** Applies `progress` and `chunk` acks; without it they are refused as malformed. */
    private readonly output?: OutputStep,
  ) {
    this.log = logger.child({ module: 'acks' });
    this.agentSteps = new Coalescer((agentId, acks) =>
      ackAgentScript.run(this.redis, {
        keys: {
          agent: this.keys.agent(agentId),
          pending: this.keys.pending(agentId),
          inbox: this.keys.inbox(agentId),
        },
        args: {},
        items: acks,
      }),
    );
  }

  /**
   * Applies the ack in stream entry `entryId` of `stream`. A malformed entry (its shape, then its
   * fields) is refused, counted and parked (see parkEntry), never thrown.
   */
  async apply(entryId: string, fields: string[], stream = this.keys.acks()): Promise<AckOutcome> {
    const problem = entryShapeProblem(fields);
    const decoded =
      problem === undefined ? decodeAck(fields) : { ok: false as const, error: problem };
    if (!decoded.ok) {
      this.log.warn({ entry_id: entryId, problem: decoded.error }, 'malformed ack refused');
      const park = { source: 'acks' as const, stream, entryId, fields, reason: decoded.error };
      await parkEntry(this.redis, this.keys, park, this.log);
      return this.refuse('malformed');
    }
    const ack = decoded.value;
    // With agents confined to Redis users of their own, only a signed ack counts (docs/SECURITY.md).
    if (this.signatures && !(await this.signatures.verify(ack, fields))) {
      this.log.warn(
        { entry_id: entryId, task_id: ack.task_id, agent_id: ack.agent_id, epoch: ack.epoch },
        'ack without a valid signature refused',
      );
      return this.refuse('bad_signature');
    }
    if (isOutputAck(ack)) {
      if (!this.output) return this.refuse('malformed');
      const done = await this.output.apply(ack, entryId, streamIdMs(entryId));
      return done.applied
        ? { applied: true, final: false }
        : this.refuse(ackRefusalOf(done.reason));
    }
    if (!isTaskAck(ack)) return this.renew(ack, streamIdMs(entryId));
    if (resultTooDeep(ack)) {
      // Every reply showing such a result would fail (JSON.stringify throws past a few thousand
      // levels): the attempt fails instead, for good, and the caller learns why.
      this.log.warn({ task_id: ack.task_id, agent_id: ack.agent_id }, 'result too deep; failed');
      Object.assign(ack, {
        stage: 'failed',
        error: `JSON_TOO_DEEP: the result nests deeper than ${MAX_JSON_DEPTH} levels`,
        error_code: FailureCode.resultTooDeep,
        retryable: false,
        result: undefined,
      });
    }
    const at = streamIdMs(entryId);
    // A completion that names its capability has its speed recorded in the same step (not a
    // probe's: the step knows a probe by its pending entry).
    const speedCapability =
      ack.stage === 'completed' && ack.duration_ms !== undefined ? (ack.capability ?? '') : '';
    const step = await this.agentSteps.call(ack.agent_id, {
      stage: ack.stage,
      taskId: ack.task_id,
      epoch: ack.epoch,
      attempt: ack.attempt,
      ackAt: at,
      pool: ack.pool ?? '',
      poolEntry: ack.message_id ?? '',
      capability: speedCapability,
      durationMs: ack.duration_ms ?? '',
      slowMs: this.slowMsFor(speedCapability),
      ewmaWeight: EWMA_ALPHA,
      folded: ack.received_ago_ms !== undefined ? 1 : 0,
    });
    if (!step.ok) {
      const reason = step.refusal;
      this.log.warn(
        { task_id: ack.task_id, agent_id: ack.agent_id, epoch: ack.epoch, reason },
        'ack refused',
      );
      return this.refuse(reason);
    }
    const { sentAt } = step;
    // A probe is told apart by its pending entry alone (deliver-3.lua marks it), never by its
    // task_id, which callers choose.
    if (step.probe) {
      if (ack.stage !== 'received')
        this.health?.record(ack.agent_id, ack.stage === 'completed' ? 'probeOk' : 'probeFailed');
      if (ack.stage === 'completed' && sentAt > 0) {
        this.events.write({
          stage: 'probe',
          capability: PROBE_CAPABILITY,
          agent_id: ack.agent_id,
          task_id: ack.task_id,
          attempt: 1,
          at,
          latency_ms: at - sentAt,
        });
      }
      return { applied: true, final: ack.stage !== 'received' };
    }
    // While spans are exported, a completion or failure that carries the worker's span is
    // applied in an `apply` span under it (a worker that sends none is applied untraced).
    const span =
      tracing.on && ack.traceparent !== undefined && ack.stage !== 'received'
        ? startSpan('apply', {
            parent: ack.traceparent,
            kind: 'consumer',
            attributes: {
              'reach.task_id': ack.task_id,
              'reach.attempt': ack.attempt,
              'reach.agent_id': ack.agent_id,
              'reach.stage': ack.stage,
            },
          })
        : undefined;
    try {
      const outcome = await this.applyToTask(ack, at, step, span);
      if (ack.pool) await this.settlePoolEntry(ack, outcome, step.poolEntry);
      if (span !== undefined && !outcome.applied) span.setAttribute('reach.refused', true);
      endSpan(span);
      return outcome;
    } catch (err: unknown) {
      endSpan(span, err);
      throw err;
    }
  }

  /**
   * A `renew` ack: the execution leases of the tasks it names, those the agent still holds, run
   * from the ack's time (the sweeper takes back a task whose lease lapses; inflight-sweeper.ts).
   */
  private async renew(ack: AckMessage, at: number): Promise<AckOutcome> {
    const reply = await renewScript.run(this.redis, {
      keys: {
        agent: this.keys.agent(ack.agent_id),
        pending: this.keys.pending(ack.agent_id),
        leases: this.keys.leases(ack.agent_id),
      },
      args: { epoch: ack.epoch, at },
      items: (ack.task_ids ?? [ack.task_id]).map((taskId) => ({ taskId })),
    });
    if (!reply.ok) {
      this.log.warn(
        { agent_id: ack.agent_id, epoch: ack.epoch, reason: reply.refusal },
        'lease renewal refused',
      );
      return this.refuse(reply.refusal);
    }
    return { applied: true, final: false };
  }

  /**
   * A pull agent's task lives in its capability's pool: a finished one leaves the pool, and a
   * receipt the task refused gives the slot back — another agent took it first, or this one may
   * not take it; then the entry goes back into the pool for an agent that may (a worker that
   * ignored the constraints may still acknowledge the old entry, which no longer matters).
   */
  private async settlePoolEntry(
    ack: AckMessage,
    outcome: AckOutcome,
    poolEntry: string,
  ): Promise<void> {
    const pool = ack.pool as string;
    if (
      !outcome.applied &&
      (outcome.reason === 'not_assigned' || outcome.reason === 'not_eligible')
    ) {
      await releaseScript.run(this.redis, {
        keys: {
          agent: this.keys.agent(ack.agent_id),
          pending: this.keys.pending(ack.agent_id),
          inbox: this.keys.inbox(ack.agent_id),
        },
        args: { taskId: ack.task_id, attempt: ack.attempt, group: WORKER_GROUP },
      });
      if (outcome.reason === 'not_eligible' && ack.message_id) {
        const stream = await poolStreamOf(this.redis, this.keys, pool, ack.task_id);
        await requeueScript.run(this.redis, {
          keys: { pool: stream },
          args: { group: WORKER_GROUP, entryId: ack.message_id },
        });
      }
      return;
    }
    // The entry is in the band of the task's priority (pool-bands.ts).
    if (poolEntry)
      await this.redis.xdel(
        await poolStreamOf(this.redis, this.keys, pool, ack.task_id),
        poolEntry,
      );
  }

  /**
   * `step.sentAt` and `step.entryId` are the delivery the agent's pending entry holds (written in
   * the same script as the XADD): the attempt's `sent` stage, which the task step copies into
   * the task with the attempt's first ack. `step.placement`, when the ack may take a pooled task,
   * lets the task step check the task's constraints against the agent.
   */
  private async applyToTask(
    ack: TaskAckMessage,
    at: number,
    step: AgentStep,
    span?: TaskSpan,
  ): Promise<AckOutcome> {
    const { placement } = step;
    // The ordinary stages are fields of the task; a failure is a timeline list entry as well.
    const failure: TimelineEntry | undefined =
      ack.stage === 'failed'
        ? {
            stage: 'failed',
            at,
            agent_id: ack.agent_id,
            attempt: ack.attempt,
            ...(ack.duration_ms !== undefined ? { duration_ms: ack.duration_ms } : {}),
            ...(ack.error !== undefined ? { error: ack.error } : {}),
            ...(ack.error_code !== undefined ? { error_code: ack.error_code } : {}),
          }
        : undefined;
    // A receipt the worker folded into this ack: received when it read the entry, by Redis' clock.
    const foldedAt = ack.received_ago_ms !== undefined ? at - ack.received_ago_ms : undefined;
    const res = await ackTaskScript.run(this.redis, {
      keys: { task: this.keys.task(ack.task_id), timeline: this.keys.timeline(ack.task_id) },
      args: {
        stage: ack.stage,
        attempt: ack.attempt,
        agentId: ack.agent_id,
        epoch: ack.epoch,
        at,
        result: ack.result ?? '',
        error: ack.error ?? '',
        durationMs: ack.duration_ms ?? '',
        retentionS: this.settings.taskRetentionS,
        failureEntry: failure ? JSON.stringify(failure) : '',
        foldedReceivedAt: foldedAt ?? '',
        sentAt: step.sentAt > 0 ? step.sentAt : '',
        messageId: step.sentAt > 0 ? step.entryId : '',
        placed: placement ? 1 : '',
        region: placement?.region ?? '',
        tags: placement ? JSON.stringify(placement.tags) : '',
        capabilities: placement ? JSON.stringify(placement.capabilities) : '',
      },
    });
    if (!res.ok) {
      if (res.refusal === 'already_final') {
        // Already applied: a re-processed entry still makes sure what follows it happened.
        if (ack.stage === 'completed') await this.publishStored(ack.task_id);
        if (ack.stage === 'failed') await this.decideFailure(ack);
        return this.refuse('duplicate');
      }
      const reason = res.refusal;
      this.log.warn(
        { task_id: ack.task_id, agent_id: ack.agent_id, attempt: ack.attempt, reason },
        'ack refused',
      );
      return this.refuse(reason);
    }
    const { capability, callbackTopic: topic, traceId, receivedAt, attempt, final } = res;
    const sentAt = res.sentAt > 0 ? res.sentAt : step.sentAt;
    if (res.foldedRecorded) {
      this.events.write({
        stage: 'received',
        capability,
        agent_id: ack.agent_id,
        task_id: ack.task_id,
        attempt,
        at: receivedAt,
        ...(sentAt > 0 ? { latency_ms: Math.max(0, receivedAt - sentAt) } : {}),
        ...(traceId ? { trace_id: traceId } : {}),
      });
    }
    this.events.write({
      stage: ack.stage,
      capability,
      agent_id: ack.agent_id,
      task_id: ack.task_id,
      attempt,
      at,
      ...(ack.stage === 'received' && sentAt > 0 ? { latency_ms: at - sentAt } : {}),
      ...(ack.stage !== 'received' && receivedAt > 0 ? { latency_ms: at - receivedAt } : {}),
      ...(ack.duration_ms !== undefined ? { duration_ms: ack.duration_ms } : {}),
      ...(traceId ? { trace_id: traceId } : {}),
      ...(ack.error_code !== undefined ? { error_code: ack.error_code } : {}),
    });
    if (ack.stage === 'failed') {
      await this.decideFailure({ ...ack, attempt });
      return { applied: true, final: false };
    }
    if (ack.stage === 'completed') {
      const slow = ack.duration_ms !== undefined && ack.duration_ms > this.slowMsFor(capability);
      this.health?.record(ack.agent_id, slow ? 'slow' : 'completed');
      // Both need only what the task step returned: one round trip for the two.
      await Promise.all([
        step.speedTracked ? undefined : this.trackSpeed(ack.agent_id, capability, ack.duration_ms),
        final && topic
          ? traceCallback(span, () =>
              this.callbacks.publish(topic, {
                task_id: ack.task_id,
                status: 'completed',
                capability,
                agent_id: ack.agent_id,
                attempt,
                completed_at: at,
                ...(ack.result !== undefined ? { result: ack.result } : {}),
                ...(ack.duration_ms !== undefined ? { duration_ms: ack.duration_ms } : {}),
              }),
            )
          : undefined,
      ]);
    }
    return { applied: true, final };
  }

  private async decideFailure(ack: AckMessage): Promise<void> {
    // A hand-written worker may omit attempt: the task's current one is meant.
    const attempt =
      ack.attempt || Number((await this.redis.hget(this.keys.task(ack.task_id), 'attempt')) ?? 0);
    if (attempt === 0) return;
    await this.outcomes.retry({
      taskId: ack.task_id,
      attempt,
      reason: 'failed',
      agentId: ack.agent_id,
      ...(ack.error !== undefined ? { error: ack.error } : {}),
      ...(ack.retryable === false ? { terminal: 'not_retryable' as const } : {}),
    });
  }

  /** For a completion without its capability: the speed step on its own, once the task step named the capability. */
  private async trackSpeed(
    agentId: string,
    capability: string,
    durationMs: number | undefined,
  ): Promise<void> {
    if (durationMs === undefined) return;
    await slowScript.run(this.redis, {
      keys: { agent: this.keys.agent(agentId) },
      args: {
        durationMs,
        slowMs: this.slowMsFor(capability),
        capability,
        ewmaWeight: EWMA_ALPHA,
      },
    });
  }

  private slowMsFor(capability: string): number {
    return ownValue(this.settings.slowMsByCapability, capability) ?? this.settings.slowMs;
  }

  private async publishStored(taskId: string): Promise<void> {
    const [status, topic, capability, attempt, completedAt, agentId, result, duration] =
      await this.redis.hmget(
        this.keys.task(taskId),
        'status',
        'callback_topic',
        'capability',
        'attempt',
        'completed_at',
        'agent_id',
        'result',
        'duration_ms',
      );
    if (!topic || status !== 'completed') return;
    const msg: CallbackMessage = {
      task_id: taskId,
      status: 'completed',
      capability: capability ?? '',
      agent_id: agentId ?? '',
      attempt: Number(attempt),
      completed_at: Number(completedAt),
      ...(result !== null ? { result } : {}),
      ...(duration !== null ? { duration_ms: Number(duration) } : {}),
    };
    await this.callbacks.publish(topic, msg);
  }

  private async refuse(reason: AckRefusal): Promise<AckOutcome> {
    await this.redis.hincrby(this.keys.stats(), `acks_refused:${reason}`, 1);
    return { applied: false, reason };
  }
}

/** The callback entry's publication as a `callback` span under the `apply` span, when there is one. */
function traceCallback<T>(apply: TaskSpan | undefined, publish: () => Promise<T>): Promise<T> {
  if (apply === undefined) return publish();
  const span = startSpan('callback', { parent: apply.traceparent, kind: 'producer' });
  return publish().then(
    (value) => {
      span.end();
      return value;
    },
    (err: unknown) => {
      endSpan(span, err);
      throw err;
    },
  );
}
