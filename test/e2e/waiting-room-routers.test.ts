/**
 * The waiting room shared by three routers (docs/ROUTING.md, Waiting room): tasks submitted
 * round-robin through three router processes, and drained by all of them and registry-sync, are
 * served in one fair order — two tenants weighted 3:1 get 3:1 of the slots; a tenant flooding at
 * priority 9 gets its share and no more, the other tenant's priority-0 tasks keep theirs; and
 * within one tenant's fairness key the priority-9 tasks all go before the priority-0 ones.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { onFreePort, waitFor, type ServiceProcess } from '@agent-reach/testkit';
import {
  FAST_LEASES,
  http,
  isErrorLine,
  startRouter,
  startStack,
  type Stack,
} from '../support/stack.ts';
import {
  flood as floodRoom,
  makeCallerKey,
  setTenant,
  sleep,
  startRoomAgent,
} from '../support/room.ts';

const ADMIN = 'e2e-admin-key-of-the-room-routers-test-0123456789';
let stack: Stack;
/** The two routers started beside the stack's own. */
const more: ServiceProcess[] = [];
/** The three routers' URLs, in the order submissions go round them. */
const routers: string[] = [];
/** Error lines of the two more routers (the stack keeps its own). */
const moreErrors: string[] = [];
const agents: ReachAgent[] = [];
const key: Record<string, string> = {};
/** What each task an agent ran carried in `payload.t`, by capability, in the order they started. */
const served = new Map<string, string[]>();
let turn = 0;

const as = (who: string) => ({ authorization: `Bearer ${key[who] ?? ADMIN}` });

const makeKey = (tenant: string) => makeCallerKey(stack, ADMIN, tenant);
const setWeight = (tenant: string, weight: number) => setTenant(stack, ADMIN, tenant, { weight });

/** A shared agent of `capability` (one process, `slots` slots) whose tasks take `ms`. */
async function startAgent(capability: string, slots: number, ms: number): Promise<void> {
  const log: string[] = [];
  served.set(capability, log);
  agents.push(
    await startRoomAgent({ stack, admin: ADMIN, capability, slots, log, run: () => sleep(ms) }),
  );
}

/**
 * Submits `count` tasks of `who` in batches of at most 300, each batch through the next router
 * round-robin; returns the statuses answered.
 */
const flood = (who: string, count: number, task: (i: number) => Record<string, unknown>) =>
  floodRoom(() => routers[turn++ % routers.length] as string, key[who] ?? ADMIN, count, task, 300);

/** Waits until `n` tasks of `capability` have started; returns the first `n`. */
async function firstServed(capability: string, n: number): Promise<string[]> {
  await waitFor(() => (served.get(capability)?.length ?? 0) >= n, {
    timeoutMs: 60_000,
    intervalMs: 100,
    message: `${n} tasks of ${capability} served`,
  });
  return (served.get(capability) ?? []).slice(0, n);
}

const shareOf = (first: readonly string[], t: string) =>
  first.filter((x) => x === t).length / first.length;

async function queuedIn(capability: string): Promise<number | undefined> {
  const stats = await http<{ queues: { capability: string; queued: number }[] }>(
    `${routers[turn % routers.length] as string}/v1/queues`,
    { headers: as('admin') },
  );
  return stats.body.queues.find((q) => q.capability === capability)?.queued;
}

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN },
  });
  routers.push(stack.routerUrl);
  const onLine = (line: string) => {
    if (isErrorLine(line)) moreErrors.push(line);
  };
  for (let i = 0; i < 2; i++) {
    const { port, started } = await onFreePort(`router-${i + 2}`, (p) =>
      startRouter(stack.env, p, onLine),
    );
    more.push(started);
    routers.push(`http://127.0.0.1:${port}`);
  }
  for (const t of ['heavy', 'light', 'x', 'y', 'z']) key[t] = await makeKey(t);
  await setWeight('heavy', 3);
  await setWeight('light', 1);
}, 120_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  const codes = await Promise.all(more.map((r) => r.stop()));
  expect(codes).toEqual(more.map(() => 0));
  expect([...(stack?.errorLines() ?? []), ...moreErrors]).toEqual([]);
  await stack?.stop();
}, 60_000);

describe('the waiting room behind three routers', () => {
  it('serves two tenants 3:1 by their weights when their tasks came through three routers', async () => {
    // Interleaved, so neither tenant's tasks are all ahead of the other's by arrival.
    const statuses: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (const t of ['heavy', 'light']) {
        statuses.push(
          ...(await flood(t, 500, (i) => ({
            capability: 'three-routers',
            payload: { t, i },
            timeout_s: 300,
          }))),
        );
      }
    }
    expect(new Set(statuses)).toEqual(new Set(['queued']));
    expect(await queuedIn('three-routers')).toBe(4000);
    await startAgent('three-routers', 8, 5);
    // Both tenants wait throughout the first 2,000: heavy gets 3 turns for each of light's.
    const heavy = shareOf(await firstServed('three-routers', 2000), 'heavy');
    console.log(`three routers: heavy's share of the first 2,000 served: ${heavy.toFixed(3)}`);
    expect(heavy).toBeGreaterThanOrEqual(0.7);
    expect(heavy).toBeLessThanOrEqual(0.8);
  }, 150_000);

  it('gives a tenant flooding at priority 9 its equal share and no more', async () => {
    for (let round = 0; round < 2; round++) {
      for (const [t, priority] of [
        ['x', 9],
        ['y', 0],
      ] as const) {
        const statuses = await flood(t, 300, (i) => ({
          capability: 'prio-tenants',
          payload: { t, i },
          priority,
          timeout_s: 300,
        }));
        expect(new Set(statuses)).toEqual(new Set(['queued']));
      }
    }
    expect(await queuedIn('prio-tenants')).toBe(1200);
    await startAgent('prio-tenants', 8, 5);
    const y = shareOf(await firstServed('prio-tenants', 600), 'y');
    console.log(`priority rule: y's (priority 0) share of the first 600 served: ${y.toFixed(3)}`);
    expect(y).toBeGreaterThanOrEqual(0.45);
    expect(y).toBeLessThanOrEqual(0.55);
  }, 120_000);

  // The room hands tasks out in priority order, but each process (three routers and
  // registry-sync here) takes tasks for the slots it sees free, less those its lanes hold: while
  // the agent is full, every priority-9 task left may be held at once and given back, so a
  // priority-0 task can be taken, and sent, that many places early: at most the agent's 8 slots
  // per process, 32 in all.
  it('serves a tenant’s priority-9 tasks before its priority-0 ones in one fairness key, give or take the tasks its lanes hold', async () => {
    for (const priority of [0, 9]) {
      const statuses = await flood('z', 50, (i) => ({
        capability: 'prio-within',
        payload: { t: `p${priority}`, i },
        priority,
        fairness_key: 'one-user',
        timeout_s: 300,
      }));
      expect(new Set(statuses)).toEqual(new Set(['queued']));
    }
    await startAgent('prio-within', 8, 5);
    const first = await firstServed('prio-within', 100);
    const early = first.flatMap((t, i) => (t === 'p0' && i < 50 ? [i] : []));
    console.log(
      `priority within a key: priority-0 tasks served among the first 50 at ${JSON.stringify(early)}`,
    );
    expect(
      early.filter((i) => i < 50 - 4 * 8),
      'priority-0 tasks served more places early than the lanes of four processes',
    ).toEqual([]);
  }, 60_000);
});
