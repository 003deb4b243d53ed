import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { ReachKeys, SubmitBody, SubmitReply } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import { httpError } from '@agent-reach/service-kit';
import {
  CapacityWaiter,
  type CallbackPublisher,
  type Candidate,
  type Delivery,
  type DeliveryResult,
  type SnapshotHolder,
} from '@agent-reach/dispatch';
import type { TaskReader } from '../tasks/task-reader.ts';
import type { Lineage } from './lineage.ts';
import { claimTask, firstAttempt } from './claim.ts';
import { onlyExcludedFor, route, type RoutingAsk } from './decision.ts';
import type { Pool } from './pool.ts';

/** Settings the dispatcher needs. */
export interface DispatchSettings {
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
  /** Concurrency watermark (share of max_concurrency). */
  watermark: number;
  /** Per capability: queue in the pool or answer 429 when every agent is at capacity. */
  backpressure: Record<string, 'queue' | 'reject'>;
  /** How long a session sticks to its agent, seconds. */
  sessionTtlS: number;
  /** How long a submission that finds every agent at capacity waits for a slot before 429. */
  admissionWaitMs: number;
}

/** Outcome of a submission: a new task (202) or the existing one for a repeated task_id (200). */
export interface SubmitOutcome {
  created: boolean;
  reply: SubmitReply;
}

/**
 * The router's hot path: rank candidates from the in-memory snapshot, claim the task_id with
 * the idempotency check (a watchdog entry in the due set rides in the same round trip), deliver
 * with the agent re-verified in the same script, record `sent`.
 */
