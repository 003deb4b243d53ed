/**
 * The waiting room (docs/ROUTING.md, Waiting room) with real services and keys: tasks that find no
 * free slot are accepted as `queued` and sent as slots free, in weighted fair order across
 * tenants (their records' weights) and across fairness keys within a tenant; a room is bounded
 * (429 QUEUE_FULL); a task still waiting at its deadline is dead-lettered once; a capability
 * never seen without `timeout_s` still answers 503 NO_AGENT.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { hold } from '../support/hold.ts';
import {
  flood as floodRoom,
  makeCallerKey,
  setTenant as setTenantRecord,
  sleep,
  startRoomAgent,
} from '../support/room.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = 'e2e-admin-key-of-the-waiting-room-test-0123456789';
let stack: Stack;
const agents: ReachAgent[] = [];
const key: Record<string, string> = {};
/** The tenant of each task an agent ran, in the order they started. */
const served = new Map<string, string[]>();
const held = hold();
/** Holds the tasks of tenant `narrow` (its own, so the others' hold stays). */
const narrowHeld = hold();

const as = (who: string) => ({ authorization: `Bearer ${key[who] ?? ADMIN}` });

const makeKey = (tenant: string) => makeCallerKey(stack, ADMIN, tenant);
const setTenant = (tenant: string, body: Record<string, unknown>) =>
  setTenantRecord(stack, ADMIN, tenant, body);

/** A shared agent of `capability` whose tasks take `ms` (or wait for the hold). */
async function startAgent(capability: string, slots: number, ms: number): Promise<void> {
  const log: string[] = [];
  served.set(capability, log);
  agents.push(
    await startRoomAgent({
      stack,
      admin: ADMIN,
      capability,
      slots,
      log,
      run: async (p) => {
        if (p.hold) await (p.t === 'narrow' ? narrowHeld : held).wait;
        else await sleep(ms);
      },
    }),
  );
}

/** Submits `count` tasks of `who` in batches of 500; returns the statuses answered. */
const flood = (who: string, count: number, task: (i: number) => Record<string, unknown>) =>
  floodRoom(() => stack.routerUrl, key[who] ?? ADMIN, count, task);

/** The share of `tenant` among the first `n` tasks served of `capability`. */
function shareOf(capability: string, tenant: string, n: number): number {
  const first = (served.get(capability) ?? []).slice(0, n);
  return first.filter((t) => t === tenant).length / first.length;
}

type TaskView = {
  status: string;
  dead_reason?: string;
  timeline: { stage: string; reason?: string; routing?: { reason?: string } }[];
};

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN },
  });
  for (const t of ['heavy', 'light', 'many', 'one', 'capped', 'narrow']) key[t] = await makeKey(t);
  await setTenant('heavy', { weight: 3 });
  await setTenant('light', { weight: 1 });
  await setTenant('capped', { max_queued: 3 });
  await setTenant('narrow', { max_inflight: 2 });
}, 60_000);

afterAll(async () => {
  held.release();
  narrowHeld.release();
  await Promise.all(agents.map((a) => a.close()));
  expect(stack?.errorLines() ?? []).toEqual([]);
  await stack?.stop();
});

