import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { encodeTask, type ReachKeys, type SubmitBody } from '@agent-reach/protocol';
import type { Delivery } from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import { httpError } from '@agent-reach/service-kit';
import type { TaskReader } from '../tasks/task-reader.ts';
import type { Lineage } from './lineage.ts';
import { claimTask, firstAttempt } from './claim.ts';

/** Settings of pooled delivery. */
export interface PoolSettings {
  defaultTimeoutS: number;
  dispatchGraceMs: number;
  /** How long a pooled task without timeout_s waits for an agent before it is dead (no_agent). */
  poolWaitMs: number;
}

/** Why a task went to the pool. */
export type PoolReason = 'batch' | 'pull_agents' | 'no_agent' | 'at_capacity';

/**
 * Puts tasks in their capability's pool stream, which pull agents read with the `workers` group
 * (and registry-sync drains into push agents that appear). The task is claimed with no agent;
 * the first pull agent's receipt takes it. A due entry at its deadline dead-letters it if no
 * agent ever takes it.
 */
export class Pool {
  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly delivery: Delivery,
    private readonly tasks: TaskReader,
    private readonly events: EventSink,
    private readonly settings: PoolSettings,
  ) {}

  /** Enqueues a new task in its capability's pool. */
  async enqueue(
    taskId: string,
    body: SubmitBody,
    payload: string,
    lineage: Lineage | undefined,
    reason: PoolReason,
  ) {
    const timeoutMs = (body.timeout_s ?? this.settings.defaultTimeoutS) * 1000;
    const claimed = await claimTask(this.redis, this.keys, this.delivery.watch, {
      taskId,
      body,
      payload,
      lineage,
      nonce: randomUUID(),
      timeoutMs,
      agentId: '',
      epoch: 0,
      watchdogAt: Date.now() + this.settings.dispatchGraceMs,
    });
    if (!claimed.ours) {
      const existing = await this.tasks.submitView(taskId);
      if (existing) return { created: false, reply: existing };
      throw httpError('STORE_UNAVAILABLE', `task ${taskId} is being written; retry`);
    }
    const { createdAt, deadlineMs } = claimed;
    const stream = this.keys.pool(body.capability);
    const fields = encodeTask(firstAttempt(taskId, body, payload, deadlineMs, lineage));
    const added =
      (await this.redis
        .pipeline()
        .time()
        .xadd(stream, '*', ...fields)
        .sadd(this.keys.pools(), body.capability)
        .exec()) ?? [];
    const [, time] = added[0] ?? [];
    const [xerr, messageId] = added[1] ?? [new Error('xadd: empty reply')];
    if (xerr) throw xerr;
    const [sec, usec] = (time as [string, string] | undefined) ?? [
      String(Math.floor(Date.now() / 1000)),
      '0',
    ];
    const sentAt = Number(sec) * 1000 + Math.floor(Number(usec) / 1000);
    const expiresAt = deadlineMs > 0 ? deadlineMs : sentAt + this.settings.poolWaitMs;
    await this.delivery.markSent(
      taskId,
      '',
      1,
      messageId as string,
      sentAt,
      { pool: body.capability, reason },
      { stream, dueAt: expiresAt },
    );
    this.events.write({
      stage: 'sent',
      capability: body.capability,
      agent_id: 'pool',
      task_id: taskId,
      attempt: 1,
      at: sentAt,
      latency_ms: Math.max(0, sentAt - createdAt),
    });
    return {
      created: true,
      reply: {
        task_id: taskId,
        status: 'sent' as const,
        agent_id: '',
        stream,
        message_id: messageId as string,
      },
    };
  }
}
