import type { RedisClient } from '@agent-reach/service-kit/redis';
import {
  decodeTaskField,
  ENDPOINT_UNREACHABLE,
  TaskRecordField,
  type AckMessage,
  type ReachKeys,
} from '@agent-reach/protocol';
import type { TaskOutcomes } from '../tasks/outcomes.ts';

/** What the failure decision works with. */
export interface FailureDecisionOptions {
  redis: RedisClient;
  keys: ReachKeys;
  /** Retries the task or dead-letters it (retry-3.lua). */
  outcomes: TaskOutcomes;
}

/**
 * What follows a `failed` ack: the attempt is given up on, and the task retried after its
 * backoff or dead-lettered (`TaskOutcomes.retry`). A failure that never reached its endpoint
 * (`ENDPOINT_UNREACHABLE`, from a relay) is retried at once without spending an attempt. Taken
 * again for a re-processed ack: retry-3.lua moves only the expected attempt, so it happens once.
 */
export class FailureDecision {
  constructor(private readonly o: FailureDecisionOptions) {}

  /** Decides the task's next step after `ack`'s attempt failed. */
  async decide(ack: AckMessage): Promise<void> {
    // A hand-written worker may omit attempt: the task's current one is meant.
    const attempt = ack.attempt || (await this.currentAttempt(ack.task_id));
    if (attempt === 0) return;
    const unreachable = ack.error_code === ENDPOINT_UNREACHABLE && ack.retryable !== false;
    await this.o.outcomes.retry({
      taskId: ack.task_id,
      attempt,
      reason: unreachable ? 'unreachable' : 'failed',
      agentId: ack.agent_id,
      ...(unreachable ? { immediate: true } : {}),
      ...(ack.error !== undefined ? { error: ack.error } : {}),
      ...(ack.retryable === false ? { terminal: 'not_retryable' as const } : {}),
    });
  }

  /** The task's current attempt, 0 when the task is gone. */
  private async currentAttempt(taskId: string): Promise<number> {
    const { redis, keys } = this.o;
    const value = await redis.hget(keys.task(taskId), TaskRecordField.attempt);
    return decodeTaskField('attempt', value) ?? 0;
  }
}
