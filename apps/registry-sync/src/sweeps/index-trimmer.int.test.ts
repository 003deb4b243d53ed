/**
 * The housekeeper's trim of the task search index on a real Redis: entries of every task shard
 * created before REACH_SEARCH_INDEX_KEEP_S go, newer ones stay.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { reachKeys } from '@agent-reach/protocol';
import { createRedis } from '@agent-reach/service-kit/redis';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { IndexTrimmer } from './index-trimmer.ts';

const keys = reachKeys(randomPrefix(), { taskShards: () => 3 });
const redis = createRedis({ url: testServices().redisUrl });

afterAll(async () => {
  for (let s = 0; s < 3; s++) await redis.del(keys.taskIndex(s));
  await redis.quit();
});

describe('the search index trimmer', () => {
  it('removes entries older than the keep time from every shard, and only those', async () => {
    const now = Date.now();
    for (let s = 0; s < 3; s++) {
      await redis.zadd(keys.taskIndex(s), now - 3_600_000, `old-${s}`, now - 10_000, `new-${s}`);
    }
    const trimmer = new IndexTrimmer({ redis, keys, keepS: () => 60 });
    expect(await trimmer.sweep(now)).toBe(3);
    for (let s = 0; s < 3; s++)
      expect(await redis.zrange(keys.taskIndex(s), 0, -1)).toEqual([`new-${s}`]);
    expect(await trimmer.sweep(now)).toBe(0);
  });
});
