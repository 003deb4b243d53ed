import { describe, expect, it } from 'vitest';
import type { TaskMessage } from '@agent-reach/protocol';
import { Delivery } from '@agent-reach/dispatch';
import { useScratchRedis } from '../testing/scratch-redis.ts';

const scratch = useScratchRedis();

const task = (taskId: string, attempt = 1): TaskMessage => ({
  task_id: taskId,
  capability: 'cap',
  payload: '{"n":1}',
  attempt,
  trace_id: 'trace',
  callback_topic: '',
  deadline_ms: 0,
});

describe('deliveries of one tick to one agent', () => {
  it('go in one script call, each checked against the slots the ones before it took', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, offlineMs: 15_000 });
    const t = await redis.time();
    await redis.hset(
      keys.agent('full-soon'),
      'epoch',
      3,
      'status',
      'HEALTHY',
      'max_concurrency',
      2,
      'lease_at',
      Number(t[0]) * 1000,
    );
    const target = { agent_id: 'full-soon', epoch: 3 };
    const results = await Promise.all([
      delivery.deliver(target, task('a')),
      delivery.deliver(target, task('b')),
      delivery.deliver(target, task('c')),
    ]);
    expect(results.map((r) => (r.ok ? r.inflight : r.refusal))).toEqual([1, 2, 'full']);
    expect(await redis.xlen(keys.inbox('full-soon'))).toBe(2);
    expect((await redis.hkeys(keys.pending('full-soon'))).sort()).toEqual(['a', 'b']);

    // The same attempt again (a re-sent command) answers the first delivery; a stale epoch is refused.
    const [again, stale] = await Promise.all([
      delivery.deliver(target, task('a')),
      delivery.deliver({ agent_id: 'full-soon', epoch: 2 }, task('d')),
    ]);
    expect(again.ok && again.messageId).toBe(results[0]?.ok && results[0].messageId);
    expect(stale).toEqual({ ok: false, refusal: 'stale_epoch' });
    expect(await redis.xlen(keys.inbox('full-soon'))).toBe(2);
  });

  it('to an agent that is gone, are each refused', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, offlineMs: 15_000 });
    const target = { agent_id: 'never-was', epoch: 1 };
    const results = await Promise.all([
      delivery.deliver(target, task('x')),
      delivery.deliver(target, task('y')),
    ]);
    expect(results).toEqual([
      { ok: false, refusal: 'unknown_agent' },
      { ok: false, refusal: 'unknown_agent' },
    ]);
  });

  it('to an agent that is not live, are each refused', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, offlineMs: 15_000 });
    const t = await redis.time();
    await redis.hset(keys.agent('offline'), {
      epoch: 1,
      status: 'OFFLINE',
      max_concurrency: 2,
      lease_at: Number(t[0]) * 1000,
    });
    const target = { agent_id: 'offline', epoch: 1 };
    expect(await delivery.deliver(target, task('z'))).toEqual({ ok: false, refusal: 'not_live' });
    expect(await redis.xlen(keys.inbox('offline'))).toBe(0);
  });
});
