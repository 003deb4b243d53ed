import { afterAll, beforeAll } from 'vitest';
import { Redis } from 'ioredis';
import { reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { DISPATCH_SCRIPTS } from '@agent-reach/dispatch';
import { loadScripts } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { pushConfigSaveScript } from '../a2a/push-config-save.ts';
import { inflightTakeScript } from '../quotas/inflight-take.ts';

/**
 * A connection to the test Redis with the dispatch scripts and the router's own, and keys under a
 * prefix of its own.
 */
export interface ScratchRedis {
  readonly redis: Redis;
  readonly keys: ReachKeys;
}

/**
 * For a test file that calls the dispatch scripts directly: connects before its tests, and
 * deletes every key under its prefix and disconnects after them.
 */
export function useScratchRedis(): ScratchRedis {
  let redis: Redis | undefined;
  let prefix = '';
  beforeAll(() => {
    prefix = randomPrefix();
    redis = new Redis(testServices().redisUrl);
    loadScripts(redis, [
      ...Object.values(DISPATCH_SCRIPTS),
      pushConfigSaveScript,
      inflightTakeScript,
    ]);
  });
  afterAll(async () => {
    if (!redis) return;
    const left = await redis.keys(`${prefix}:*`);
    if (left.length > 0) await redis.del(...left);
    await redis.quit();
  });
  return {
    get redis() {
      if (!redis) throw new Error('useScratchRedis: the connection exists inside tests only');
      return redis;
    },
    get keys() {
      return reachKeys(prefix);
    },
  };
}
