import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { ReachKeys } from '@agent-reach/protocol';

/** What an index trimmer needs. */
export interface IndexTrimmerOptions {
  redis: RedisClient;
  keys: Pick<ReachKeys, 'taskIndex' | 'taskShards'>;
  /** How long a task stays in the search index after it was created, seconds (REACH_SEARCH_INDEX_KEEP_S). */
  keepS: () => number;
}

/**
 * Trims the task search index (keys.ts `taskIndex`, written by claim-n.lua and hold-n.lua): the
 * entries of every task shard created more than `keepS` ago go, one ZREMRANGEBYSCORE per shard,
 * off the submission path. Entries whose task state expired sooner stay until then; search
 * skips them.
 */
export class IndexTrimmer {
  constructor(private readonly o: IndexTrimmerOptions) {}

  /** One pass over every shard; returns how many entries were removed. */
  async sweep(now: number): Promise<number> {
    const before = now - this.o.keepS() * 1000;
    let removed = 0;
    for (let shard = 0; shard < this.o.keys.taskShards(); shard++) {
      removed += await this.o.redis.zremrangebyscore(
        this.o.keys.taskIndex(shard),
        '-inf',
        `(${before}`,
      );
    }
    return removed;
  }
}
