import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { formatPendingEntry } from '@agent-reach/dispatch';
import { loadScripts } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { ackAgentScript, type AckAgentItem, type AckAgentReply } from '../commands/ack-agent.ts';

let redis: Redis;
let keys: ReachKeys;

beforeEach(() => {
  keys = reachKeys(randomPrefix());
  redis = new Redis(testServices().redisUrl);
  loadScripts(redis, [ackAgentScript]);
});

afterEach(async () => {
  const left = await redis.keys(`${keys.agent('a1').split('{')[0]}*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

/** One ack of ack-agent-3.lua, attempt 1 under epoch 1, with no pool and no speed. */
const ack = (stage: string, taskId: string, more: Partial<AckAgentItem> = {}): AckAgentItem => ({
  stage,
  taskId,
  epoch: 1,
  attempt: 1,
  ackAt: Date.now(),
  pool: '',
  poolEntry: '',
  capability: '',
  durationMs: '',
  slowMs: 100,
  ewmaWeight: 0.5,
  folded: 0,
  ...more,
});

/** A completion with its capability and duration. */
const completion = (taskId: string, durationMs: number, slowMs = 100) =>
  ack('completed', taskId, { capability: 'cap', durationMs, slowMs });

/** A receipt. */
const receipt = (taskId: string, more: Partial<AckAgentItem> = {}) => ack('received', taskId, more);

/** Applies `acks` of agent a1 in one call. */
const applyAcks = (...acks: AckAgentItem[]): Promise<AckAgentReply[]> =>
  ackAgentScript.run(redis, {
    keys: { agent: keys.agent('a1'), pending: keys.pending('a1'), inbox: keys.inbox('a1') },
    args: {},
    items: acks,
  });

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
    const replies = await applyAcks(
      completion('t1', 200),
      completion('t2', 300),
      completion('t3', 50),
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
    const at = { ackAt: 1234 };
    const replies = await applyAcks(
      receipt('t1', at),
      receipt('t2', at),
      completion('t1', 5),
      receipt('t2', at),
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
    await applyAcks(completion('t1', 500), completion('t2', 500));
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
    const replies = await applyAcks(completion('t1', 10), ack('completed', 't2', { epoch: 2 }));
    expect(replies[0]).toEqual({ ok: false, refusal: 'stale_epoch' });
    expect(replies[1]?.ok).toBe(true);
    expect(await redis.hkeys(keys.pending('a1'))).toEqual(['t1']);
    expect(await redis.xlen(keys.inbox('a1'))).toBe(1);
  });

  it('clears a zombie suspicion once for a batch of receipts', async () => {
    await redis.hset(keys.agent('a1'), 'epoch', 1, 'status', 'SUSPECT', 'zombie', '1');
    await deliverPending(['t1', 't2']);
    const replies = await applyAcks(receipt('t1'), receipt('t2'));
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
    const received = await applyAcks(receipt('probe:a1:1'), receipt('probe:x'));
    expect(received.map((r) => r.ok && r.probe)).toEqual([true, false]);
    expect(await redis.hget(keys.pending('a1'), 'probe:a1:1')).toMatch(
      /^1\|1\|probe\|[^|]+\|[1-9]\d*\|0$/,
    );
    const done = await applyAcks(completion('probe:a1:1', 0));
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
    const replies = await applyAcks(
      receipt('pooled', { pool: 'embed', poolEntry: '1-1' }),
      receipt('pushed'),
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
