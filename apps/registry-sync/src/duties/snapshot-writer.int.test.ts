/**
 * Status changes reach a router's snapshot at once, not at the periodic snapshot; and the
 * settings routers share are published beside the snapshot.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { SnapshotHolder } from '@agent-reach/dispatch';
import {
  decodeSettings,
  decodeSnapshot,
  decodeSnapshotDelta,
  reachKeys,
  type AgentStatus,
  type ReachKeys,
  type RegisterReply,
} from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';
import { AgentRegistry } from '../registry/agent-registry.ts';
import { SnapshotWriter } from './snapshot-writer.ts';

const silent = pino({ level: 'silent' });

/** Fast leases; the periodic snapshot far away, so only the writes after a change can be seen. */
const settings = {
  heartbeatIntervalMs: 100,
  suspectMs: 400,
  offlineMs: 800,
  sweepIntervalMs: 50,
  snapshotIntervalMs: 60_000,
  probeIntervalMs: 60_000,
};

let service: RegistryService;
let redis: Redis;
let prefix: string;
let keys: ReachKeys;
const closers: (() => Promise<unknown>)[] = [];

async function start(extra: { housekeeping?: boolean } = {}): Promise<void> {
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, ...settings },
    { logger: silent, ...extra },
  );
}

async function register(agentId: string): Promise<RegisterReply> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: agentId, capabilities: ['echo'], max_concurrency: 1 },
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>();
}

/** A router's view of the registry: a SnapshotHolder that re-reads only every 60 s by itself. */
async function routerView(): Promise<SnapshotHolder> {
  const conn = new Redis(testServices().redisUrl);
  const subscriber = new Redis(testServices().redisUrl);
  const holder = new SnapshotHolder({
    redis: conn,
    subscriber,
    keys,
    intervalMs: 60_000,
    logger: silent,
  });
  await holder.start();
  closers.push(async () => {
    await holder.close();
    await conn.quit();
  });
  return holder;
}

beforeEach(() => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  redis = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('snapshots after status changes', () => {
  it('shows a router an agent whose lease lapsed as SUSPECT, then OFFLINE, long before the periodic snapshot', async () => {
    await start();
    const view = await routerView();
    await register('lapsing');
    await waitFor(() => view.agent('lapsing')?.status === 'HEALTHY', {
      timeoutMs: 5000,
      message: 'the registration reaches the router',
    });
    const started = Date.now();
    const seen = new Set<AgentStatus | undefined>();
    // No heartbeats: the lease lapses after 400 ms (SUSPECT) and 800 ms (OFFLINE).
    await waitFor(
      () => {
        const status = view.agent('lapsing')?.status;
        seen.add(status);
        return status === 'OFFLINE';
      },
      { timeoutMs: 10_000, intervalMs: 10, message: 'the router sees the agent OFFLINE' },
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(seen).toContain('SUSPECT');
  });

  it('writes one snapshot for a burst of changes', async () => {
    await start({ housekeeping: false });
    const writer = new SnapshotWriter({
      redis: service.redis,
      keys,
      registry: new AgentRegistry({ redis: service.redis, keys, settings: service.options }),
      settings: service.options,
      logger: silent,
    });
    await register('a1');
    // The registration's delta took a version of the same counter.
    const before = Number(await redis.get(keys.snapshotVersion()));
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 20; i++) writer.soon();
    const after = await waitFor(
      async () => {
        const version = decodeSnapshot(await redis.get(keys.snapshot()))?.version ?? 0;
        return version > before && version;
      },
      { timeoutMs: 5000, message: 'a snapshot after the burst' },
    );
    // close() waits for a write under way; none other was started.
    await writer.close();
    expect(after).toBe(before + 1);
    expect(decodeSnapshot(await redis.get(keys.snapshot()))?.version).toBe(before + 1);
  });
});

describe('deltas', () => {
  const writerOf = () =>
    new SnapshotWriter({
      redis: service.redis,
      keys,
      registry: new AgentRegistry({ redis: service.redis, keys, settings: service.options }),
      settings: service.options,
      logger: silent,
    });

  it('carry only the agents that changed, the changes of a burst in one delta', async () => {
    await start({ housekeeping: false });
    for (let i = 0; i < 5; i++) await register(`d${i}`);
    const writer = writerOf();
    const before = await redis.xlen(keys.snapshotDeltas());
    await Promise.all([writer.changed(['d1']), writer.changed(['d3']), writer.changed(['gone'])]);
    await writer.close();
    const entries = await redis.xrange(keys.snapshotDeltas(), '-', '+');
    expect(entries.length).toBe(before + 1);
    const [id, fields] = entries.at(-1)!;
    const delta = decodeSnapshotDelta(id, fields)!;
    expect(delta.version).toBe(Number(await redis.get(keys.snapshotVersion())));
    expect(delta.agents.map((a) => a.agent_id).sort()).toEqual(['d1', 'd3']);
    expect(delta.removed).toEqual(['gone']);
  });

  it('keep a full snapshot read before them from publishing their agents older', async () => {
    await start({ housekeeping: false });
    await register('m1');
    await register('m2');
    const writer = writerOf();
    const registry = new AgentRegistry({ redis: service.redis, keys, settings: service.options });
    const mark = writer.mark();
    const views = await registry.list();
    // After the read: m2 drains, m3 joins, both go out as deltas before the snapshot.
    await register('m3');
    await redis.hset(keys.agent('m2'), 'status', 'DRAINING');
    await writer.changed(['m2', 'm3']);
    const version = await writer.write(views, mark);
    await writer.close();
    const snap = decodeSnapshot(await redis.get(keys.snapshot()))!;
    expect(snap.version).toBe(version);
    expect(snap.agents.map((a) => [a.agent_id, a.status]).sort()).toEqual([
      ['m1', 'HEALTHY'],
      ['m2', 'DRAINING'],
      ['m3', 'HEALTHY'],
    ]);
  });
});

describe('published settings', () => {
  it('are written at start-up and again with each snapshot', async () => {
    await start({ housekeeping: false });
    expect(decodeSettings(await redis.hgetall(keys.settings()))).toMatchObject({
      heartbeatIntervalMs: 100,
      suspectMs: 400,
      offlineMs: 800,
      snapshotIntervalMs: 60_000,
      watermark: 0.85,
      maxAttempts: 4,
    });
    expect(await redis.hget(keys.settings(), 'published_by')).toBe(service.options.instanceId);
    await redis.del(keys.settings());
    await service.housekeeper.writeSnapshotNow();
    expect(await redis.hget(keys.settings(), 'REACH_OFFLINE_MS')).toBe('800');
  });
});