describe('the waiting room', () => {
  it('queues tasks while no agent is live, then serves two tenants 3:1 by their weights', async () => {
    // Interleaved, so neither tenant's tasks are all ahead of the other's by arrival.
    const statuses: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (const t of ['heavy', 'light']) {
        statuses.push(
          ...(await flood(t, 500, (i) => ({
            capability: 'shared-gpu',
            payload: { t, i },
            timeout_s: 300,
          }))),
        );
      }
    }
    expect(new Set(statuses)).toEqual(new Set(['queued']));
    const stats = await http<{ queues: { capability: string; queued: number }[] }>(
      `${stack.routerUrl}/v1/queues`,
      { headers: as('admin') },
    );
    expect(stats.body.queues.find((q) => q.capability === 'shared-gpu')?.queued).toBe(4000);
    // GET /v1/stats gives the same figures beside the window's, per tenant of the room.
    const withStats = await http<{
      queues: { capability: string; tenants: { tenant: string; queued: number }[] }[];
    }>(`${stack.routerUrl}/v1/stats?capability=shared-gpu`, { headers: as('admin') });
    expect(withStats.status).toBe(200);
    const room = withStats.body.queues.find((q) => q.capability === 'shared-gpu');
    expect(room?.tenants.map((t) => [t.tenant, t.queued]).sort()).toEqual([
      ['heavy', 2000],
      ['light', 2000],
    ]);
    await startAgent('shared-gpu', 8, 5);
    await waitFor(() => (served.get('shared-gpu')?.length ?? 0) >= 2000, {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    // Both tenants wait throughout the first 2,000: heavy gets 3 turns for each of light's.
    console.log(
      `room: weights 3:1, heavy's share of the first 2,000 served ${shareOf('shared-gpu', 'heavy', 2000)}`,
    );
    expect(shareOf('shared-gpu', 'heavy', 2000)).toBeGreaterThanOrEqual(0.7);
    expect(shareOf('shared-gpu', 'heavy', 2000)).toBeLessThanOrEqual(0.8);
  }, 120_000);

  it('gives a tenant spreading its tasks over 1,000 fairness keys the share it has with one key', async () => {
    for (let round = 0; round < 2; round++) {
      await flood('many', 1000, (i) => ({
        capability: 'keyed',
        payload: { t: 'many', i },
        timeout_s: 300,
        fairness_key: `user-${i % 1000}`,
      }));
      await flood('one', 1000, (i) => ({
        capability: 'keyed',
        payload: { t: 'one', i },
        timeout_s: 300,
        fairness_key: 'the-only-user',
      }));
    }
    await startAgent('keyed', 8, 5);
    await waitFor(() => (served.get('keyed')?.length ?? 0) >= 2000, {
      timeoutMs: 60_000,
      intervalMs: 100,
    });
    console.log(
      `room: 1,000 keys against 1, their share of the first 2,000 served ${shareOf('keyed', 'many', 2000)}`,
    );
    expect(shareOf('keyed', 'many', 2000)).toBeGreaterThanOrEqual(0.45);
    expect(shareOf('keyed', 'many', 2000)).toBeLessThanOrEqual(0.55);
  }, 120_000);

  it('holds a tenant to its max_inflight slots of a capability, the rest waiting their turn', async () => {
    await startAgent('roomy', 8, 5);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await http<{ task_id: string; status: string }>(`${stack.routerUrl}/v1/tasks`, {
        body: { capability: 'roomy', payload: { t: 'narrow', hold: true } },
        headers: as('narrow'),
      });
      expect(res.status).toBe(202);
      ids.push(res.body.task_id);
    }
    await waitFor(() => (served.get('roomy')?.length ?? 0) === 2, { timeoutMs: 10_000 });
    // The agent has 6 free slots, yet the other 3 wait: the room says so.
    const room = await waitFor(
      async () => {
        const q = await http<{ queues: { capability: string; queued: number }[] }>(
          `${stack.routerUrl}/v1/queues?capability=roomy`,
          { headers: as('narrow') },
        );
        return q.body.queues[0]?.queued === 3 ? q.body.queues[0] : undefined;
      },
      { timeoutMs: 5000 },
    );
    expect(room.queued).toBe(3);
    expect(served.get('roomy')).toHaveLength(2);
    // Once its tasks finish, the rest are sent.
    narrowHeld.release();
    await waitFor(
      async () => {
        for (const id of ids) {
          const v = await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`, {
            headers: as('narrow'),
          });
          if (v.body.status !== 'completed') return false;
        }
        return true;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(served.get('roomy')).toHaveLength(5);
  }, 60_000);

  it('answers 503 NO_AGENT for a capability never seen and submitted without timeout_s', async () => {
    const res = await http(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'mistyped-capabilty', payload: {} },
      headers: as('one'),
    });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'NO_AGENT' });
  });

  it('answers 429 QUEUE_FULL past a tenant’s max_queued, storing nothing, until one leaves', async () => {
    const replies = [];
    for (let i = 0; i < 4; i++) {
      replies.push(
        await http<{ status?: string; error?: string; task_id: string }>(
          `${stack.routerUrl}/v1/tasks`,
          {
            body: { task_id: `capped-${i}`, capability: 'nobody-yet', payload: {}, timeout_s: 60 },
            headers: as('capped'),
          },
        ),
      );
    }
    expect(replies.map((r) => r.status)).toEqual([202, 202, 202, 429]);
    expect(replies[3]?.body).toMatchObject({ error: 'QUEUE_FULL', task_id: 'capped-3' });
    expect(replies[3]?.headers.get('retry-after')).toBeTruthy();
    const missing = await http(`${stack.routerUrl}/v1/tasks/capped-3`, { headers: as('capped') });
    expect(missing.status).toBe(404);
    // A cancelled task leaves the room: its place goes to the next submission.
    const cancel = await http(`${stack.routerUrl}/v1/tasks/capped-0/cancel`, {
      method: 'POST',
      headers: as('capped'),
    });
    expect(cancel.status).toBe(202);
    const again = await http<{ status: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'capped-3', capability: 'nobody-yet', payload: {}, timeout_s: 60 },
      headers: as('capped'),
    });
    expect([again.status, again.body.status]).toEqual([202, 'queued']);
  });

  it('dead-letters a task still waiting at its deadline once, its timeline showing the wait', async () => {
    await startAgent('busy', 1, 5);
    const blocker = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'busy', payload: { hold: true } },
      headers: as('one'),
    });
    expect(blocker.status).toBe(202);
    const late = await http<{ task_id: string; status: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'busy', payload: {}, timeout_s: 1 },
      headers: as('one'),
    });
    expect(late.body.status).toBe('queued');
    const dead = await waitFor(
      async () => {
        const v = await http<TaskView>(`${stack.routerUrl}/v1/tasks/${late.body.task_id}`, {
          headers: as('one'),
        });
        return v.body.status === 'dead' ? v.body : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(dead.dead_reason).toBe('deadline');
    expect(dead.timeline.map((e) => e.stage)).toEqual(['accepted', 'queued', 'dead']);
    const dlq = await http<{ items: { task_id: string }[] }>(
      `${stack.routerUrl}/v1/dlq?capability=busy`,
      { headers: as('one') },
    );
    expect(dlq.body.items.map((i) => i.task_id)).toEqual([late.body.task_id]);
    // With no agent at all, the reason says so.
    const nobody = await http<{ task_id: string; status: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'nobody-ever', payload: {}, timeout_s: 1 },
      headers: as('one'),
    });
    expect(nobody.body.status).toBe('queued');
    const gone = await waitFor(
      async () => {
        const v = await http<TaskView>(`${stack.routerUrl}/v1/tasks/${nobody.body.task_id}`, {
          headers: as('one'),
        });
        return v.body.status === 'dead' ? v.body : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 200 },
    );
    expect(gone.dead_reason).toBe('no_agent');
  }, 60_000);
});
