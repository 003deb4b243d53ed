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
}
