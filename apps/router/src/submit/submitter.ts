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
  queueTask,
  holdTask,
  onlyExcludedFor,
  poolOf,
  pullSlots,
  routeWithFallback,
  servesTenant,
  traceOf,
  type DeadLetterer,
  type Delivery,
  type PoolGauge,
  type PoolReason,
  type RoomDrainer,
  type Routed,
  type RoutedTo,
  type RoutingContext,
  type SendOutcome,
  type SnapshotHolder,
  type TaskSender,
  type TaskSpec,
  type WaitingRoom,
} from '@agent-reach/dispatch';
import type { TaskReader } from '../tasks/task-reader.ts';
import { childTimeout } from './child-deadline.ts';
import { specFromSubmit } from './task-spec.ts';
import { delayedUntil } from './delay.ts';
import type { WebhookTargets } from '../webhooks/webhook-targets.ts';

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
  /** Per capability: wait in the waiting room (the default) or answer 429 when every agent is at capacity. */
  backpressure: Record<string, 'queue' | 'reject'>;
  /** How long a submission that finds every agent at capacity waits for a slot before 429 (reject). */
  admissionWaitMs: number;
  /** A queued task's deadline without `timeout_s`, seconds: every capability that has had agents. */
  queueDeadlineS: number;
  /** The same per capability; a capability listed queues even before an agent of it was seen. */
  queueDeadlines: Record<string, number>;
  /** Most tasks of one tenant waiting in one room, when its record sets none. */
  queueMaxPerTenant: number;
  /** Most tasks waiting in one room. */
  queueMax: number;
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
  /** Task events (a delayed task's `delayed` stage, a queued one's `queued`). */
  events: EventSink;
  /** The waiting rooms, and this process's drainer of them. */
  room: WaitingRoom;
  drainer: RoomDrainer;
  /** How deep the pull pools are (shared with the drainer). */
  pools: PoolGauge;
  /** Tenant records: weights and bounds in the waiting room. */
  tenants: { get(tenant: string): Promise<TenantWeights> };
  /** Webhook targets (`callback_url`); without them, a callback_url is refused. */
  webhooks?: WebhookTargets;
}

