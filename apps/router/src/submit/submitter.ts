import { randomUUID } from 'node:crypto';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { EventSink } from '@agent-reach/events';
import {
  DEFAULT_TENANT,
  type ReachKeys,
  type SubmitBody,
  type SubmitReply,
} from '@agent-reach/protocol';
import { httpError, nextNonce, parseTraceparent } from '@agent-reach/service-kit';
import { endSpan, startSpan, tracing } from '@agent-reach/service-kit/tracing';
import {
  CapacityWaiter,
  claimSubmission,
  holdTask,
  onlyExcludedFor,
  routeWithFallback,
  traceOf,
  type DeadLetterer,
  type Delivery,
  type PoolReason,
  type Routed,
  type RoutingContext,
  type SendOutcome,
  type SnapshotHolder,
  type TaskSender,
  type TaskSpec,
} from '@agent-reach/dispatch';
import type { TaskReader } from '../tasks/task-reader.ts';
import { childTimeout } from './child-deadline.ts';
import { specFromSubmit } from './task-spec.ts';
import { delayedUntil } from './delay.ts';

/** Settings of submissions. */
export interface SubmitSettings {
  /** Largest payload, serialised, in bytes. */
  maxPayloadBytes: number;
  /** Timeout when the caller gives none, seconds (0 = none). */
  defaultTimeoutS: number;
  /** Candidates tried before answering NO_AGENT. */
  maxCandidates: number;
  /** Hops past which a task is dead-lettered as a loop. */
  maxHops: number;
  /** How long a claimed task may stay undelivered before registry-sync re-drives it. */
  dispatchGraceMs: number;
  /** How long a dead task is kept. */
  dlqRetentionS: number;
  /** Per capability: queue in the pool or answer 429 when every agent is at capacity. */
  backpressure: Record<string, 'queue' | 'reject'>;
  /** How long a submission that finds every agent at capacity waits for a slot before 429. */
  admissionWaitMs: number;
  /** How long a pooled task without timeout_s waits for an agent before it is dead (no_agent). */
  poolWaitMs: number;
  /** A child's deadline is its parent's less this, ms (child-deadline.ts). */
  childMarginMs: number;
}

/** What a submitter works with. */
export interface SubmitterOptions {
  redis: RedisClient;
  keys: ReachKeys;
  snapshot: SnapshotHolder;
  /** The concurrency watermark in force (published by registry-sync). */
  watermark: () => number;
  delivery: Delivery;
  sender: TaskSender;
  deadLetters: DeadLetterer;
  tasks: TaskReader;
  settings: SubmitSettings;
  logger: Logger;
  /** Task events (a delayed task's `delayed` stage). */
  events: EventSink;
}

/** Outcome of a submission: a new task (202) or the existing one for a repeated task_id (200). */
export interface SubmitOutcome {
  created: boolean;
  reply: SubmitReply;
}

/**
 * The router's side of a submission: admission (a short wait for a slot when every agent is
 * busy), the loop check, the routing decision from the snapshot held in memory, and the choice
 * between agents, the capability's pool, AT_CAPACITY and NO_AGENT. The send itself is the task
 * sender's, the one every send of a task goes through.
 */
export class Submitter {
  private readonly log: Logger;
  private readonly routing: RoutingContext;
  // Freed slots go to the retries registry-sync holds first (`retriesWaiting`), then to submissions.
  private readonly capacity: CapacityWaiter;

  constructor(private readonly o: SubmitterOptions) {
    this.log = o.logger.child({ module: 'submit' });
    this.routing = { redis: o.redis, keys: o.keys, snapshot: o.snapshot, watermark: o.watermark };
    this.capacity = new CapacityWaiter({
      redis: o.redis,
      keys: o.keys,
      snapshot: o.snapshot,
      hooks: {
        reserved: async (capability) =>
          Number(await o.redis.get(o.keys.retriesWaiting(capability))) || 0,
      },
    });
  }

