/**
 * A fleet of 200 agents against the stack's processes: registrations, status changes and
 * removals reach the router as deltas carrying the changed agents only, applied without a full
 * snapshot load; one batched heartbeat renews all 200 leases, and a beat of an instance fenced
 * off by a newer registration gets STALE_EPOCH while the others of the request are applied.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeSnapshotDelta, type RegisterReply } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const FLEET = 200;
/** Registrations in flight at once, as a restarted host would send them. */
const CONCURRENCY = 25;

interface BatchAck {
  agent_id: string;
  epoch?: number;
  status?: string;
  error?: string;
}

let stack: Stack;
let redis: TestRedis;
const tokens = new Map<string, string>();
const ids = Array.from({ length: FLEET }, (_, i) => `fleet-${String(i).padStart(3, '0')}`);

async function register(agentId: string, capabilities = ['fleet-work']): Promise<RegisterReply> {
  const res = await http<RegisterReply>(`${stack.registryUrl}/v1/agents/register`, {
    body: { agent_id: agentId, capabilities, max_concurrency: 4 },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  tokens.set(agentId, res.body.token);
  return res.body;
}

/** The router's `reach_router_registry_updates` by kind, from its /metrics. */
async function routerUpdates(): Promise<{ full: number; delta: number; version: number }> {
  const text = await (await fetch(`${stack.routerUrl}/metrics`)).text();
  const figure = (re: RegExp) => Number(re.exec(text)?.[1] ?? NaN);
  return {
    full: figure(/^reach_router_registry_updates\{kind="full"[^}]*\} (\d+)/m),
    delta: figure(/^reach_router_registry_updates\{kind="delta"[^}]*\} (\d+)/m),
    version: figure(/^reach_router_snapshot_version(?:\{[^}]*\})? (\d+)/m),
  };
}

/** The deltas written after `version`, decoded. */
async function deltasAfter(version: number) {
  const entries = await redis.xrange(stack.keys.snapshotDeltas(), `${version + 1}-0`, '+');
  return entries.map(([id, fields]) => decodeSnapshotDelta(id, fields)!);
}

const beat = (agentId: string, token: string, extra: Record<string, unknown> = {}) => ({
  agent_id: agentId,
  token,
  inflight: 0,
  ...extra,
});

interface RouteReply {
  agent_id?: string;
  candidates?: { agent_id: string; excluded?: string }[];
}

/** The router's decision for `capability` (GET /v1/route: every candidate, and why excluded). */
async function route(capability: string): Promise<RouteReply> {
  return (await http<RouteReply>(`${stack.routerUrl}/v1/route?capability=${capability}`)).body;
}

async function heartbeats(beats: unknown[]): Promise<BatchAck[]> {
  const res = await http<{ acks: BatchAck[] }>(`${stack.registryUrl}/v1/agents/heartbeats`, {
    body: { beats },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.acks;
}

beforeAll(async () => {
  // Leases and probes far away, and the periodic full snapshot too: what the router learns in
  // this test it learns from deltas.
  stack = await startStack({
    env: { REACH_SNAPSHOT_MS: '60000', REACH_PROBE_MS: '600000', REACH_SWEEP_MS: '200' },
  });
  redis = connectRedis(stack);
  // Past registry-sync's first full snapshot, which its first housekeeping pass writes.
  await waitFor(async () => (await routerUpdates()).version >= 1, {
    timeoutMs: 10_000,
    message: 'the router never loaded a snapshot',
  });
});

/** Every agent's lease kept by one batch every 3 s, with its current token, as a host would. */
let keeping: NodeJS.Timeout | undefined;
beforeAll(() => {
  keeping = setInterval(() => {
    const beats = [...tokens].map(([id, token]) => beat(id, token));
    if (beats.length > 0)
      void fetch(`${stack.registryUrl}/v1/agents/heartbeats`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ beats }),
      }).catch(() => undefined);
  }, 3000);
});
afterAll(() => clearInterval(keeping));

afterAll(async () => {
  await stack?.stop();
  redis?.disconnect();
});

