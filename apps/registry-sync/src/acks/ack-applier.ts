import type { RedisClient } from '@agent-reach/service-kit/redis';
import { endSpan, startSpan, tracing } from '@agent-reach/service-kit/tracing';
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
  type AckMessage,
  type ReachKeys,
  type TaskAckMessage,
} from '@agent-reach/protocol';
import type { CallbackPublisher } from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import type { AckSignatures } from './ack-signatures.ts';
import type { OutcomeRecorder, TaskOutcomes } from '../tasks/outcomes.ts';
import { parkEntry } from './parking.ts';
import type { OutputStep } from './output-step.ts';
import { ackAgentScript, type AckAgentItem, type AckAgentReply } from '../commands/ack-agent.ts';
import { renewScript } from '../commands/renew.ts';
import { ackRefusalOf, type AckOutcome, type AckRefusal } from './ack-outcome.ts';
import { FailureDecision } from './failure-decision.ts';
import { PoolSettlement } from './pool-settlement.ts';
import { EWMA_ALPHA, SpeedTracker, type SpeedSettings } from './speed-tracker.ts';
import { TaskStep, type AppliedAgentStep, type TaskStepSettings } from './task-step.ts';
import { shadowRecordOf, type ShadowResults } from '../observation/shadow-results.ts';

export type { AckOutcome, AckRefusal } from './ack-outcome.ts';

/** Settings the applier needs. */
export type AckSettings = TaskStepSettings & SpeedSettings;

/** What the applier works with. */
export interface AckApplierOptions {
  /** The acks connection, where the ack scripts are loaded. */
  redis: RedisClient;
  keys: ReachKeys;
  events: EventSink;
  /** Publishes completions on callback topics. */
  callbacks: CallbackPublisher;
  /** Retries or dead-letters a failed task. */
  outcomes: TaskOutcomes;
  settings: AckSettings;
  logger: Logger;
  /** Given when acks must be signed (REACH_AGENT_ACL=on). */
  signatures?: AckSignatures | undefined;
  /** Notes completions and probes in the agents' health windows (failures: TaskOutcomes). */
  health?: OutcomeRecorder | undefined;
  /** Applies `progress` and `chunk` acks; without it they are refused as malformed. */
  output?: OutputStep | undefined;
  /** Told of each slot an applied completion or failure freed (the waiting rooms' drainer). */
  onSlotFreed?: ((agentId: string) => void) | undefined;
  /** Keeps shadow copies' outcomes; without it they are dropped (logged at debug). */
  shadows?: ShadowResults | undefined;
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

/**
 * Routes one entry of the acks stream: decoded (or parked), verified, then applied as output
 * (OutputStep), a lease renewal, or a task ack — the agent step, then a probe's note or the task
 * step (TaskStep). Every step is idempotent, so an entry processed twice (a crash before XACK)
 * changes nothing more and publishes at most one completion per task.
 */
export class AckApplier {
  private readonly log: Logger;
  /** The agent steps of one tick's acks, one script call per agent. */
  private readonly agentSteps: Coalescer<AckAgentItem, AckAgentReply>;
  private readonly speed: SpeedTracker;
  private readonly tasks: TaskStep;
  private readonly pools: PoolSettlement;

