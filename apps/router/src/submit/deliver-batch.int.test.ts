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

/** An agent's record with `max` slots, its lease renewed `ago` ms before now on Redis time. */
async function agentRecord(id: string, max: number, ago = 0, status = 'HEALTHY'): Promise<void> {
  const { redis, keys } = scratch;
  const t = await redis.time();
  await redis.hset(keys.agent(id), {
    epoch: 1,
    status,
    max_concurrency: max,
    lease_at: Number(t[0]) * 1000 - ago,
  });
}

describe('deliveries of one tick to one agent', () => {
  it('go in one script call, each checked against the slots the ones before it took', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
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
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
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
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    await agentRecord('offline', 2, 0, 'OFFLINE');
    const target = { agent_id: 'offline', epoch: 1 };
    expect(await delivery.deliver(target, task('z'))).toEqual({ ok: false, refusal: 'not_live' });
    expect(await redis.xlen(keys.inbox('offline'))).toBe(0);
  });

  it('free a slot when the worker XACKs, before registry-sync applies its ack', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    await agentRecord('xacks', 2);
    await redis.xgroup('CREATE', keys.inbox('xacks'), 'workers', '$', 'MKSTREAM');
    const target = { agent_id: 'xacks', epoch: 1 };
    await Promise.all([delivery.deliver(target, task('a')), delivery.deliver(target, task('b'))]);
    expect(await delivery.deliver(target, task('c'))).toEqual({ ok: false, refusal: 'full' });

    // The worker reads both and finishes `a`: its completion is on the acks stream and the entry
    // XACKed, while no registry-sync has applied the completion (the pending hash still holds it).
    const read = (await redis.xreadgroup(
      'GROUP',
      'workers',
      'w',
      'COUNT',
      2,
      'STREAMS',
      keys.inbox('xacks'),
      '>',
    )) as [string, [string, string[]][]][];
    const [first] = read[0]?.[1] ?? [];
    await redis.xack(keys.inbox('xacks'), 'workers', first?.[0] ?? '');
    const c = await delivery.deliver(target, task('c'));
    expect(c.ok && c.inflight).toBe(2);
    expect(await redis.hlen(keys.pending('xacks'))).toBe(3);
    expect(await delivery.deliver(target, task('d'))).toEqual({ ok: false, refusal: 'full' });

    // Registry-sync applies `a` (its entry leaves the hash): nothing more frees, `b` and `c` run.
    await redis.hdel(keys.pending('xacks'), 'a');
    expect(await delivery.deliver(target, task('d'))).toEqual({ ok: false, refusal: 'full' });
  });

  it('free a slot when registry-sync applies an ack the worker never XACKed', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    await agentRecord('no-xack', 1);
    await redis.xgroup('CREATE', keys.inbox('no-xack'), 'workers', '$', 'MKSTREAM');
    const target = { agent_id: 'no-xack', epoch: 1 };
    await delivery.deliver(target, task('a'));
    await redis.xreadgroup('GROUP', 'workers', 'w', 'STREAMS', keys.inbox('no-xack'), '>');
    expect(await delivery.deliver(target, task('b'))).toEqual({ ok: false, refusal: 'full' });
    await redis.hdel(keys.pending('no-xack'), 'a');
    const b = await delivery.deliver(target, task('b'));
    expect(b.ok && b.inflight).toBe(1);
  });

  it('go to a live agent whose lease is past OFFLINE until the delivery bound', async () => {
    const { redis, keys } = scratch;
    // Last renewed 20 s ago, and still HEALTHY: no registry-sync swept it since.
    await agentRecord('unattended', 4, 20_000);
    const target = { agent_id: 'unattended', epoch: 1 };
    const within = new Delivery({ redis, keys, leaseBoundMs: 60_000 });
    expect((await within.deliver(target, task('p'))).ok).toBe(true);
    const past = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    expect(await past.deliver(target, task('q'))).toEqual({ ok: false, refusal: 'not_live' });
  });

  it('to an agent down with a shared dependency, or observing, take probes and shadow copies only', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    await agentRecord('gw-down', 4);
    await agentRecord('watching', 4);
    await redis.hset(keys.agent('watching'), 'observe', 1);
    const down = { agent_id: 'gw-down', epoch: 1 };
    const watching = { agent_id: 'watching', epoch: 1 };
    const first = await delivery.deliver(down, task('before'));
    expect(first.ok).toBe(true);
    await redis.hset(keys.agent('gw-down'), 'dependency_down', 'model-gateway');
    const [caller, probe, shadow, again] = await Promise.all([
      delivery.deliver(down, task('after')),
      delivery.deliver(down, task('probe:gw-down:1'), { probe: true }),
      delivery.deliver(down, task('copy'), { shadow: true }),
      // A re-sent command still answers its first delivery.
      delivery.deliver(down, task('before')),
    ]);
    expect(caller).toEqual({ ok: false, refusal: 'not_live' });
    expect(probe.ok).toBe(true);
    expect(shadow).toEqual({ ok: false, refusal: 'not_live' });
    expect(again.ok && again.messageId).toBe(first.ok && first.messageId);
    // A shadow copy goes to an observing agent only (refused above by a serving one), marked on
    // its entry and its pending entry; an observing agent takes no caller's task.
    const [toObserver, callerToObserver] = await Promise.all([
      delivery.deliver(watching, task('copy'), { shadow: true }),
      delivery.deliver(watching, task('real')),
    ]);
    expect(toObserver.ok).toBe(true);
    expect(callerToObserver).toEqual({ ok: false, refusal: 'not_live' });
    const entries: [string, string[]][] = await redis.xrange(keys.inbox('watching'), '-', '+');
    const fields = entries[0]?.[1] ?? [];
    expect(fields[fields.indexOf('shadow') + 1]).toBe('1');
    expect(await redis.hget(keys.pending('watching'), 'copy')).toMatch(/^1\|1\|shadow\|/);
  });
});
