/**
 * Redis going away: the router answers 503 STORE_UNAVAILABLE within a second instead of hanging,
 * every component recovers by itself when Redis returns (AOF, appendfsync always), and a pause
 * longer than a heartbeat does not mark the fleet OFFLINE.
 *
 * "Nobody went OFFLINE" is looked at once registry-sync has shown it saw the stall (a grace pass:
 * leases got the time back) and has then run full passes, which would have marked a lease that
 * the stall had really aged (test/support/passes.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { decodeFleetEvent } from '@agent-reach/protocol';
import { startOwnRedis, waitFor, type OwnRedis } from '@agent-reach/testkit';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { morePasses, passesOf } from '../support/passes.ts';
import { FAST_LEASES, http, START_TIMEOUT_MS, startStack, type Stack } from '../support/stack.ts';

let own: OwnRedis;
let stack: Stack;
let client: ReachClient;
const agents: ReachAgent[] = [];

beforeAll(async () => {
  own = await startOwnRedis({ persistent: true });
  stack = await startStack({ redisUrl: own.url, env: { ...FAST_LEASES } });
  for (const id of ['o-1', 'o-2', 'o-3'])
    agents.push(await startAgent(stack, id, ['echo'], async (t) => t.payload));
  client = new ReachClient({ routerUrl: stack.routerUrl });
}, 2 * START_TIMEOUT_MS);

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
  await own?.stop();
});

/** Agents that were announced OFFLINE since `sinceMs`, from the fleet events stream. */
async function wentOffline(sinceMs: number): Promise<string[]> {
  const conn = new Redis(own.url);
  try {
    const entries = await conn.xrange(stack.keys.fleetEvents(), String(sinceMs), '+');
    return entries
      .map(([, fields]) => decodeFleetEvent(fields))
      .filter((e) => e?.kind === 'status' && e.to === 'OFFLINE')
      .map((e) => e?.agent_id ?? '');
  } finally {
    await conn.quit();
  }
}

/**
 * Every status /v1/agents showed while registry-sync noticed the stall that began before the
 * call (its next pass is a grace pass) and then ran three full passes.
 */
async function statusesThroughPasses(graceBefore: number): Promise<Set<string>> {
  const seen = new Set<string>();
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const res = await http<{ agents: { status: string }[] }>(`${stack.registryUrl}/v1/agents`);
      for (const a of res.body.agents) seen.add(a.status);
    }
  })();
  try {
    await morePasses(stack, 1, {
      kind: 'grace',
      from: graceBefore,
      timeoutMs: 30_000,
      message: 'registry-sync did not notice it could not run',
    });
    await morePasses(stack, 3, { timeoutMs: 30_000 });
  } finally {
    sampling = false;
    await sampler;
  }
  return seen;
}

describe('Redis outage', () => {
  it('does not mark the fleet OFFLINE when Redis is paused longer than a heartbeat', async () => {
    const admin = new Redis(own.url);
    try {
      const before = await http<{ agents: { status: string }[] }>(`${stack.registryUrl}/v1/agents`);
      expect(before.body.agents.every((a) => a.status === 'HEALTHY')).toBe(true);
      const graceBefore = await passesOf(stack, 'grace');
      // 2.5 s: over the heartbeat (200 ms), the SUSPECT (1 s) and the OFFLINE (2 s) bounds.
      const pausedAt = Date.now();
      await admin.call('CLIENT', 'PAUSE', '2500', 'ALL');
      // Nobody is OFFLINE, whatever the passes after the pause saw.
      const seen = await statusesThroughPasses(graceBefore);
      expect(seen.has('OFFLINE')).toBe(false);
      expect(await wentOffline(pausedAt)).toEqual([]);
      expect(await client.run('echo', 'after pause', { timeoutMs: 5000 })).toBe('after pause');
    } finally {
      await admin.quit();
    }
  });

  it('does not mark the fleet OFFLINE when registry-sync itself could not run for longer than the offline bound', async () => {
    // Frozen registry-sync: no heartbeat is recorded and no sweep runs for 2.5 s. When it
    // wakes, leases look 2.5 s old, but that time was not the agents' fault.
    const graceBefore = await passesOf(stack, 'grace');
    const frozenAt = Date.now();
    stack.registry.kill('SIGSTOP');
    // The freeze itself: how long registry-sync stays stopped, not a wait for a condition.
    await new Promise((r) => setTimeout(r, 2500));
    stack.registry.kill('SIGCONT');
    const seen = await statusesThroughPasses(graceBefore);
    expect(seen.has('OFFLINE')).toBe(false);
    expect(await wentOffline(frozenAt)).toEqual([]);
    expect(await client.run('echo', 'after freeze', { timeoutMs: 5000 })).toBe('after freeze');
  });

  it('answers 503 STORE_UNAVAILABLE within a second while Redis is down, and recovers when it returns', async () => {
    expect(await client.run('echo', 'before', { timeoutMs: 5000 })).toBe('before');
    own.kill('SIGKILL');
    await own.exited();
    const started = Date.now();
    const res = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'echo', payload: 1 },
    });
    const took = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('STORE_UNAVAILABLE');
    expect(took).toBeLessThan(1000);
    const health = await http<{ error: string }>(`${stack.routerUrl}/healthz`);
    expect(health.status).toBe(503);

    await own.restart();
    // Every component reconnects by itself; the agents re-register if their records were lost.
    const value = await waitFor(
      async () => {
        try {
          return await client.run('echo', 'after restart', { timeoutMs: 2000 });
        } catch {
          return undefined;
        }
      },
      { timeoutMs: 20_000, message: 'the stack did not recover after Redis came back' },
    );
    expect(value).toBe('after restart');
  });
});
