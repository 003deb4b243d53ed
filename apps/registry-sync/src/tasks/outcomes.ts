import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import {
  FOLLOW_UP_AFTER_MS,
  type AgentHealthCheck,
  type DeadReason,
  type HealthOutcomeName,
  type ReachKeys,
} from '@agent-reach/protocol';
import {
  noticeStage,
  retryScript,
  writeFollowUp,
  type DeadLetterer,
  type FleetEventLog,
} from '@agent-reach/dispatch';
import type { EventSink } from '@agent-reach/events';
import { backoffMs, type BackoffSettings } from './backoff.ts';

/** Settings that decide a failed attempt's fate. */
export interface OutcomeSettings extends BackoffSettings {
  maxAttempts: number;
  dlqRetentionS: number;
  /** A death goes to the archive outbox (REACH_TASK_ARCHIVE), its expiry set once archived. */
  archive?: boolean;
}

/** Why an attempt is being given up on. */
export type RetryReason =
  | 'failed'
  | 'agent_offline'
  | 'agent_gone'
  | 'fenced'
  | 'handoff'
  | 'receipt_timeout'
  | 'lease_lapse'
  | 'unpooled'
  /**
   * The attempt never reached its endpoint (a relay's `ENDPOINT_UNREACHABLE`): retried at once,
   * at no cost to the task's attempts (retry-3.lua, at most REACH_MAX_ATTEMPTS times), and no
   * failure of the agent's health.
   */
  | 'unreachable'
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
  /**
   * The attempt's delivery, when the caller holds it (the agent's pending entry): its `sent`
   * stage, for a task no ack reached (the task step copies it into the task otherwise).
   */
  sent?: { at: number; messageId: string };
}

/** The decision taken. */
export type RetryDecision =
  | { kind: 'retry'; attempt: number; dueAt: number; capability: string }
  | { kind: 'dead'; reason: string; capability: string }
  | { kind: 'skipped' };

/** Where agents' outcomes go (health/health-recorder.ts). */
export interface OutcomeRecorder {
  /** `check`: a probe's health check answer, kept with the agent. */
  record(agentId: string, outcome: HealthOutcomeName, check?: AgentHealthCheck): void;
}

/** The health outcome an attempt given up on for this reason counts as, for its agent. */
const HEALTH_OF: Partial<Record<RetryReason, HealthOutcomeName>> = {
  failed: 'failed',
  receipt_timeout: 'receiptTimeout',
  lease_lapse: 'leaseLapse',
};

/** What deciding an attempt's fate needs. */
export interface TaskOutcomesOptions {
  /** Notes failures and receipt timeouts in the agents' health windows. */
  health?: OutcomeRecorder;
  redis: RedisClient;
  keys: ReachKeys;
  events: EventSink;
  fleet: FleetEventLog;
  deadLetters: DeadLetterer;
  settings: OutcomeSettings;
  logger: Logger;
}

/**
 * Retries with backoff or dead-letters a task attempt, atomically per task, and announces the
 * decision: a due entry, an event and a fleet event for a retry; a death through the one
 * dead-letter announcement.
 */
export class TaskOutcomes {
  private readonly log: Logger;

  constructor(private readonly o: TaskOutcomesOptions) {
    this.log = o.logger.child({ module: 'outcomes' });
  }

  /**
   * The agent of an attempt given up on failed it (or let its lease lapse, or never received it):
   * its health window notes that, whatever the task's fate.
   */
  recordHealth(agentId: string, outcome: HealthOutcomeName): void {
    this.o.health?.record(agentId, outcome);
  }

  /**
   * A dead task's follow-up entry came due: its death's announcement may have stopped midway
   * (DeadLetterer.announceAgain). The entry is written before the state changes (retry below),
   * so every death decided here is announced, whatever stops in between.
   */
  announceAgain(taskId: string): Promise<boolean> {
    return this.o.deadLetters.announceAgain(taskId);
  }

  /** Decides and records; safe to call twice for the same attempt (the second is skipped). */
  async retry(req: RetryRequest): Promise<RetryDecision> {
    const { redis, keys, settings } = this.o;
    const backoff = req.immediate ? 0 : backoffMs(req.attempt, settings);
    // The due entries go first, each written before the script runs (on a Cluster they live on
    // another master, so one pipeline would not order them): the task's own entry, so a process
    // that stops after the state changes cannot strand a waiting task, and the follow-up entry,
    // so a death gets announced should it stop before that. The own entry comes due no sooner
    // than FOLLOW_UP_AFTER_MS (registry-sync drops one over a task that is not waiting, and must
    // not find it before the script), and is moved to the retry's time once the script has run;
    // NX leaves an entry the task already has (a pooled task's expiry) as it is.
    const due = keys.dueOf(req.taskId);
    const now = Date.now();
    const [, followUp] = await Promise.all([
      redis.zadd(due, 'NX', now + Math.max(FOLLOW_UP_AFTER_MS, backoff), req.taskId),
      writeFollowUp(redis, keys, req.taskId),
    ]);
    const dueAt = Date.now() + backoff;
    const reply = await retryScript.run(redis, {
      keys: {
        task: keys.task(req.taskId),
        timeline: keys.timeline(req.taskId),
        outbox: keys.archiveOutbox(keys.taskShardOf(req.taskId)),
      },
      args: {
        attempt: req.attempt,
        reason: req.reason,
        maxAttempts: settings.maxAttempts,
        dueAt,
        terminal: req.terminal ?? '',
        retentionS: settings.dlqRetentionS,
        error: req.error ?? '',
        agentId: req.agentId ?? '',
        sentAt: req.sent?.at ?? '',
        messageId: req.sent?.messageId ?? '',
        archive: settings.archive ? '1' : '',
      },
    });
    // Only a death has a follow-up (its announcement drops the entry); one written here for
    // anything else goes now, and one an earlier writer left stays for registry-sync. A retry's
    // own entry comes due at its time.
    if (reply.kind !== 'dead')
      await Promise.all([
        reply.kind === 'retry' ? redis.zadd(due, reply.dueAt, req.taskId) : undefined,
        followUp.undo(),
      ]);
    if (reply.kind === 'skipped') return { kind: 'skipped' };
    const health = HEALTH_OF[req.reason];
    if (health && req.agentId) this.recordHealth(req.agentId, health);
    // The task's trace id goes with its events and log lines, as with every other stage.
    const trace = reply.traceId ? { trace_id: reply.traceId } : {};
    if (reply.kind === 'retry') {
      this.log.debug(
        {
          task_id: req.taskId,
          ...trace,
          attempt: reply.attempt,
          reason: req.reason,
          due_at: reply.dueAt,
        },
        'task retry scheduled',
      );
      noticeStage(this.o.fleet, this.o.events, {
        stage: 'retried',
        taskId: req.taskId,
        capability: reply.capability,
        attempt: reply.attempt,
        reason: req.reason,
        ...(req.agentId ? { agentId: req.agentId } : {}),
        traceId: reply.traceId,
        at: now,
      });
      return {
        kind: 'retry',
        attempt: reply.attempt,
        dueAt: reply.dueAt,
        capability: reply.capability,
      };
    }
    await this.o.deadLetters.announce({
      taskId: req.taskId,
      capability: reply.capability,
      attempt: reply.attempt,
      reason: reply.reason,
      ...(req.agentId ? { agentId: req.agentId } : {}),
      ...(req.error !== undefined ? { error: req.error } : {}),
      callbackTopic: reply.callbackTopic,
      traceId: reply.traceId,
      at: now,
    });
    return { kind: 'dead', reason: reply.reason, capability: reply.capability };
  }
}
