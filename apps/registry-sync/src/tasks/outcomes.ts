import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { DeadReason, ReachKeys } from '@agent-reach/protocol';
import type { CallbackPublisher } from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import type { FleetEventLog } from '../fleet/fleet-event-log.ts';
import { backoffMs, type BackoffSettings } from './backoff.ts';

/** Settings that decide a failed attempt's fate. */
export interface OutcomeSettings extends BackoffSettings {
  maxAttempts: number;
  dlqRetentionS: number;
}

/** Why an attempt is being given up on. */
export type RetryReason =
  | 'failed'
  | 'agent_offline'
  | 'agent_gone'
  | 'fenced'
  | 'handoff'
  | 'receipt_timeout'
  | 'unpooled'
  | DeadReason;

/** What to do with an attempt that will not complete. */
export interface RetryRequest {
  taskId: string;
  /** The attempt being given up on. */
  attempt: number;
  reason: RetryReason;
  /** The agent the attempt was on. */
  agentId?: string;
  error?: string;
  /** Dead at once with this reason, whatever the budget. */
  terminal?: DeadReason;
  /** Due now instead of after the backoff (re-routing away from a dead agent). */
  immediate?: boolean;
}

/** The decision taken. */
export type RetryDecision =
  | { kind: 'retry'; attempt: number; dueAt: number; capability: string }
  | { kind: 'dead'; reason: string; capability: string }
  | { kind: 'skipped' };

/**
 * Retries with backoff or dead-letters a task attempt, atomically per task, and announces the
 * decision: a due entry for the retry, the DLQ index, a callback notice and events for a death.
 */
export class TaskOutcomes {
  private readonly log: Logger;

  constructor(
    private readonly redis: Redis,
    private readonly keys: ReachKeys,
    private readonly events: EventSink,
    private readonly callbacks: CallbackPublisher,
    private readonly fleet: FleetEventLog,
    private readonly settings: OutcomeSettings,
    logger: Logger,
  ) {
    this.log = logger.child({ module: 'outcomes' });
  }

  /** Decides and records; safe to call twice for the same attempt (the second is skipped). */
  async retry(req: RetryRequest): Promise<RetryDecision> {
    const now = Date.now();
    const dueAt = req.immediate ? now : now + backoffMs(req.attempt, this.settings);
    // The due entry goes first: if this process dies before the state changes, the entry finds
    // a task that is not waiting and is dropped; the other order could strand a waiting task.
    const replies =
      (await this.redis
        .pipeline()
        .zadd(this.keys.due(), dueAt, req.taskId)
        .reachRetry(
          this.keys.task(req.taskId),
          this.keys.timeline(req.taskId),
          req.attempt,
          req.reason,
          this.settings.maxAttempts,
          dueAt,
          req.terminal ?? '',
          this.settings.dlqRetentionS,
          req.error ?? '',
          req.agentId ?? '',
        )
        .exec()) ?? [];
    const [err, reply] = replies[1] ?? [new Error('retry: empty reply')];
    if (err) throw err;
    const [code, attempt = 0, capability = '', topic = '', extra = '', traceId = ''] = reply as [
      number,
      number?,
      string?,
      string?,
      (number | string)?,
      string?,
    ];
    if (code < 0) return { kind: 'skipped' };
    // The task's trace id goes with its events and log lines, as with every other stage.
    const trace = traceId ? { trace_id: traceId } : {};
    if (code === 1) {
      this.log.info(
        { task_id: req.taskId, ...trace, attempt, reason: req.reason, due_at: extra },
        'task retry scheduled',
      );
      this.fleet.append({
        kind: 'retried',
        task_id: req.taskId,
        capability,
        attempt,
        reason: req.reason,
        ...(req.agentId ? { agent_id: req.agentId } : {}),
      });
      this.events.write({
        stage: 'retried',
        capability,
        agent_id: req.agentId || '-',
        task_id: req.taskId,
        attempt,
        at: now,
        reason: req.reason,
        ...trace,
      });
      return { kind: 'retry', attempt, dueAt: Number(extra), capability };
    }
    const reason = String(extra);
    await this.redis
      .pipeline()
      .zadd(this.keys.dlq(), now, req.taskId)
      .zrem(this.keys.due(), req.taskId)
      .exec();
    this.log.warn(
      { task_id: req.taskId, ...trace, attempt, reason, error: req.error },
      'task dead-lettered',
    );
    this.fleet.append({
      kind: 'dead',
      task_id: req.taskId,
      capability,
      attempt,
      reason,
      ...(req.agentId ? { agent_id: req.agentId } : {}),
    });
    this.events.write({
      stage: 'dead',
      capability,
      agent_id: req.agentId || '-',
      task_id: req.taskId,
      attempt,
      at: now,
      reason,
      ...trace,
    });
    if (topic) {
      await this.callbacks.publish(topic, {
        task_id: req.taskId,
        status: 'dead',
        capability,
        agent_id: req.agentId ?? '',
        attempt,
        error: reason,
        completed_at: now,
      });
    }
    return { kind: 'dead', reason, capability };
  }
}