/** What the waiting room reads of a tenant's record. */
export interface TenantWeights {
  weight: number;
  /** 0: the router's default. */
  max_queued: number;
  /** Slots of one capability the tenant holds at once; 0 for no bound. */
  max_inflight: number;
  max_fairness_weight: number;
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
    // A webhook task's items reach its URL (and its own topic) through the webhook topic; a task
    // without callback_url costs nothing here.
    if (body.callback_url !== undefined) body = await this.webhookBody(taskId, body, tenant);
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
    // While the room holds tasks of the capability, a new one takes its turn behind them; a
    // tenant with a max_inflight has every task sent from the room, which keeps its count.
    if (
      body.mode !== 'batch' &&
      ((this.o.drainer.busy(spec.capability) && this.queues(body, spec)) ||
        (await this.o.tenants.get(tenant)).max_inflight > 0)
    )
      return this.queue(spec, body, timeout.timeoutMs);
    const until = Date.now() + settings.admissionWaitMs;
    // The capability whose agents were all busy: the task's own, or the fallback it routed to.
    const busy = { capability: spec.capability };
    // Until the wait is over, a task that would queue waits for the deliveries in flight first.
    let hold = true;
    for (;;) {
      try {
        return await this.submitOnce(spec, body, timeout.timeoutMs, busy, hold);
      } catch (err: unknown) {
        const inFlight = err instanceof FullInFlight;
        if (!inFlight && (err as { code?: unknown }).code !== 'AT_CAPACITY') throw err;
        // Held submissions are let go highest priority first, FIFO within a priority.
        const left = until - Date.now();
        if (!(await this.capacity.wait(busy.capability, left, spec.priority))) {
          if (!inFlight) throw err;
          // The deliveries did not land in time: the room after all.
          hold = false;
        }
      }
    }
  }

  /** `body` with its webhook target written and its callback topic the webhook topic. */
  private async webhookBody(taskId: string, body: SubmitBody, tenant: string): Promise<SubmitBody> {
    const { webhooks } = this.o;
    if (!webhooks || body.callback_url === undefined)
      throw httpError('CALLBACK_URL_NOT_ALLOWED', 'this router sends no webhooks');
    const topic = await webhooks.register(taskId, body.callback_url, body.callback_topic, tenant);
    return { ...body, callback_topic: topic };
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

  /**
   * One try of a submission. Every agent full only through this router's deliveries still on
   * their way (Redis' counts show free slots), a task that would queue throws {@link FullInFlight}
   * instead while `hold`, when the room holds nothing of the capability.
   */
  private async submitOnce(
    spec: TaskSpec,
    body: SubmitBody,
    timeoutMs: number,
    busy: { capability: string },
    hold: boolean,
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
    // Free slots by Redis' counts alone, when every agent looked full: those this router's
    // deliveries in flight will take are among them.
    let freeInRedis = 0;
    if (routed.push.length === 0 && !batch) {
      const found = await this.capacity.recount(routed.capability, routed.decision);
      freeInRedis = found.inRedis;
      // Counted full on stale counts: Redis says an agent has room (beyond what waiting retries get).
      if (found.free > 0) routed = await route();
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
    } else if (batch || routed.pull.length > 0) {
      return this.toPullPool(spec, body, routed, timeoutMs, batch ? 'batch' : 'pull_agents');
    }
    // Asked for the capability's pool (PROTOCOL.md §4): it waits there, read by pull agents and
    // drained into push agents that appear.
    if (body.on_no_agent === 'queue') return this.toPool(spec, timeoutMs, 'no_agent', fallback);
    const full = allFull();
    if (
      full &&
      hold &&
      freeInRedis > 0 &&
      this.queues(body, spec) &&
      !this.o.drainer.busy(routed.capability)
    ) {
      // Full only through deliveries still on their way (a stall between this router and Redis):
      // they land within milliseconds. The room, once entered, puts every later submission of the
      // capability behind it, on a path that drains far more slowly than this one, so a stall at
      // a high rate never ended (bench/results/2026-12-07-room-under-load.md).
      busy.capability = routed.capability;
      throw new FullInFlight();
    }
    if (full ? this.queues(body, spec) : this.waitsForAgent(body, spec))
      return this.queue(spec, body, timeoutMs);
    const existing = body.task_id ? await this.o.tasks.submitView(spec.taskId) : undefined;
    if (existing) return { created: false, reply: existing };
    if (full) {
      busy.capability = routed.capability;
      throw httpError(
        'AT_CAPACITY',
        `every live agent of ${routed.capability} is at max_concurrency; retry shortly or queue with on_no_agent`,
      );
    }
    const tags = spec.tags.length > 0 ? ` with tags ${spec.tags.join(',')}` : '';
    throw httpError('NO_AGENT', `no live agent serves capability ${spec.capability}${tags}`);
  }

  /** Whether a task that finds every agent busy waits in the room: unless the request or its capability says reject. */
  private queues(body: SubmitBody, spec: TaskSpec): boolean {
    return (
      body.on_at_capacity !== 'reject' && this.o.settings.backpressure[spec.capability] !== 'reject'
    );
  }

  /**
   * Whether a task that finds no live agent waits in the room for one: unless refused
   * (`on_no_agent: "reject"`), when it has a deadline — its own `timeout_s`, or the default of a
   * capability that has had agents or is configured. A never-seen capability without `timeout_s`
   * answers NO_AGENT at once, so a mistyped name fails fast.
   */
  private waitsForAgent(body: SubmitBody, spec: TaskSpec): boolean {
    if (body.on_no_agent === 'reject') return false;
    if (body.timeout_s !== undefined) return true;
    return this.knownCapability(spec.capability, spec.tenant || DEFAULT_TENANT);
  }

  /** Configured, or some agent that serves the tenant (its own or a shared one) is registered. */
  private knownCapability(capability: string, tenant: string): boolean {
    return (
      this.o.settings.queueDeadlines[capability] !== undefined ||
      this.o.snapshot.agentsFor(capability).some((a) => servesTenant(a, tenant))
    );
  }

  /**
   * Puts the task in its capability's waiting room (202, `queued`): sent in fair order as slots
   * free, or dead-lettered at its deadline — its own, or the capability's default.
   */
  private async queue(spec: TaskSpec, body: SubmitBody, timeoutMs: number): Promise<SubmitOutcome> {
    const { settings, delivery, events, room } = this.o;
    const record = await this.o.tenants.get(spec.tenant || DEFAULT_TENANT);
    const deadlineMs =
      timeoutMs > 0
        ? timeoutMs
        : (settings.queueDeadlines[spec.capability] ?? settings.queueDeadlineS) * 1000;
    const outcome = await queueTask(delivery, events, room, {
      task: spec,
      nonce: nextNonce(),
      now: Math.floor(delivery.clock.now()),
      timeoutMs: deadlineMs,
      fairnessKey: body.fairness_key ?? '',
      tenantWeight: record.weight,
      keyWeight: Math.min(body.fairness_weight ?? 1, record.max_fairness_weight),
      maxTenant: record.max_queued || settings.queueMaxPerTenant,
      maxTotal: settings.queueMax,
      maxInflight: record.max_inflight,
    });
    if (outcome.kind === 'queued') {
      this.o.drainer.kick(spec.capability);
      return {
        created: true,
        reply: { task_id: spec.taskId, status: 'queued', agent_id: '', stream: '', message_id: '' },
      };
    }
    const existing = await this.o.tasks.submitView(spec.taskId);
    if (existing) return { created: false, reply: existing };
    if (outcome.kind === 'exists')
      throw httpError('STORE_UNAVAILABLE', `task ${spec.taskId} is being written; retry`);
    throw httpError(
      'QUEUE_FULL',
      outcome.kind === 'tenant_full'
        ? `tenant ${spec.tenant || DEFAULT_TENANT} has ${outcome.waiting} tasks waiting for ${spec.capability}, its bound (max_queued); retry later`
        : `${outcome.waiting} tasks wait for ${spec.capability}, the waiting room's bound (REACH_QUEUE_MAX); retry later`,
    );
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

  /**
   * A task for pull agents: into their pool while it holds less than its bound and no task of the
   * capability waits in the room; else into the room, which feeds the pool in fair order as its
   * agents free slots. A request or capability that says `reject`, and a pool no pull agent of
   * the tenant reads (the pool drainer hands it on), keep the pool itself.
   */
  private async toPullPool(
    spec: TaskSpec,
    body: SubmitBody,
    routed: RoutedTo,
    timeoutMs: number,
    reason: PoolReason,
  ): Promise<SubmitOutcome> {
    const fallback = routed.fallback ? routed.capability : undefined;
    const slots = pullSlots(routed.decision, spec.tenant);
    if (slots > 0 && this.queues(body, spec)) {
      const pool = poolOf({ tenant: spec.tenant, capability: routed.capability });
      if (this.o.drainer.busy(spec.capability)) return this.queue(spec, body, timeoutMs);
      const added = await this.o.pools.tryAdd(pool, slots);
      if (added === undefined) return this.queue(spec, body, timeoutMs);
      // Counted on top of the pool's depth until the entry is written (or not): a read meanwhile
      // does not show it.
      return this.toPool(spec, timeoutMs, reason, fallback).finally(added);
    }
    return this.toPool(spec, timeoutMs, reason, fallback);
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
    const { delivery, events } = this.o;
    const outcome = await holdTask(delivery, events, {
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

/**
 * Every agent is full in this router's counts only through its own deliveries still on their way:
 * the submission waits for a slot (as one that asked for `reject` does) before the waiting room.
 */
class FullInFlight extends Error {
  constructor() {
    super('every agent is full through deliveries still in flight');
  }
}
