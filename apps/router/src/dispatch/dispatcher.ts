import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { encodeTask, type ReachKeys, type SubmitBody, type SubmitReply, type TimelineEntry } from '@agent-reach/protocol';
import type { EventSink } from '@agent-reach/events';
import { httpError } from '@agent-reach/service-kit';
import { rankCandidates, type RankedAgent, type SnapshotHolder } from '@agent-reach/dispatch';
import type { TaskReader } from '../tasks/task-reader.ts';

/** Settings the dispatcher needs. */
export interface DispatchSettings {
  /** Lease age after which an agent is not delivered to, re-checked in Redis. */
  offlineMs: number;
  /** Largest payload, serialised, in bytes. */
  maxPayloadBytes: number;
  /** Timeout when the caller gives none, seconds (0 = none). */
  defaultTimeoutS: number;
  /** Candidates tried before answering NO_AGENT. */
  maxCandidates: number;
}

/** Outcome of a submission: a new task (202) or the existing one for a repeated task_id (200). */
export type SubmitOutcome = { created: true; reply: SubmitReply } | { created: false; reply: SubmitReply };

const DELIVERY_REFUSALS: Record<number, string> = { [-1]: 'gone', [-2]: 'epoch_changed', [-3]: 'not_live', [-4]: 'full' };

/**
 * The router's hot path: rank candidates from the in-memory snapshot, claim the task_id with
 * the idempotency check, deliver with the agent re-verified in the same script, record `sent`.
 */
export class Dispatcher {
  private readonly log: Logger;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly snapshot: SnapshotHolder,
    private readonly tasks: TaskReader,
    private readonly events: EventSink,
    private readonly settings: DispatchSettings,
    logger: Logger,
  ) {
    this.log = logger.child({ module: 'dispatch' });
  }

  /** Submits a task; throws NO_AGENT, PAYLOAD_TOO_LARGE or a store error. */
  async submit(body: SubmitBody): Promise<SubmitOutcome> {
    const payload = JSON.stringify(body.payload ?? null);
    if (Buffer.byteLength(payload) > this.settings.maxPayloadBytes) {
      throw httpError('PAYLOAD_TOO_LARGE', `payload is over the limit of ${this.settings.maxPayloadBytes} bytes once serialised`);
    }
    const taskId = body.task_id ?? randomUUID();
    let candidates = this.rank(body.capability, taskId);
    if (candidates.length === 0) {
      // A registration may be newer than the snapshot held: look once more before refusing.
      await this.snapshot.reload();
      candidates = this.rank(body.capability, taskId);
    }
    if (candidates.length === 0) {
      const existing = body.task_id ? await this.tasks.submitView(taskId) : undefined;
      if (existing) return { created: false, reply: existing };
      throw httpError('NO_AGENT', `no live agent serves capability ${body.capability}`);
    }
    const nonce = randomUUID();
    const timeoutMs = (body.timeout_s ?? this.settings.defaultTimeoutS) * 1000;
    const refusals: string[] = [];
    for (const candidate of candidates.slice(0, this.settings.maxCandidates)) {
      const agent = candidate.agent;
      const [claimed, createdAt = 0, deadlineMs = 0] = await this.redis.reachClaim(
        this.keys.task(taskId),
        this.keys.timeline(taskId),
        nonce,
        taskId,
        body.capability,
        payload,
        body.callback_topic ?? '',
        body.trace_id ?? '',
        timeoutMs,
        agent.agent_id,
        agent.epoch,
      );
      if (claimed === 2) {
        const existing = await this.tasks.submitView(taskId);
        if (existing) return { created: false, reply: existing };
        throw httpError('STORE_UNAVAILABLE', `task ${taskId} is being written; retry`);
      }
      const fields = encodeTask({
        task_id: taskId,
        capability: body.capability,
        payload,
        attempt: 1,
        trace_id: body.trace_id ?? '',
        callback_topic: body.callback_topic ?? '',
        deadline_ms: deadlineMs,
      });
      const [code, messageId = '', sentAt = 0, inflight = 0] = await this.redis.reachDeliver(
        this.keys.agent(agent.agent_id),
        this.keys.inbox(agent.agent_id),
        this.keys.pending(agent.agent_id),
        agent.epoch,
        taskId,
        1,
        this.settings.offlineMs,
        ...fields,
      );
      if (code < 0) {
        refusals.push(`${agent.agent_id}:${DELIVERY_REFUSALS[code] ?? code}`);
        if (code === -4) this.snapshot.noteInflight(agent.agent_id, agent.max_concurrency);
        continue;
      }
      this.snapshot.noteInflight(agent.agent_id, inflight);
      await this.markSent(taskId, candidate, messageId, sentAt, createdAt, body);
      return {
        created: true,
        reply: { task_id: taskId, status: 'sent', agent_id: agent.agent_id, stream: this.keys.inbox(agent.agent_id), message_id: messageId },
      };
    }
    await this.redis.reachReleaseClaim(this.keys.task(taskId), this.keys.timeline(taskId), nonce);
    this.log.info({ task_id: taskId, capability: body.capability, refusals }, 'no candidate took the task');
    throw httpError('NO_AGENT', `no live agent with a free slot serves capability ${body.capability}; retry shortly`);
  }

  private rank(capability: string, taskId: string): RankedAgent[] {
    return rankCandidates(this.snapshot.agentsFor(capability), taskId, this.snapshot.ringFor(capability), this.snapshot.inflightOf);
  }

  private async markSent(
    taskId: string,
    candidate: RankedAgent,
    messageId: string,
    sentAt: number,
    createdAt: number,
    body: SubmitBody,
  ): Promise<void> {
    const agent = candidate.agent;
    const entry: TimelineEntry = { stage: 'sent', at: sentAt, agent_id: agent.agent_id, attempt: 1, message_id: messageId };
    await this.redis.reachMarkSent(
      this.keys.task(taskId),
      this.keys.timeline(taskId),
      1,
      messageId,
      sentAt,
      this.keys.inbox(agent.agent_id),
      JSON.stringify(entry),
    );
    this.events.write({
      stage: 'sent',
      capability: body.capability,
      agent_id: agent.agent_id,
      task_id: taskId,
      attempt: 1,
      at: sentAt,
      latency_ms: Math.max(0, sentAt - createdAt),
      ...(body.trace_id ? { trace_id: body.trace_id } : {}),
    });
  }
}