  /** Answers every waiting submission (429) and stops holding new ones. */
  close(): void {
    this.capacity.close();
  }

  /**
   * Submits a task of `tenant`; throws NO_AGENT, AT_CAPACITY, PAYLOAD_TOO_LARGE or a store error.
   * The payload nests at most MAX_JSON_DEPTH levels: the JSON body parser and the batch route
   * see to it (JSON.stringify below throws past a few thousand).
   * A task that finds every agent at capacity waits up to `admissionWaitMs` for a slot before
   * AT_CAPACITY. The body's task_id, callback_topic and parent_task_id are the scoped ids
   * (`scopedId(tenant, id)`) the task is kept under; the reply names the scoped task_id.
   * A child (`parent_task_id`) ends by its parent's deadline less `childMarginMs`, and is refused
   * with PARENT_DEADLINE_NEAR when the parent has no more than that left.
   * While spans are exported, the submission is a `submit` span (a child of the caller's
   * `traceparent` when given) whose every attempt's `deliver` span is a child.
   */
  submit(
    body: SubmitBody,
    tenant: string = DEFAULT_TENANT,
    traceparent?: string,
  ): Promise<SubmitOutcome> {
    if (!tracing.on) return this.submitTask(body, tenant, undefined);
    // The caller's span is the parent when its trace is the task's (no other trace_id given).
    const callerTrace = parseTraceparent(traceparent)?.traceId;
    const span = startSpan('submit', {
      parent: callerTrace !== undefined && callerTrace === body.trace_id ? traceparent : undefined,
      traceId: body.trace_id,
      kind: 'server',
      attributes: { 'reach.capability': body.capability },
    });
    return this.submitTask(body, tenant, span.traceparent).then(
      (outcome) => {
        span.setAttribute('reach.task_id', outcome.reply.task_id);
        span.setAttribute('reach.status', outcome.reply.status);
        span.end();
        return outcome;
      },
      (err: unknown) => {
        endSpan(span, err);
        throw err;
      },
    );
  }

  private async submitTask(
    body: SubmitBody,
    tenant: string,
    traceparent: string | undefined,
  ): Promise<SubmitOutcome> {
    const { settings } = this.o;
    const payload = JSON.stringify(body.payload ?? null);
    if (Buffer.byteLength(payload) > settings.maxPayloadBytes) {
      throw httpError(
        'PAYLOAD_TOO_LARGE',
        `payload is over the limit of ${settings.maxPayloadBytes} bytes once serialised`,
      );
    }
    // Checked before anything is written: a delay that is refused leaves nothing behind.
    const runAt = delayedUntil(body, Date.now());
    const taskId = body.task_id ?? randomUUID();
    const lineage = body.parent_task_id
      ? await traceOf(this.o.redis, this.o.keys, body.parent_task_id, taskId)
      : undefined;
    const spec = specFromSubmit(taskId, body, payload, lineage, tenant);
    // Stored with the task: a retry's send, in registry-sync, is a child of this submission too.
    if (traceparent) spec.traceparent = traceparent;
    // A child's time counts from when it starts: now, or a delayed one's runAt.
    const timeout = childTimeout(
      (body.timeout_s ?? settings.defaultTimeoutS) * 1000,
      lineage?.parentDeadlineMs ?? 0,
      settings.childMarginMs,
      runAt ?? this.o.delivery.clock.now(),
    );
    if (!timeout.ok) return this.refuseChild(spec, body, timeout.leftMs);
    if (runAt !== undefined) return this.hold(spec, runAt, timeout.timeoutMs);
    const until = Date.now() + settings.admissionWaitMs;
    // The capability whose agents were all busy: the task's own, or the fallback it routed to.
    const busy = { capability: spec.capability };
    for (;;) {
      try {
        return await this.submitOnce(spec, body, timeout.timeoutMs, busy);
      } catch (err: unknown) {
        if ((err as { code?: unknown }).code !== 'AT_CAPACITY') throw err;
        // Held submissions are let go highest priority first, FIFO within a priority.
        const left = until - Date.now();
        if (!(await this.capacity.wait(busy.capability, left, spec.priority))) throw err;
      }
    }
  }

