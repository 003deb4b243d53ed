/**
 * Two registry-sync sweepers running at once take each task back once; slow agents are
 * ejected, but never more than the allowed share of a capability's agents.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { encodeAck, reachKeys } from '@agent-reach/protocol';
import { createRegistryService, type RegistryService } from '@agent-reach/registry-sync';
import { createRouterService, type RouterService } from '@agent-reach/router';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';

const silent = pino({ level: 'silent' });
const fast = {
  heartbeatIntervalMs: 100,
  suspectMs: 300,
  offlineMs: 600,
  sweepIntervalMs: 50,
  snapshotIntervalMs: 100,
  receiptTimeoutMs: 60_000,
};
let prefix: string;
let redis: Redis;
let router: RouterService;
const syncs: RegistryService[] = [];

beforeAll(async () => {
  prefix = randomPrefix();
  redis = new Redis(testServices().redisUrl);
  for (const id of ['sync-a', 'sync-b']) {
    syncs.push(
      await createRegistryService(
        {
          redisUrl: testServices().redisUrl,
          prefix,
          instanceId: id,
          ...fast,
          slowMs: 50,
          ejectS: 30,
          ejectMaxShare: 0.5,
        },
        { logger: silent, housekeeping: false },
      ),
    );
  }
  router = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix, offlineMs: fast.offlineMs },
    { logger: silent },
  );
});

afterAll(async () => {
  await router?.close();
  await Promise.all(syncs.map((s) => s.close()));
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const sync = (i: number) => syncs[i] as RegistryService;
const register = async (body: Record<string, unknown>) =>
  (await sync(0).app.inject({ method: 'POST', url: '/v1/agents/register', payload: body })).json<{
    token: string;
    epoch: number;
  }>();

describe('two sweepers at once', () => {
  it('re-route each task of an OFFLINE agent exactly once', async () => {
    const keys = reachKeys(prefix);
    await register({ agent_id: 'gone-1', capabilities: ['twice'], max_concurrency: 50 });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await router.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        payload: { capability: 'twice', payload: i },
      });
      expect(res.statusCode, res.body).toBe(202);
      ids.push(res.json<{ task_id: string }>().task_id);
    }
    const other = await register({
      agent_id: 'other-1',
      capabilities: ['twice'],
      max_concurrency: 50,
    });
    const beat = setInterval(() => {
      void sync(0).app.inject({
        method: 'POST',
        url: '/v1/agents/other-1/heartbeat',
        headers: { authorization: `Bearer ${other.token}` },
        payload: { inflight: 0 },
      });
    }, 50);
    try {
      // gone-1 stops heartbeating: let a lease pass make it OFFLINE, then sweep from both at once.
      await waitFor(
        async () => {
          await sync(0).housekeeper.duties.leases.sweep();
          return (await redis.hget(keys.agent('gone-1'), 'status')) === 'OFFLINE';
        },
        { timeoutMs: 5000 },
      );
      await sync(0).housekeeper.writeSnapshotNow();
      await Promise.all(syncs.map((s) => s.housekeeper.duties.snapshots.write()));
      const now = Date.now();
      await Promise.all([
        sync(0).housekeeper.duties.inflight.sweep(now),
        sync(1).housekeeper.duties.inflight.sweep(now),
      ]);
      // Any task that waits (both lost the assignment race to each other) is picked up by the due pass.
      await Promise.all([
        sync(0).housekeeper.duties.due.process(Date.now()),
        sync(1).housekeeper.duties.due.process(Date.now()),
      ]);
    } finally {
      clearInterval(beat);
    }
    for (const id of ids) {
      const res = await router.app.inject({ url: `/v1/tasks/${id}` });
      const tl = res.json<{ timeline: { stage: string; agent_id?: string }[] }>().timeline;
      expect(tl.filter((e) => e.stage === 'retried')).toHaveLength(1);
      expect(tl.filter((e) => e.stage === 'sent').map((e) => e.agent_id)).toEqual([
        'gone-1',
        'other-1',
      ]);
      expect(await redis.hget(keys.task(id), 'attempt')).toBe('2');
    }
    const delivered = await redis.xrange(keys.inbox('other-1'), '-', '+');
    const taskIds = delivered
      .map(([, f]) => f[f.indexOf('task_id') + 1])
      .filter((t) => t && !t.startsWith('probe:'));
    expect(taskIds.sort()).toEqual([...ids].sort());
    expect(await redis.hlen(keys.pending('gone-1'))).toBe(0);
  });
});

describe('slow agents', () => {
  it('are ejected after 5 slow completions in a row, at most half of a capability at once', async () => {
    const keys = reachKeys(prefix);
    const regs: { id: string; token: string; epoch: number }[] = [];
    for (const id of ['slow-1', 'slow-2', 'slow-3', 'slow-4'])
      regs.push({
        id,
        ...(await register({ agent_id: id, capabilities: ['sluggish'], max_concurrency: 10 })),
      });
    // All four report 5 slow completions (over slowMs = 50 ms): a shared slow dependency.
    for (const r of regs) {
      for (let i = 0; i < 5; i++) {
        const taskId = `${r.id}-t${i}`;
        await redis.hset(
          keys.task(taskId),
          'status',
          'received',
          'attempt',
          '1',
          'agent_id',
          r.id,
          'epoch',
          String(r.epoch),
          'capability',
          'sluggish',
        );
        await redis.xadd(
          keys.acks(),
          '*',
          ...encodeAck({
            task_id: taskId,
            stage: 'completed',
            agent_id: r.id,
            instance_id: 'x',
            epoch: r.epoch,
            attempt: 1,
            result: '1',
            duration_ms: 500,
          }),
        );
      }
    }
    await waitFor(
      async () => {
        const streaks = await Promise.all(
          regs.map((r) => redis.hget(keys.agent(r.id), 'slow_streak')),
        );
        return streaks.every((s) => s === '5');
      },
      { message: 'slow completions were not counted' },
    );
    // The execution-time EWMA routers use for the slow-node penalty is kept per capability.
    expect(Number(await redis.hget(keys.agent('slow-1'), 'ewma:sluggish'))).toBeCloseTo(500, 0);
    const ejected = await sync(0).housekeeper.duties.ejector.sweep(Date.now());
    // Four live agents, share 0.5: two ejected, two keep serving.
    expect(ejected).toHaveLength(2);
    expect(await sync(1).housekeeper.duties.ejector.sweep(Date.now())).toEqual([]);
    await sync(0).housekeeper.writeSnapshotNow();
    await router.snapshot.reload();
    const targets = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const res = await router.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        payload: { capability: 'sluggish', payload: i },
      });
      targets.add(res.json<{ agent_id: string }>().agent_id);
    }
    for (const id of ejected) expect(targets.has(id)).toBe(false);
    expect(targets.size).toBe(2);
  });
});
