/**
 * The waiting room feeds the pull pools, end to end on real Redis: a pool holds at most twice its
 * pull agents' slots, the rest waits in the room and reaches the pool in fair order (a small
 * fairness key is not stuck behind a big one that came first), and `mode: "batch"` tasks that
 * waited in the room still go to the pool, never to the push agent beside it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { poolStreams, WORKER_GROUP } from '@agent-reach/protocol';
import { startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { sleep } from '../support/room.ts';

let stack: Stack;
let redis: TestRedis;
const agents: ReachAgent[] = [];

beforeAll(async () => {
  stack = await startStack({ env: FAST_LEASES });
  redis = connectRedis(stack);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await redis?.quit();
  await stack?.stop();
});

type BatchReply = { results: { http_status: number; status?: string; task_id?: string }[] };

/** Submits `tasks` in one batch request; returns each item's status (or HTTP status). */
async function submit(tasks: Record<string, unknown>[]): Promise<string[]> {
  const res = await http<BatchReply>(`${stack.routerUrl}/v1/tasks/batch`, { body: { tasks } });
  expect(res.status).toBe(200);
  return res.body.results.map((r) => r.status ?? String(r.http_status));
}

/**
 * Entries in a pool, all bands: tasks waiting for a pull agent or being worked by one — the
 * workers group's pending entries plus its lag, as the feeders count them (pool-depth-3.lua). Not
 * XLEN: an entry its agent acknowledged stays in the stream until registry-sync applies the
 * completion and deletes it, a few ms later or more on a loaded machine.
 */
async function depth(pool: string): Promise<number> {
  let n = 0;
  for (const stream of poolStreams(stack.keys, pool)) {
    if (!(await redis.exists(stream))) continue;
    const groups = (await redis.xinfo('GROUPS', stream)) as unknown[][];
    for (const g of groups) {
      const f = new Map<string, unknown>();
      for (let i = 0; i < g.length; i += 2) f.set(String(g[i]), g[i + 1]);
      if (f.get('name') !== WORKER_GROUP) continue;
      const lag = f.get('lag');
      n += Number(f.get('pending'));
      n +=
        typeof lag === 'number'
          ? lag
          : (await redis.xrange(stream, `(${String(f.get('last-delivered-id'))}`, '+')).length;
    }
  }
  return n;
}

/** Samples a pool's depth every few ms until stopped; resolves to the deepest seen. */
function watchDepth(pool: string): { stop: () => Promise<number> } {
  let deepest = 0;
  let on = true;
  const loop = (async () => {
    while (on) {
      deepest = Math.max(deepest, await depth(pool));
      await sleep(5);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return deepest;
    },
  };
}

describe('the waiting room feeds pull pools', () => {
  it('keeps a pool shallow and fills it in fair order', async () => {
    const log: string[] = [];
    agents.push(
      await startAgent(
        stack,
        'fair-puller',
        ['fairpool'],
        async (t) => {
          log.push((t.payload as { t: string }).t);
          await sleep(40);
          return { ok: true };
        },
        { channel: 'pull', maxConcurrency: 2 },
      ),
    );
    const watch = watchDepth('fairpool');
    const task = (t: string) => ({
      capability: 'fairpool',
      payload: { t },
      fairness_key: t,
      timeout_s: 120,
    });
    const big = await submit(Array.from({ length: 150 }, () => task('big')));
    const small = await submit(Array.from({ length: 20 }, () => task('small')));
    // The first few go straight to the pool; the rest wait in the room for it to have room.
    expect(big.filter((s) => s === 'queued').length).toBeGreaterThan(100);
    expect(small.every((s) => s === 'queued')).toBe(true);
    await waitFor(() => log.length >= 170, { timeoutMs: 60_000, intervalMs: 50 });
    const deepest = await watch.stop();
    console.log(`pool fed from the room: deepest ${deepest} entries for a bound of 4 per feeder`);
    // Twice the agent's 2 slots, per feeding process (the router and registry-sync each read the
    // depth at most 20 ms old): a pool fed straight would have held all 170.
    expect(deepest).toBeLessThanOrEqual(8);
    // Alternating keys: the 20 small tasks are done within about 40 starts of their arrival, not
    // after the 150 big ones that came first, as a FIFO pool would run them.
    const lastSmall = log.lastIndexOf('small');
    expect(lastSmall).toBeLessThan(100);
    expect(log.filter((t) => t === 'small')).toHaveLength(20);
    await waitFor(async () => (await depth('fairpool')) === 0, { timeoutMs: 10_000 });
  });

  it('sends a batch task that waited in the room to the pool, not to a push agent', async () => {
    let pushed = 0;
    const pulled: number[] = [];
    agents.push(
      await startAgent(stack, 'mixed-pusher', ['mixedroom'], async () => {
        pushed++;
        return { ok: true };
      }),
      await startAgent(
        stack,
        'mixed-puller',
        ['mixedroom'],
        async (t) => {
          pulled.push((t.payload as { n: number }).n);
          await sleep(100);
          return { ok: true };
        },
        { channel: 'pull', maxConcurrency: 1 },
      ),
    );
    // The router routes from its snapshot: it must know the pull agent, or the pool has no reader.
    await waitFor(async () =>
      JSON.stringify(
        (await http(`${stack.routerUrl}/v1/route?capability=mixedroom`)).body,
      ).includes('mixed-puller'),
    );
    const statuses = await submit(
      Array.from({ length: 10 }, (_, n) => ({
        capability: 'mixedroom',
        payload: { n },
        mode: 'batch',
        timeout_s: 60,
      })),
    );
    // A pool for one slot holds two: the rest wait in the room.
    expect(statuses.filter((s) => s === 'queued').length).toBeGreaterThanOrEqual(6);
    await waitFor(() => pulled.length === 10, { timeoutMs: 20_000, intervalMs: 50 });
    expect([...pulled].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(pushed).toBe(0);
  });
});