  /**
   * A child whose parent has too little time left: a repeated task_id is answered with its task;
   * otherwise the child, never created, leaves its parent's children (traceOf added it).
   */
  private async refuseChild(
    spec: TaskSpec,
    body: SubmitBody,
    leftMs: number,
  ): Promise<SubmitOutcome> {
    const existing = body.task_id ? await this.o.tasks.submitView(spec.taskId) : undefined;
    if (existing) return { created: false, reply: existing };
    await this.o.redis.srem(this.o.keys.children(spec.parentTaskId), spec.taskId);
    throw httpError(
      'PARENT_DEADLINE_NEAR',
      `parent task has ${leftMs} ms left when this child would start, no more than the ${this.o.settings.childMarginMs} ms kept for it to hear back; a child would not finish in time`,
    );
  }

  private async submitOnce(
    spec: TaskSpec,
    body: SubmitBody,
    timeoutMs: number,
    busy: { capability: string },
  ): Promise<SubmitOutcome> {
    const { settings, snapshot } = this.o;
    const batch = body.mode === 'batch';
    // The candidates tried, plus the runner-up the sent stage records; a fallback capability
    // only while the task's own has no live agent.
    const route = () =>
      routeWithFallback(this.routing, spec, {
        reserve: !batch,
        picks: settings.maxCandidates + 1,
      });
    let routed = await route();
    if (routed.decision.count() === 0) {
      // A registration may be newer than the snapshot held: look once more before refusing.
      await snapshot.reload();
      routed = await route();
    }
    if (
      routed.push.length === 0 &&
      !batch &&
      (await this.capacity.room(routed.capability, routed.decision)) > 0
    ) {
      // Counted full on stale counts: Redis says an agent has room (beyond what waiting retries get).
      routed = await route();
    }
    const reserved = batch ? undefined : routed.push[0]?.agent.agent_id;
    if (
      spec.parentTaskId &&
      (spec.hops > settings.maxHops || onlyExcludedFor(routed.decision, ['on_trace']))
    ) {
      if (reserved) snapshot.settle(reserved);
      return this.rejectAsLoop(spec);
    }
    // Whether every live agent is only full is worked out when no agent took the task (it reads
    // every agent's exclusion, which a delivered task never needs).
    let allFull = (): boolean => onlyExcludedFor(routed.decision, ['full', 'watermark']);
    const fallback = routed.fallback ? routed.capability : undefined;
    if (reserved) {
      const outcome = await this.send(spec, routed, timeoutMs, fallback);
      if (outcome.kind !== 'refused') return this.answer(spec, outcome);
      this.log.debug(
        { task_id: spec.taskId, capability: spec.capability, refusals: outcome.refusals },
        'no candidate took the task',
      );
      allFull = () => outcome.allFull;
    } else if (batch) {
      return this.toPool(spec, timeoutMs, 'batch', fallback);
    } else if (routed.pull.length > 0) {
      return this.toPool(spec, timeoutMs, 'pull_agents', fallback);
    }
    if (body.on_no_agent === 'queue') return this.toPool(spec, timeoutMs, 'no_agent', fallback);
    const existing = body.task_id ? await this.o.tasks.submitView(spec.taskId) : undefined;
    if (existing) return { created: false, reply: existing };
    if (allFull()) {
      if (settings.backpressure[routed.capability] === 'queue') {
        return this.toPool(spec, timeoutMs, 'at_capacity', fallback);
      }
      busy.capability = routed.capability;
      throw httpError(
        'AT_CAPACITY',
        `every live agent of ${routed.capability} is at max_concurrency; retry shortly or queue with on_no_agent`,
      );
    }
    const tags = spec.tags.length > 0 ? ` with tags ${spec.tags.join(',')}` : '';
    throw httpError('NO_AGENT', `no live agent serves capability ${spec.capability}${tags}`);
  }