export class Dispatcher {
  private readonly log: Logger;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly snapshot: SnapshotHolder,
    private readonly delivery: Delivery,
    private readonly pool: Pool,
    private readonly callbacks: CallbackPublisher,
    private readonly tasks: TaskReader,
    private readonly events: EventSink,
    private readonly settings: DispatchSettings,
    logger: Logger,
    // Freed slots go to the retries registry-sync holds first (`retriesWaiting`), then to submissions.
    private readonly capacity = new CapacityWaiter(redis, keys, snapshot, {
      reserved: async (capability) => Number(await redis.get(keys.retriesWaiting(capability))) || 0,
    }),
  ) {
    this.log = logger.child({ module: 'dispatch' });
  }

  /** Answers every waiting submission (429) and stops holding new ones. */
  close(): void {
    this.capacity.close();
  }

  /**
   * Submits a task; throws NO_AGENT, AT_CAPACITY, PAYLOAD_TOO_LARGE or a store error. A task
   * that finds every agent at capacity waits up to `admissionWaitMs` for a slot before AT_CAPACITY.
   */
  async submit(body: SubmitBody): Promise<SubmitOutcome> {
    const payload = JSON.stringify(body.payload ?? null);
    if (Buffer.byteLength(payload) > this.settings.maxPayloadBytes) {
      throw httpError(
        'PAYLOAD_TOO_LARGE',
        `payload is over the limit of ${this.settings.maxPayloadBytes} bytes once serialised`,
      );
    }
    const taskId = body.task_id ?? randomUUID();
    const until = Date.now() + this.settings.admissionWaitMs;
    for (;;) {
      try {
        return await this.submitOnce(body, payload, taskId);
      } catch (err: unknown) {
        if ((err as { code?: unknown }).code !== 'AT_CAPACITY') throw err;
        if (!(await this.capacity.wait(body.capability, until - Date.now()))) throw err;
      }
    }
  }

  private async submitOnce(
    body: SubmitBody,
    payload: string,
    taskId: string,
  ): Promise<SubmitOutcome> {
    const ask: RoutingAsk = {
      taskId,
      capability: body.capability,
      ...(body.tags ? { tags: body.tags } : {}),
      ...(body.region ? { region: body.region, regionPolicy: body.region_policy ?? 'prefer' } : {}),
      ...(body.session_id ? { sessionId: body.session_id } : {}),
      ...(body.parent_task_id ? { parentTaskId: body.parent_task_id } : {}),
    };
    // The candidates tried, plus the runner-up the sent stage records.
    const picks = this.settings.maxCandidates + 1;
    let routed = await route(
      this.redis,
      this.keys,
      this.snapshot,
      ask,
      this.settings.watermark,
      body.mode !== 'batch',
      picks,
    );
    if (routed.decision.count() === 0) {
      // A registration may be newer than the snapshot held: look once more before refusing.
      await this.snapshot.reload();
      routed = await route(
        this.redis,
        this.keys,
        this.snapshot,
        ask,
        this.settings.watermark,
        body.mode !== 'batch',
        picks,
      );
    }
    if (
      routed.push.length === 0 &&
      body.mode !== 'batch' &&
      (await this.capacity.room(body.capability, routed.decision)) > 0
    ) {
      // Counted full on stale counts: Redis says an agent has room (beyond what waiting retries get).
      routed = await route(
        this.redis,
        this.keys,
        this.snapshot,
        ask,
        this.settings.watermark,
        true,
        picks,
      );
    }
    const reserved = body.mode !== 'batch' ? routed.push[0]?.agent.agent_id : undefined;
    const { decision, lineage } = routed;
    if (
      lineage &&
      (lineage.hops > this.settings.maxHops || onlyExcludedFor(decision, ['on_trace']))
    ) {
      if (reserved) this.snapshot.settle(reserved);
      return this.reject(taskId, body, payload, lineage);
    }
    // Whether every live agent is only full is worked out when no agent took the task (it reads
    // every agent's exclusion, which a delivered task never needs).
    let allFull = (): boolean => onlyExcludedFor(decision, ['full', 'watermark']);
    if (reserved) {
      const outcome = await this.dispatch(
        taskId,
        body,
        payload,
        routed.push,
        routed.pushCount,
        lineage,
      );
      if (!('refused' in outcome)) return outcome;
      allFull = () => outcome.allFull;
    } else if (body.mode === 'batch') {
      return this.pool.enqueue(taskId, body, payload, lineage, 'batch');
    } else if (routed.pull.length > 0) {
      return this.pool.enqueue(taskId, body, payload, lineage, 'pull_agents');
    }
    if (body.on_no_agent === 'queue')
      return this.pool.enqueue(taskId, body, payload, lineage, 'no_agent');
    const existing = body.task_id ? await this.tasks.submitView(taskId) : undefined;
    if (existing) return { created: false, reply: existing };
    if (allFull()) {
      if (this.settings.backpressure[body.capability] === 'queue')
        return this.pool.enqueue(taskId, body, payload, lineage, 'at_capacity');
      throw httpError(
        'AT_CAPACITY',
        `every live agent of ${body.capability} is at max_concurrency; retry shortly or queue with on_no_agent`,
      );
    }
    throw httpError(
      'NO_AGENT',
      `no live agent serves capability ${body.capability}${body.tags ? ` with tags ${body.tags.join(',')}` : ''}`,
    );
  }

  private async dispatch(
    taskId: string,
    body: SubmitBody,
    payload: string,
    candidates: Candidate[],
    candidateCount: number,
    lineage: Lineage | undefined,
  ): Promise<SubmitOutcome | { refused: true; allFull: boolean }> {
    const nonce = randomUUID();
    const timeoutMs = (body.timeout_s ?? this.settings.defaultTimeoutS) * 1000;
    const refusals: string[] = [];
    const tried = candidates.slice(0, this.settings.maxCandidates);
    // The first candidate was counted when it was chosen; a return before its delivery gives it back.
    let outstanding: string | undefined = tried[0]?.agent.agent_id;
    try {
      return await this.tryCandidates(
        taskId,
        body,
        payload,
        candidates,
        candidateCount,
        tried,
        lineage,
        nonce,
        timeoutMs,
        refusals,
        () => {
          outstanding = undefined;
        },
      );
    } finally {
      if (outstanding) this.snapshot.settle(outstanding);
    }
  }

  private async tryCandidates(
    taskId: string,
    body: SubmitBody,
    payload: string,
    candidates: Candidate[],
    candidateCount: number,
    tried: Candidate[],
    lineage: Lineage | undefined,
    nonce: string,
    timeoutMs: number,
    refusals: string[],
    firstSettled: () => void,
  ): Promise<SubmitOutcome | { refused: true; allFull: boolean }> {
    let full = 0;
    // The first claim adds the watchdog entry; the `sent` record drops it only if it is still that one.
    const watchdogAt = Date.now() + this.settings.dispatchGraceMs;
    for (const [i, candidate] of tried.entries()) {
      const agent = candidate.agent;
      const claimed = await claimTask(this.redis, this.keys, this.delivery.watch, {
        taskId,
        body,
        payload,
        lineage,
        nonce,
        timeoutMs,
        agentId: agent.agent_id,
        epoch: agent.epoch,
        ...(i === 0 ? { watchdogAt } : {}),
      });
      if (!claimed.ours) {
        const existing = await this.tasks.submitView(taskId);
        if (existing) return { created: false, reply: existing };
        throw httpError('STORE_UNAVAILABLE', `task ${taskId} is being written; retry`);
      }
      const { createdAt, deadlineMs } = claimed;
      const task = firstAttempt(taskId, body, payload, deadlineMs, lineage);
      if (i > 0) this.snapshot.reserve(agent.agent_id);
      else firstSettled();
      let result: DeliveryResult;
      try {
        result = await this.delivery.deliver(agent, task);
      } catch (e: unknown) {
        this.snapshot.settle(agent.agent_id);
        throw e;
      }
      this.snapshot.settle(
        agent.agent_id,
        result.ok ? result.inflight : result.refusal === 'full' ? agent.max_concurrency : undefined,
      );
      if (!result.ok) {
        refusals.push(`${agent.agent_id}:${result.refusal}`);
        if (result.refusal === 'full') full++;
        continue;
      }
      const runnerUp = candidates[i + 1];
      // The XADD returned an id: the task is sent. Recording the stage rides the same
      // auto-pipelined connection without holding the reply (a later read on this router's
      // connection is served after it; the due-set watchdog covers a router that dies first).
      void this.delivery
        .markSent(
          taskId,
          agent.agent_id,
          1,
          result.messageId,
          result.sentAt,
          {
            score: Number(candidate.score.toFixed(4)),
            load: Number(candidate.load.toFixed(4)),
            candidates: candidateCount,
            ...(runnerUp
              ? {
                  runner_up: runnerUp.agent.agent_id,
                  runner_up_score: Number(runnerUp.score.toFixed(4)),
                }
              : {}),
            snapshot_age_ms: this.snapshot.info().age_ms,
            ...(refusals.length > 0 ? { reason: `re-routed after ${refusals.join(', ')}` } : {}),
          },
          undefined,
          watchdogAt,
        )
        .catch((err: unknown) =>
          this.log.warn(
            { err, task_id: taskId },
            'sent stage not recorded; the watchdog will check the task',
          ),
        );
      if (body.session_id)
        await this.redis.set(
          this.keys.session(body.session_id),
          agent.agent_id,
          'EX',
          this.settings.sessionTtlS,
        );
      this.events.write({
        stage: 'sent',
        capability: body.capability,
        agent_id: agent.agent_id,
        task_id: taskId,
        attempt: 1,
        at: result.sentAt,
        latency_ms: Math.max(0, result.sentAt - createdAt),
        ...(body.trace_id ? { trace_id: body.trace_id } : {}),
      });
      return {
        created: true,
        reply: {
          task_id: taskId,
          status: 'sent',
          agent_id: agent.agent_id,
          stream: this.keys.inbox(agent.agent_id),
          message_id: result.messageId,
        },
      };
    }
    await this.redis
      .pipeline()
      .reachReleaseClaim(this.keys.task(taskId), this.keys.timeline(taskId), nonce)
      .zrem(this.keys.due(), taskId)
      .exec();
    this.log.info(
      { task_id: taskId, capability: body.capability, refusals },
      'no candidate took the task',
    );
    return { refused: true, allFull: full === tried.length };
  }

  /** Records a submission that is dead on arrival as a loop, visible in the DLQ. */
  private async reject(
    taskId: string,
    body: SubmitBody,
    payload: string,
    lineage: Lineage,
  ): Promise<SubmitOutcome> {
    const reason = 'loop';
    const [[err, created]] = ((await this.redis
      .pipeline()
      .reachReject(
        this.keys.task(taskId),
        this.keys.timeline(taskId),
        taskId,
        body.capability,
        payload,
        body.callback_topic ?? '',
        body.trace_id ?? '',
        reason,
        this.settings.dlqRetentionS,
        body.parent_task_id ?? '',
        lineage.hops,
      )
      .exec()) ?? [[null, 0]]) as [[Error | null, number]];
    if (err) throw err;
    if (created !== 1) {
      const existing = await this.tasks.submitView(taskId);
      if (existing) return { created: false, reply: existing };
    }
    const deadAt = Date.now();
    await this.redis.zadd(this.keys.dlq(), deadAt, taskId);
    this.events.write({
      stage: 'dead',
      capability: body.capability,
      agent_id: '-',
      task_id: taskId,
      attempt: 0,
      at: deadAt,
      reason,
      ...(body.trace_id ? { trace_id: body.trace_id } : {}),
    });
    if (body.callback_topic) {
      await this.callbacks.publish(body.callback_topic, {
        task_id: taskId,
        status: 'dead',
        capability: body.capability,
        agent_id: '',
        attempt: 0,
        error: reason,
        completed_at: deadAt,
      });
    }
    this.log.info(
      { task_id: taskId, trace_id: body.trace_id, capability: body.capability, hops: lineage.hops },
      'submission dead-lettered as a loop',
    );
    return {
      created: true,
      reply: { task_id: taskId, status: 'dead', agent_id: '', stream: '', message_id: '' },
    };
  }
}