describe('a fleet of 200 agents', () => {
  it('reaches the router as deltas of the agents registered, not as full snapshots', async () => {
    const before = await routerUpdates();
    const queue = [...ids];
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let id = queue.shift(); id; id = queue.shift()) await register(id);
      }),
    );
    // Registrations were published before their replies: the router follows by itself.
    await waitFor(
      async () => {
        const version = Number(await redis.get(stack.keys.snapshotVersion()));
        return (await routerUpdates()).version === version;
      },
      { timeoutMs: 10_000, message: 'the router did not catch up with the deltas' },
    );
    const after = await routerUpdates();
    const deltas = await deltasAfter(before.version);
    // Each delta carries some of the new agents, every one of them once at least, and no other.
    const carried = new Set(deltas.flatMap((d) => d.agents.map((a) => a.agent_id)));
    expect([...carried].sort()).toEqual(ids);
    expect(deltas.every((d) => d.agents.length < FLEET / 2)).toBe(true);
    expect(after.delta - before.delta).toBe(deltas.length);
    expect(after.full).toBe(before.full);
  });

  it('makes a newly registered agent routable through the deltas', async () => {
    await register('fleet-new', ['only-the-new-one']);
    await waitFor(async () => (await route('only-the-new-one')).agent_id === 'fleet-new', {
      timeoutMs: 5000,
      message: 'the new agent never became routable',
    });
    const res = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'only-the-new-one', payload: { n: 1 } },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    await waitFor(async () => (await redis.xlen(stack.keys.inbox('fleet-new'))) >= 1, {
      timeoutMs: 5000,
      message: 'the task never reached the new agent’s inbox',
    });
  });

  it('renews 200 leases in one request, fencing the beats of instances registered again', async () => {
    const fenced = ids.slice(0, 10);
    const oldTokens = new Map(fenced.map((id) => [id, tokens.get(id)!]));
    for (const id of fenced) await register(id);
    const acks = await heartbeats(ids.map((id) => beat(id, oldTokens.get(id) ?? tokens.get(id)!)));
    expect(acks.map((a) => a.agent_id)).toEqual(ids);
    expect(acks.filter((a) => a.error).map((a) => [a.agent_id, a.error])).toEqual(
      fenced.map((id) => [id, 'STALE_EPOCH']),
    );
    const renewed = acks.filter((a) => !a.error);
    expect(renewed).toHaveLength(FLEET - fenced.length);
    expect(renewed.every((a) => a.status === 'HEALTHY')).toBe(true);
    // The new instances' own tokens are taken, at the epoch their registration gave.
    const current = await heartbeats(fenced.map((id) => beat(id, tokens.get(id)!)));
    expect(current.map((a) => [a.error, a.epoch])).toEqual(fenced.map(() => [undefined, 2]));
  });

  it('sends a status change of 20 agents as one delta of those 20, applied by the router', async () => {
    const down = ids.slice(50, 70);
    const before = await routerUpdates();
    const acks = await heartbeats(
      down.map((id) => beat(id, tokens.get(id)!, { reachable: false })),
    );
    expect(acks.every((a) => a.status === 'SUSPECT')).toBe(true);
    await waitFor(async () => (await routerUpdates()).delta > before.delta, {
      timeoutMs: 5000,
      message: 'the router applied no delta',
    });
    // One delta carries the batch's changes: those 20 agents, and none of the 180 others.
    const deltas = await deltasAfter(before.version);
    const batch = deltas.find((d) => d.agents.some((a) => a.agent_id === down[0]));
    expect(batch?.agents.map((a) => [a.agent_id, a.status])).toEqual(
      down.map((id) => [id, 'SUSPECT']),
    );
    // The router routes around them, and says why.
    const candidates = (await route('fleet-work')).candidates ?? [];
    expect(candidates).toHaveLength(FLEET);
    const excluded = candidates.filter((c) => c.excluded === 'unreachable').map((c) => c.agent_id);
    expect(excluded.sort()).toEqual(down);
    expect((await routerUpdates()).full).toBe(before.full);
  });

  it('removes a deregistered agent from the router once it drained, by a delta', async () => {
    const res = await http(`${stack.registryUrl}/v1/agents/fleet-199/deregister`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.get('fleet-199')}` },
    });
    expect(res.status).toBe(200);
    const before = await routerUpdates();
    await waitFor(
      async () => {
        const deltas = await deltasAfter(before.version);
        return deltas.some((d) => d.removed.includes('fleet-199'));
      },
      { timeoutMs: 10_000, message: 'no delta removed the drained agent' },
    );
    await waitFor(
      async () => {
        const candidates = (await route('fleet-work')).candidates ?? [];
        return (
          candidates.length === FLEET - 1 && !candidates.some((c) => c.agent_id === 'fleet-199')
        );
      },
      { timeoutMs: 5000, message: 'the router still lists the removed agent' },
    );
  });
});
