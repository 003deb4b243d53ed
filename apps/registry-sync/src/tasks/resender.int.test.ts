/**
 * A retry whose send failed after it took over its due entry (a command refused during a Redis
 * failover) is not left in `retry_wait` for good: its watchdog entry brings the task's own entry
 * back, and the next sweep takes it on (here, with no agent serving it, to the dead letters).
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachKeys, watchdogMember, type ReachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

let redis: Redis;
let keys: ReachKeys;
let service: RegistryService;

beforeAll(async () => {
  const prefix = randomPrefix();
  keys = reachKeys(prefix);
  redis = new Redis(testServices().redisUrl);
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, sweepIntervalMs: 50, noAgentWaitMs: 1000 },
    { logger: pino({ level: 'silent' }) },
  );
}, 30_000);

afterAll(async () => {
  await service?.close();
  await redis?.quit();
});

describe('a retry whose send failed midway', () => {
  it('leaves retry_wait: its own due entry comes back and a sweep takes it on', async () => {
    const taskId = 'stuck-retry-1';
    const now = Date.now();
    // What a send that failed after DueWatch.takeOver leaves: the task waits for its retry, and
    // the due set holds only the watchdog entry over that send (the task's own entry is gone).
    await redis.hset(keys.task(taskId), {
      status: 'retry_wait',
      capability: 'nobody-serves-this',
      payload: '{}',
      attempt: '1',
      due_at: String(now - 5000),
      created_at: String(now - 6000),
    });
    await redis.zadd(keys.dueOf(taskId), now - 100, watchdogMember(taskId));

    await waitFor(async () => (await redis.hget(keys.task(taskId), 'status')) !== 'retry_wait', {
      timeoutMs: 8000,
    });
    expect(await redis.hget(keys.task(taskId), 'status')).toBe('dead');
    expect(await redis.zscore(keys.dueOf(taskId), watchdogMember(taskId))).toBeNull();
  }, 20_000);
});
