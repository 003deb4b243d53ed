/**
 * registry-sync refuses to start with a task shard count under which the tasks in flight could
 * not be found, and with tasks in flight under the former key layout; finished ones do not stop it.
 */
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRegistryService } from '../index.ts';

let redis: Redis;

beforeAll(() => {
  redis = new Redis(testServices().redisUrl);
});

afterAll(async () => {
  await redis?.quit();
});

const silent = { logger: pino({ level: 'silent' }) };

/** Starts registry-sync with `taskShards` and stops it; rejects with its start-up error. */
async function startAndStop(prefix: string, taskShards: number): Promise<void> {
  const service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, taskShards },
    silent,
  );
  await service.close();
}

describe('the task shard count at start-up', () => {
  it('may change while no task is in flight, and not while one is', async () => {
    const prefix = randomPrefix();
    await startAndStop(prefix, 4);
    expect(await redis.hget(`${prefix}:settings`, 'REACH_TASK_SHARDS')).toBe('4');
    // A task in flight under 4 shards, and many finished ones.
    const four = reachKeys(prefix, { taskShards: () => 4 });
    await redis.hset(four.task('order-1'), { task_id: 'order-1', status: 'sent' });
    for (let i = 0; i < 20; i++) await redis.hset(four.task(`done-${i}`), { status: 'completed' });
    await expect(startAndStop(prefix, 2)).rejects.toThrow(
      /1 task\(s\) in flight \(e\.g\. "order-1"\) are kept under 4 task shards.*REACH_TASK_SHARDS=4/,
    );
    // The same count starts; so does another once the task is done.
    await startAndStop(prefix, 4);
    await redis.hset(four.task('order-1'), 'status', 'completed');
    await startAndStop(prefix, 2);
    expect(await redis.hget(`${prefix}:settings`, 'REACH_TASK_SHARDS')).toBe('2');
  });

  it('refuses tasks in flight under the former layout on a first start', async () => {
    const prefix = randomPrefix();
    await redis.hset(`${prefix}:{t:acme/old-1}`, { status: 'received' });
    await redis.rpush(`${prefix}:{t:acme/old-1}:tl`, '{}');
    await expect(startAndStop(prefix, 1)).rejects.toThrow(
      /"acme\/old-1".*former key layout.*Drain first/,
    );
    await redis.hset(`${prefix}:{t:acme/old-1}`, { status: 'dead' });
    await startAndStop(prefix, 1);
  });
});
