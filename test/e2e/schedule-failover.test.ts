/**
 * A schedule across a leader change: two registry-sync instances share the housekeeping lock; a
 * schedule every 1000 ms fires on the leader. The leader is SIGKILLed (it may die between firing
 * a tick and moving the schedule on); the other takes the lock within its lease and goes on
 * firing. Every tick is one task `<schedule_id>:<tick ms>` that runs once: none is fired twice,
 * and ticks resume on the schedule's cadence.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { entryOf } from '@agent-reach/launcher';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { onFreePort, startNodeService, waitFor, type ServiceProcess } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { connectRedis } from '../support/redis.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let second: ServiceProcess;
let secondUrl: string;
let agent: ReachAgent | undefined;
/** task_id → how many times its handler ran. */
const runs = new Map<string, number>();

beforeAll(async () => {
  stack = await startStack({ env: { ...FAST_LEASES, REACH_INSTANCE_ID: 'sync-a' } });
  let port: number;
  ({ port, started: second } = await onFreePort('registry-sync-b', (p) =>
    startNodeService({
      name: 'registry-sync-b',
      entry: entryOf('registry-sync'),
      env: { ...stack.env, REACH_INSTANCE_ID: 'sync-b', REGISTRY_PORT: String(p) },
      healthUrl: `http://127.0.0.1:${p}/healthz`,
    }),
  ));
  secondUrl = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  await agent?.close();
  // One of the two registry-syncs was killed on purpose: stop what is left, one by one.
  await stack?.router.stop();
  await stack?.registry.stop();
  await second?.stop();
});

function ticksOf(scheduleId: string): number[] {
  return [...runs.keys()]
    .filter((id) => id.startsWith(`${scheduleId}:`))
    .map((id) => Number(id.slice(scheduleId.length + 1)))
    .sort((a, b) => a - b);
}

describe('schedules across a leader change', () => {
  it('the next leader fires on; every tick is one task that ran once', async () => {
    const created = await http<{ schedule_id: string }>(`${stack.routerUrl}/v1/schedules`, {
      body: { every_ms: 1000, task: { capability: 'tick', payload: null } },
    });
    expect(created.status).toBe(201);
    const id = created.body.schedule_id;
    const redis = connectRedis(stack);
    const lock = stack.keys.lock('housekeeping');
    const leader = await waitFor(async () => (await redis.get(lock)) ?? undefined);
    expect(['sync-a', 'sync-b']).toContain(leader);
    const [killed, survivor] =
      leader === 'sync-a' ? [stack.registry, second] : [second, stack.registry];
    // The agent talks to the instance that stays (behind nginx it would move on by itself).
    const survivorUrl = leader === 'sync-a' ? secondUrl : stack.registryUrl;
    agent = await startAgent(
      { ...stack, registryUrl: survivorUrl },
      'tick-1',
      ['tick'],
      async (t) => {
        runs.set(t.taskId, (runs.get(t.taskId) ?? 0) + 1);
        return null;
      },
    );
    await waitFor(() => ticksOf(id).length >= 2, { timeoutMs: 10_000, message: 'no ticks fired' });

    // Killed just as a tick is due: it may have fired it without moving the schedule on.
    const view = await http<{ next_run_at: number }>(`${stack.routerUrl}/v1/schedules/${id}`);
    await waitFor(() => Date.now() >= view.body.next_run_at, { timeoutMs: 3000, intervalMs: 5 });
    killed.kill('SIGKILL');
    const killedAt = Date.now();
    await killed.exited;

    const other = leader === 'sync-a' ? 'sync-b' : 'sync-a';
    await waitFor(async () => (await redis.get(lock)) === other, {
      timeoutMs: 10_000,
      message: 'the other registry-sync did not take the lock',
    });
    const tookOverMs = Date.now() - killedAt;
    await waitFor(() => ticksOf(id).filter((t) => t > killedAt + tookOverMs).length >= 3, {
      timeoutMs: 15_000,
      message: 'the new leader fires nothing',
    });
    const ticks = ticksOf(id);
    // One task per tick, each run once, all on the cadence.
    expect(new Set(ticks).size).toBe(ticks.length);
    for (const t of ticks) expect(runs.get(`${id}:${t}`)).toBe(1);
    for (const t of ticks) expect((t - (ticks[0] ?? 0)) % 1000).toBe(0);
    const gaps = ticks.slice(1).map((t, i) => t - (ticks[i] ?? 0));
    console.log(
      `schedule failover: lock taken over ${tookOverMs} ms after the SIGKILL; ${ticks.length} ticks, gaps (ms) ${gaps.join(', ')}`,
    );
    expect(survivor.pid).toBeGreaterThan(0);
    await http(`${stack.routerUrl}/v1/schedules/${id}`, { method: 'DELETE' });
    await redis.quit();
  });
});
