import type { RedisClient } from '@agent-reach/service-kit/redis';
import { dueKind, dueTaskId, type ReachKeys } from '@agent-reach/protocol';
import type { TaskCanceller } from '@agent-reach/dispatch';
import type { Logger } from 'pino';
import type { Resender } from '../tasks/resender.ts';
import type { TaskOutcomes } from '../tasks/outcomes.ts';

const BATCH = 200;

/** How long a follow-up that failed waits before it is tried again. */
const FOLLOW_UP_AGAIN_MS = 1000;

/** What a due processor needs. */
export interface DueProcessorOptions {
  redis: RedisClient;
  keys: ReachKeys;
  resender: Resender;
  canceller: TaskCanceller;
  outcomes: TaskOutcomes;
  dlqRetentionS: number;
  logger?: Logger;
}

/**
 * Dispatches the tasks whose time has come in the due set (every shard of it): retries after their backoff,
 * replayed dead letters, (through their watchdog entries, `#<task_id>`) submissions a router
 * claimed but never delivered, and (through `!<task_id>`) the follow-up of a final state whose
 * writer stopped before it was done: a cancel's callback and notice, a death's announcement.
 */
export class DueProcessor {
  constructor(private readonly o: DueProcessorOptions) {}

  /** One pass; returns how many tasks were sent. */
  async process(now: number): Promise<number> {
    let sent = 0;
    for (let shard = 0; shard < this.o.keys.shards(); shard++) {
      const members = await this.o.redis.zrangebyscore(
        this.o.keys.due(shard),
        '-inf',
        now,
        'LIMIT',
        0,
        BATCH,
      );
      for (const member of members) {
        const kind = dueKind(member);
        if (kind === 'follow-up') await this.followUp(shard, member, now);
        else if ((await this.o.resender.resend(dueTaskId(member), now, kind)) === 'sent') sent++;
      }
    }
    await this.o.redis.zremrangebyscore(
      this.o.keys.dlq(),
      '-inf',
      now - this.o.dlqRetentionS * 1000,
    );
    return sent;
  }

  /**
   * A final state's follow-up: done here — the cancel's or the death's, by the task's state; a task
   * in neither (the change never happened, or it expired) only loses the entry — or, should Redis
   * refuse it now, tried again a little later, so one that cannot be done does not hold back the
   * entries behind it.
   */
  private async followUp(shard: number, member: string, now: number): Promise<void> {
    const taskId = dueTaskId(member);
    try {
      // Each answers false, having done nothing, for a task not in its state.
      const done =
        (await this.o.canceller.resume(taskId)) || (await this.o.outcomes.announceAgain(taskId));
      if (!done) await this.o.redis.zrem(this.o.keys.due(shard), member);
    } catch (err: unknown) {
      this.o.logger?.warn({ err, task_id: taskId }, 'follow-up failed; tried again shortly');
      await this.o.redis.zadd(this.o.keys.due(shard), 'XX', now + FOLLOW_UP_AGAIN_MS, member);
    }
  }

  /**
   * When the earliest entry of the due set (any shard) is due, in ms; undefined when it is empty.
   * One `ZRANGE … 0 0 WITHSCORES` per shard, each on its own key (its own slot on a Cluster).
   */
  async nextDueAt(): Promise<number | undefined> {
    let next: number | undefined;
    for (let shard = 0; shard < this.o.keys.shards(); shard++) {
      const [, score] = await this.o.redis.zrange(this.o.keys.due(shard), 0, 0, 'WITHSCORES');
      if (score === undefined) continue;
      const at = Number(score);
      if (Number.isFinite(at) && (next === undefined || at < next)) next = at;
    }
    return next;
  }
}
