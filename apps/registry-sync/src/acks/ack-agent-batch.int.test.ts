import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { defineCommands } from '../commands/index.ts';

let redis: Redis;
let keys: ReachKeys;

beforeEach(() => {
  keys = reachKeys(randomPrefix());
  redis = new Redis(testServices().redisUrl);
  defineCommands(redis);
});

afterEach(async () => {
  const left = await redis.keys(`${keys.agent('a1').split('{')[0]}*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

/** One ack's 12 arguments of ack-agent-3.lua: a completion with its capability and duration. */
const completion = (taskId: string, durationMs: number, slowMs = 100) => [
  'completed',
  taskId,
  1,
  1,
  Date.now(),
  '',
  '',
  'cap',
  durationMs,
  slowMs,
  0.5,
  0,
];

async function deliverPending(taskIds: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const t of taskIds) {
    const id = await redis.xadd(keys.inbox('a1'), '*', 'task_id', t);
    ids.push(id as string);
    await redis.hset(keys.pending('a1'), t, `1|${id}|${Date.now()}|0|0|1`);
  }
  return ids;
}

describe('ack-agent-3.lua with several acks of one agent in one call', () => {
  it('applies each ack as if alone: slots freed, inbox entries deleted, speed folded in order', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'HEALTHY', 'ewma:cap', '100');
    await deliverPending(['t1', 't2', 't3']);
    const replies = await redis.reachAckAgent(
      keys.agent('a1'),
      keys.pending('a1'),
      keys.inbox('a1'),
      ...completion('t1', 200),
      ...completion('t2', 300),
      ...completion('t3', 50),
    );
    expect(replies.map((r) => [r[0], r[3]])).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
    ]);
    expect(await redis.hlen(keys.pending('a1'))).toBe(0);
    expect(await redis.xlen(keys.inbox('a1'))).toBe(0);
    // EWMA with weight 0.5 over 100 → 200 → 300 → 50: 150, 225, 137.5.
    expect(Number(await redis.hget(keys.agent('a1'), 'ewma:cap'))).toBeCloseTo(137.5, 1);
    // Two slow completions then a fast one: the streak ends at 0.
    expect(await redis.hget(keys.agent('a1'), 'slow_streak')).toBe('0');
  });

  it('counts a slow streak across the acks of one call', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'HEALTHY', 'slow_streak', 2);
    await deliverPending(['t1', 't2']);
    await redis.reachAckAgent(
      keys.agent('a1'),
      keys.pending('a1'),
      keys.inbox('a1'),
      ...completion('t1', 500),
      ...completion('t2', 500),
    );
    expect(await redis.hget(keys.agent('a1'), 'slow_streak')).toBe('4');
  });

  it('refuses a stale epoch per ack and leaves the other acks applied', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 2, 'status', 'HEALTHY');
    await deliverPending(['t1']);
    await redis.hset(
      keys.pending('a1'),
      't2',
      `1|${(await redis.xadd(keys.inbox('a1'), '*', 'task_id', 't2')) as string}|0|0|0|2`,
    );
    const current = ['completed', 't2', 2, 1, Date.now(), '', '', '', '', 100, 0.5, 0];
    const replies = await redis.reachAckAgent(
      keys.agent('a1'),
      keys.pending('a1'),
      keys.inbox('a1'),
      ...completion('t1', 10),
      ...current,
    );
    expect(replies[0]).toEqual([-2]);
    expect(replies[1]?.[0]).toBe(0);
    expect(await redis.hkeys(keys.pending('a1'))).toEqual(['t1']);
    expect(await redis.xlen(keys.inbox('a1'))).toBe(1);
  });

  it('clears a zombie suspicion once for a batch of receipts', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'SUSPECT', 'zombie', '1');
    await deliverPending(['t1', 't2']);
    const receipt = (t: string) => ['received', t, 1, 1, Date.now(), '', '', '', '', 100, 0.5, 0];
    const replies = await redis.reachAckAgent(
      keys.agent('a1'),
      keys.pending('a1'),
      keys.inbox('a1'),
      ...receipt('t1'),
      ...receipt('t2'),
    );
    expect(replies.map((r) => r[0])).toEqual([0, 0]);
    expect(await redis.hmget(keys.agent('a1'), 'status', 'zombie')).toEqual(['HEALTHY', null]);
    // Receipts keep the slots.
    expect(await redis.hlen(keys.pending('a1'))).toBe(2);
  });
});
