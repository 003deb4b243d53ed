import type { RedisClient } from '@agent-reach/service-kit/redis';
import { dueTaskId, type ReachKeys } from '@agent-reach/protocol';
import type { Resender } from '../tasks/resender.ts';

const BATCH = 200;

/**
 * Dispatches the tasks whose time has come in the due set (every shard of it): retries after their backoff,
 * replayed dead letters, and (through their watchdog entries, `#<task_id>`) submissions a router
 * claimed but never delivered.
 */
export class DueProcessor {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: ReachKeys,
    private readonly resender: Resender,
    private readonly dlqRetentionS: number,
  ) {}

  /** One pass; returns how many tasks were sent. */
  async process(now: number): Promise<number> {
    let sent = 0;
    for (let shard = 0; shard < this.keys.shards(); shard++) {
      const members = await this.redis.zrangebyscore(
        this.keys.due(shard),
        '-inf',
        now,
        'LIMIT',
        0,
        BATCH,
      );
      for (const member of members) {
        const via = member === dueTaskId(member) ? 'due' : 'watchdog';
        if ((await this.resender.resend(dueTaskId(member), now, via)) === 'sent') sent++;
      }
    }
    await this.redis.zremrangebyscore(this.keys.dlq(), '-inf', now - this.dlqRetentionS * 1000);
    return sent;
  }

  /**
   * When the earliest entry of the due set (any shard) is due, in ms; undefined when it is empty.
   * One `ZRANGE … 0 0 WITHSCORES` per shard, each on its own key (its own slot on a Cluster).
   */
  async nextDueAt(): Promise<number | undefined> {
    let next: number | undefined;
    for (let shard = 0; shard < this.keys.shards(); shard++) {
      const [, score] = await this.redis.zrange(this.keys.due(shard), 0, 0, 'WITHSCORES');
      if (score === undefined) continue;
      const at = Number(score);
      if (Number.isFinite(at) && (next === undefined || at < next)) next = at;
    }
    return next;
  }
}