  constructor(private readonly o: AckApplierOptions) {
    const { redis, keys } = o;
    this.log = o.logger.child({ module: 'acks' });
    this.speed = new SpeedTracker({ redis, keys, settings: o.settings });
    this.tasks = new TaskStep({
      redis,
      keys,
      events: o.events,
      callbacks: o.callbacks,
      failures: new FailureDecision({ redis, keys, outcomes: o.outcomes }),
      speed: this.speed,
      health: o.health,
      settings: o.settings,
      logger: o.logger,
    });
    this.pools = new PoolSettlement({ redis, keys });
    this.agentSteps = new Coalescer((agentId, acks) =>
      ackAgentScript.run(redis, {
        keys: {
          agent: keys.agent(agentId),
          pending: keys.pending(agentId),
          inbox: keys.inbox(agentId),
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
  async apply(entryId: string, fields: string[], stream = this.o.keys.acks()): Promise<AckOutcome> {
    const problem = entryShapeProblem(fields);
    const decoded =
      problem === undefined ? decodeAck(fields) : { ok: false as const, error: problem };
    if (!decoded.ok) {
      this.log.warn({ entry_id: entryId, problem: decoded.error }, 'malformed ack refused');
      const park = { source: 'acks' as const, stream, entryId, fields, reason: decoded.error };
      await parkEntry(this.o.redis, this.o.keys, park, this.log);
      return this.refuse('malformed');
    }
    const ack = decoded.value;
    // With agents confined to Redis users of their own, only a signed ack counts (docs/SECURITY.md).
    if (this.o.signatures && !(await this.o.signatures.verify(ack, fields))) {
      this.log.warn(
        { entry_id: entryId, task_id: ack.task_id, agent_id: ack.agent_id, epoch: ack.epoch },
        'ack without a valid signature refused',
      );
      return this.refuse('bad_signature');
    }
    const at = streamIdMs(entryId);
    if (isOutputAck(ack)) {
      if (!this.o.output) return this.refuse('malformed');
      const done = await this.o.output.apply(ack, entryId, at);
      return done.applied
        ? { applied: true, final: false }
        : this.refuse(ackRefusalOf(done.reason));
    }
    if (!isTaskAck(ack)) return this.renew(ack, at);
    return this.applyTaskAck(ack, at);
  }

  /**
   * A task ack: the agent step (its slot, inbox entry and, for a completion that names its
   * capability, its speed), then a probe's note or the task step, then the task's pool entry.
   */
  private async applyTaskAck(ack: TaskAckMessage, at: number): Promise<AckOutcome> {
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
      slowMs: this.speed.slowMsFor(speedCapability),
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
    // A pooled task's slot counts as free once its pool entry is gone too (below).
    if (ack.stage !== 'received' && !ack.pool) this.o.onSlotFreed?.(ack.agent_id);
    // A probe is told apart by its pending entry alone (deliver-3.lua marks it), never by its
    // task_id, which callers choose.
    if (step.probe) return this.probed(ack, at, step);
    // A shadow copy's outcome is kept apart: never the task's state, a callback or a retry.
    if (step.shadow) return this.shadowed(ack, at);
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
      const applied = await this.tasks.apply(ack, at, step, span);
      const outcome = applied.applied ? applied : await this.refuse(applied.reason);
      if (ack.pool) {
        await this.pools.settle(ack, outcome, step.poolEntry);
        if (ack.stage !== 'received') this.o.onSlotFreed?.(ack.agent_id);
      }
      if (span !== undefined && !outcome.applied) span.setAttribute('reach.refused', true);
      endSpan(span);
      return outcome;
    } catch (err: unknown) {
      endSpan(span, err);
      throw err;
    }
  }

  /** A probe's ack: noted in the agent's health window, and its round trip as a `probe` point. */
  private probed(ack: TaskAckMessage, at: number, step: AppliedAgentStep): AckOutcome {
    const { sentAt } = step;
    if (ack.stage !== 'received')
      this.o.health?.record(
        ack.agent_id,
        ack.stage === 'completed' ? 'probeOk' : 'probeFailed',
        ack.health ? { ...ack.health, at } : undefined,
      );
    if (ack.stage === 'completed' && sentAt > 0) {
      this.o.events.write({
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

  /**
   * A shadow copy's ack: its completion or failure is kept with the observing agent for the
   * observation report (its slot was freed by the agent step). The capability is the task's, read
   * from its record: the agent's ack may not name it.
   */
  private async shadowed(ack: TaskAckMessage, at: number): Promise<AckOutcome> {
    if (ack.stage === 'received') return { applied: true, final: false };
    const shadows = this.o.shadows;
    if (shadows) {
      const capability =
        ack.capability ??
        (await this.o.redis.hget(this.o.keys.task(ack.task_id), 'capability')) ??
        '';
      await shadows.keep(ack.agent_id, shadowRecordOf(ack, capability, at));
    } else
      this.log.debug({ task_id: ack.task_id, agent_id: ack.agent_id }, 'shadow result dropped');
    return { applied: true, final: true };
  }

  /**
   * A `renew` ack: the execution leases of the tasks it names, those the agent still holds, run
   * from the ack's time (the sweeper takes back a task whose lease lapses; inflight-sweeper.ts).
   */
  private async renew(ack: AckMessage, at: number): Promise<AckOutcome> {
    const { redis, keys } = this.o;
    const reply = await renewScript.run(redis, {
      keys: {
        agent: keys.agent(ack.agent_id),
        pending: keys.pending(ack.agent_id),
        leases: keys.leases(ack.agent_id),
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

  /** Counts a refusal in the stats hash (`acks_refused:<reason>`, exported on /metrics). */
  private async refuse(reason: AckRefusal): Promise<AckOutcome> {
    await this.o.redis.hincrby(this.o.keys.stats(), `acks_refused:${reason}`, 1);
    return { applied: false, reason };
  }
}
