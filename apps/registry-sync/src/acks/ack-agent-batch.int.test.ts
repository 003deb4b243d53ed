import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { formatPendingEntry } from '@agent-reach/dispatch';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { decodeAckAgentReplies, defineCommands } from '../commands/index.ts';

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

/** What deliver-3.lua writes for attempt 1 under `epoch`. */
const entry = (id: string, epoch = 1, probe = false) =>
  formatPendingEntry({ attempt: 1, epoch, messageId: id, receivedAt: 0, deadlineMs: 0, probe });

async function deliverPending(taskIds: string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const t of taskIds) {
    const id = await redis.xadd(keys.inbox('a1'), '*', 'task_id', t);
    ids.push(id as string);
    await redis.hset(keys.pending('a1'), t, entry(id as string));
  }
  return ids;
}

describe('ack-agent-3.lua with several acks of one agent in one call', () => {
  it('applies each ack as if alone: slots freed, inbox entries deleted, speed folded in order', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'HEALTHY', 'ewma:cap', '100');
    await deliverPending(['t1', 't2', 't3']);
    const replies = decodeAckAgentReplies(
      await redis.reachAckAgent(
        keys.agent('a1'),
        keys.pending('a1'),
        keys.inbox('a1'),
        ...completion('t1', 200),
        ...completion('t2', 300),
        ...completion('t3', 50),
      ),
    );
    expect(replies.map((r) => r.ok && r.speedTracked)).toEqual([true, true, true]);
    expect(await redis.hlen(keys.pending('a1'))).toBe(0);
    expect(await redis.xlen(keys.inbox('a1'))).toBe(0);
    // EWMA with weight 0.5 over 100 → 200 → 300 → 50: 150, 225, 137.5.
    expect(Number(await redis.hget(keys.agent('a1'), 'ewma:cap'))).toBeCloseTo(137.5, 1);
    // Two slow completions then a fast one: the streak ends at 0.
    expect(await redis.hget(keys.agent('a1'), 'slow_streak')).toBe('0');
  });

  it('applies a receipt and the completion of the same task in one call, in order', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'HEALTHY');
    const [id] = await deliverPending(['t1', 't2']);
    const receipt = (t: string) => ['received', t, 1, 1, 1234, '', '', '', '', 100, 0.5, 0];
    const replies = decodeAckAgentReplies(
      await redis.reachAckAgent(
        keys.agent('a1'),
        keys.pending('a1'),
        keys.inbox('a1'),
        ...receipt('t1'),
        ...receipt('t2'),
        ...completion('t1', 5),
        ...receipt('t2'),
      ),
    );
    expect(replies.map((r) => r.ok && r.entryId)).toEqual([
      id,
      expect.any(String),
      id,
      expect.any(String),
    ]);
    expect(await redis.hkeys(keys.pending('a1'))).toEqual(['t2']);
    expect(await redis.hget(keys.pending('a1'), 't2')).toMatch(/^1\|1\|\|[^|]+\|1234\|0$/);
    expect(await redis.xlen(keys.inbox('a1'))).toBe(1);
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
      entry((await redis.xadd(keys.inbox('a1'), '*', 'task_id', 't2')) as string, 2),
    );
    const current = ['completed', 't2', 2, 1, Date.now(), '', '', '', '', 100, 0.5, 0];
    const replies = decodeAckAgentReplies(
      await redis.reachAckAgent(
        keys.agent('a1'),
        keys.pending('a1'),
        keys.inbox('a1'),
        ...completion('t1', 10),
        ...current,
      ),
    );
    expect(replies[0]).toEqual({ ok: false, refusal: 'stale_epoch' });
    expect(replies[1]?.ok).toBe(true);
    expect(await redis.hkeys(keys.pending('a1'))).toEqual(['t1']);
    expect(await redis.xlen(keys.inbox('a1'))).toBe(1);
  });

  it('clears a zombie suspicion once for a batch of receipts', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'SUSPECT', 'zombie', '1');
    await deliverPending(['t1', 't2']);
    const receipt = (t: string) => ['received', t, 1, 1, Date.now(), '', '', '', '', 100, 0.5, 0];
    const replies = decodeAckAgentReplies(
      await redis.reachAckAgent(
        keys.agent('a1'),
        keys.pending('a1'),
        keys.inbox('a1'),
        ...receipt('t1'),
        ...receipt('t2'),
      ),
    );
    expect(replies.map((r) => r.ok)).toEqual([true, true]);
    expect(await redis.hmget(keys.agent('a1'), 'status', 'zombie')).toEqual(['HEALTHY', null]);
    // Receipts keep the slots.
    expect(await redis.hlen(keys.pending('a1'))).toBe(2);
  });

  it('knows a probe by its pending entry: the mark survives the receipt, and a probe records no speed', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'HEALTHY', 'slow_streak', 3);
    const [probeEntry] = await deliverPending(['probe:a1:1', 'probe:x']);
    // What deliver-3.lua writes for a probe; 'probe:x' is a caller's task with a probe-like id.
    await redis.hset(keys.pending('a1'), 'probe:a1:1', entry(probeEntry as string, 1, true));
    const receipt = (t: string) => ['received', t, 1, 1, Date.now(), '', '', '', '', 100, 0.5, 0];
    const received = decodeAckAgentReplies(
      await redis.reachAckAgent(
        keys.agent('a1'),
        keys.pending('a1'),
        keys.inbox('a1'),
        ...receipt('probe:a1:1'),
        ...receipt('probe:x'),
      ),
    );
    expect(received.map((r) => r.ok && r.probe)).toEqual([true, false]);
    expect(await redis.hget(keys.pending('a1'), 'probe:a1:1')).toMatch(
      /^1\|1\|probe\|[^|]+\|[1-9]\d*\|0$/,
    );
    const done = decodeAckAgentReplies(
      await redis.reachAckAgent(
        keys.agent('a1'),
        keys.pending('a1'),
        keys.inbox('a1'),
        ...completion('probe:a1:1', 0),
      ),
    );
    expect(done[0]).toMatchObject({ ok: true, probe: true, speedTracked: false });
    expect(await redis.hmget(keys.agent('a1'), 'slow_streak', 'ewma:cap')).toEqual(['3', null]);
  });

  it('hands the agent’s placement to the task step for an ack that may take a pooled task', async () => {
    await redis.hset(
      keys.agent('a1'),
      'epoch',
      1,
      'status',
      'HEALTHY',
      'region',
      'us',
      'tags',
      '["gpu"]',
      'capabilities',
      '["embed"]',
    );
    await deliverPending(['pushed']);
    const ack = (stage: string, t: string, pool = '', entry = '') => [
      stage,
      t,
      1,
      1,
      Date.now(),
      pool,
      entry,
      '',
      '',
      100,
      0.5,
      0,
    ];
    const replies = decodeAckAgentReplies(
      await redis.reachAckAgent(
        keys.agent('a1'),
        keys.pending('a1'),
        keys.inbox('a1'),
        ...ack('received', 'pooled', 'embed', '1-1'),
        ...ack('received', 'pushed'),
      ),
    );
    expect(replies[0]).toMatchObject({
      ok: true,
      placement: { region: 'us', tags: ['gpu'], capabilities: ['embed'] },
    });
    // An inbox delivery: the router chose this agent.
    expect(replies[1]).not.toHaveProperty('placement');
    expect(await redis.hget(keys.pending('a1'), 'pooled')).toMatch(
      /^1\|1\|pool=embed\|1-1\|\d+\|0$/,
    );
  });
});