  private send(
    spec: TaskSpec,
    routed: Routed,
    timeoutMs: number,
    fallback: string | undefined,
  ): Promise<SendOutcome> {
    const watchdogAt = Date.now() + this.o.settings.dispatchGraceMs;
    return this.o.sender.send({
      task: spec,
      claim: this.claim(spec, timeoutMs, watchdogAt),
      to: {
        agents: routed.push,
        count: routed.pushCount,
        tries: this.o.settings.maxCandidates,
        firstReserved: true,
      },
      // The first claim adds the watchdog entry (`#<task_id>`); the send drops it once sent.
      watched: true,
      ...(fallback ? { fallback } : {}),
    });
  }

  private async toPool(spec: TaskSpec, timeoutMs: number, reason: PoolReason, fallback?: string) {
    const watchdogAt = Date.now() + this.o.settings.dispatchGraceMs;
    const outcome = await this.o.sender.send({
      task: spec,
      claim: this.claim(spec, timeoutMs, watchdogAt),
      to: { pool: reason, waitMs: this.o.settings.poolWaitMs },
      watched: true,
      ...(fallback ? { fallback } : {}),
    });
    return this.answer(spec, outcome);
  }

  /** `timeoutMs`: the task's own, kept inside its parent's deadline (childTimeout). */
  private claim(spec: TaskSpec, timeoutMs: number, watchdogAt: number) {
    return claimSubmission(this.o.redis, this.o.keys, this.o.delivery, {
      task: spec,
      nonce: nextNonce(),
      timeoutMs,
      watchdogAt,
    });
  }

  private async answer(spec: TaskSpec, outcome: SendOutcome): Promise<SubmitOutcome> {
    if (outcome.kind === 'sent') {
      return {
        created: true,
        reply: {
          task_id: spec.taskId,
          status: 'sent',
          agent_id: outcome.agentId,
          stream: outcome.stream,
          message_id: outcome.messageId,
        },
      };
    }
    // The task_id belongs to an earlier submission: answer with that task.
    const existing = await this.o.tasks.submitView(spec.taskId);
    if (existing) return { created: false, reply: existing };
    throw httpError('STORE_UNAVAILABLE', `task ${spec.taskId} is being written; retry`);
  }

  /**
   * A submission with `delay_ms` / `run_at`: held as `delayed` until `runAt` (send/hold.ts), then
   * sent by registry-sync through the task sender. Its timeout (`timeoutMs`, a child's kept inside
   * its parent's deadline) counts from `runAt`. A repeated task_id is answered with the existing
   * task.
   */
  private async hold(spec: TaskSpec, runAt: number, timeoutMs: number): Promise<SubmitOutcome> {
    const { redis, keys, delivery, events } = this.o;
    const outcome = await holdTask(redis, keys, delivery.watch, events, {
      task: spec,
      nonce: nextNonce(),
      runAt,
      timeoutMs,
      now: Math.floor(delivery.clock.now()),
    });
    if (outcome === 'exists') {
      const existing = await this.o.tasks.submitView(spec.taskId);
      if (existing) return { created: false, reply: existing };
      throw httpError('STORE_UNAVAILABLE', `task ${spec.taskId} is being written; retry`);
    }
    return {
      created: true,
      reply: { task_id: spec.taskId, status: 'delayed', agent_id: '', stream: '', message_id: '' },
    };
  }

  /** Records a submission that is dead on arrival as a loop, visible in the DLQ. */
  private async rejectAsLoop(spec: TaskSpec): Promise<SubmitOutcome> {
    if (!(await this.o.deadLetters.deadOnArrival(spec, 'loop'))) {
      const existing = await this.o.tasks.submitView(spec.taskId);
      if (existing) return { created: false, reply: existing };
    }
    return {
      created: true,
      reply: { task_id: spec.taskId, status: 'dead', agent_id: '', stream: '', message_id: '' },
    };
  }
}
