/**
 * Heartbeats in batches (a relay's) and `reachable`, on a registry-sync in process with keys
 * required, on the real test Redis: each beat checked by its own token with no
 * API key, refused beats answered with their codes in order, and an unreachable endpoint SUSPECT
 * at once — in the reply and in the snapshot — until a heartbeat says it answers again.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  reachKeys,
  type BatchHeartbeatReply,
  type ReachKeys,
  type RegisterReply,
} from '@agent-reach/protocol';
import { loadScripts } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';
import { routerRegistry } from '../testing/router-registry.ts';
import { leaseScript } from '../commands/lease.ts';
import { LeaseSweeper } from '../sweeps/lease-sweeper.ts';

const ADMIN = `admin-${'x'.repeat(40)}`;
let service: RegistryService;
let redis: Redis;
let keys: ReachKeys;
let prefix: string;
/** A lease sweep run by the test (the service's own are off, so that none races the checks). */
let sweeper: LeaseSweeper;

beforeAll(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  service = await createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      auth: 'required',
      adminKey: ADMIN,
      heartbeatIntervalMs: 200,
      suspectMs: 5000,
      offlineMs: 10_000,
      probeIntervalMs: 60_000,
    },
    { logger: pino({ level: 'silent' }), housekeeping: false },
  );
  redis = new Redis(testServices().redisUrl);
  loadScripts(redis, [leaseScript]);
  sweeper = new LeaseSweeper({ redis, keys, settings: { suspectMs: 5000, offlineMs: 10_000 } });
});

afterAll(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

async function register(agentId: string, instanceId = 'i1'): Promise<RegisterReply> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    headers: { authorization: `Bearer ${ADMIN}` },
    payload: {
      agent_id: agentId,
      instance_id: instanceId,
      capabilities: ['echo'],
      max_concurrency: 2,
    },
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>();
}

const beats = (list: Record<string, unknown>[]) =>
  service.app.inject({ method: 'POST', url: '/v1/agents/heartbeats', payload: { beats: list } });

/** The agent's status as a router sees it now (the snapshot and the deltas after it). */
async function snapshotStatus(agentId: string): Promise<string | undefined> {
  return (await routerRegistry(redis, keys)).agent(agentId)?.status;
}

describe('POST /v1/agents/heartbeats', () => {
  it('checks each beat’s own token with no API key, answering every beat in order', async () => {
    const a = await register('hb-a');
    const b = await register('hb-b');
    const fenced = await register('hb-c', 'old');
    await register('hb-c', 'new');
    const res = await beats([
      { agent_id: 'hb-a', token: a.token, inflight: 1 },
      { agent_id: 'hb-b', token: a.token, inflight: 0 },
      { agent_id: 'hb-nobody', token: a.token, inflight: 0 },
      { agent_id: 'hb-c', token: fenced.token, inflight: 0 },
      { agent_id: 'hb-b', token: 'not-a-token', inflight: 0 },
      { agent_id: 'hb-b', token: b.token, inflight: 2 },
    ]);
    expect(res.statusCode).toBe(200);
    expect(res.json<BatchHeartbeatReply>().acks).toEqual([
      { agent_id: 'hb-a', epoch: a.epoch, status: 'HEALTHY', lease_ms: 10_000 },
      { agent_id: 'hb-b', error: 'UNAUTHORIZED' },
      { agent_id: 'hb-nobody', error: 'AGENT_NOT_FOUND' },
      { agent_id: 'hb-c', error: 'STALE_EPOCH' },
      { agent_id: 'hb-b', error: 'UNAUTHORIZED' },
      { agent_id: 'hb-b', epoch: b.epoch, status: 'HEALTHY', lease_ms: 10_000 },
    ]);
    expect(await redis.hget(keys.agent('hb-b'), 'reported_inflight')).toBe('2');
    expect(await redis.sismember(keys.agents(), 'hb-nobody')).toBe(0);
  });

  it('takes a thousand beats in one request, past the registry’s usual body limit', async () => {
    const a = await register('hb-many');
    const many = Array.from({ length: 1000 }, () => ({
      agent_id: 'hb-many',
      token: a.token,
      inflight: 0,
    }));
    expect(JSON.stringify({ beats: many }).length).toBeGreaterThan(65_536);
    const res = await beats(many);
    expect(res.statusCode).toBe(200);
    expect(res.json<BatchHeartbeatReply>().acks).toHaveLength(1000);
  });

  it('refuses a body that is not a batch with INVALID_BODY', async () => {
    const res = await beats([]);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'INVALID_BODY' });
  });

  it('makes an unreachable agent SUSPECT at once, kept so by the sweeps, until it answers', async () => {
    const a = await register('hb-down');
    const down = await beats([
      { agent_id: 'hb-down', token: a.token, inflight: 0, reachable: false },
    ]);
    expect(down.json<BatchHeartbeatReply>().acks[0]).toMatchObject({ status: 'SUSPECT' });
    expect(await snapshotStatus('hb-down')).toBe('SUSPECT');
    expect(await redis.hget(keys.agent('hb-down'), 'unreachable')).toBe('1');
    // A beat that says nothing of it leaves it so; so does a lease sweep.
    const quiet = await beats([{ agent_id: 'hb-down', token: a.token, inflight: 0 }]);
    expect(quiet.json<BatchHeartbeatReply>().acks[0]).toMatchObject({ status: 'SUSPECT' });
    expect(await sweeper.sweep()).toEqual([]);
    expect(await redis.hget(keys.agent('hb-down'), 'status')).toBe('SUSPECT');
    const up = await beats([{ agent_id: 'hb-down', token: a.token, inflight: 0, reachable: true }]);
    expect(up.json<BatchHeartbeatReply>().acks[0]).toMatchObject({ status: 'HEALTHY' });
    expect(await snapshotStatus('hb-down')).toBe('HEALTHY');
    expect(await redis.hexists(keys.agent('hb-down'), 'unreachable')).toBe(0);
  });
});

describe('reachable on the single heartbeat', () => {
  it('turns the agent SUSPECT and back, in the snapshot at once; not while it is starting', async () => {
    const a = await register('hb-one');
    const beat = (body: Record<string, unknown>) =>
      service.app.inject({
        method: 'POST',
        url: '/v1/agents/hb-one/heartbeat',
        headers: { authorization: `Bearer ${a.token}` },
        payload: { inflight: 0, ...body },
      });
    expect((await beat({ reachable: false })).json()).toMatchObject({ status: 'SUSPECT' });
    expect(await snapshotStatus('hb-one')).toBe('SUSPECT');
    expect((await beat({ reachable: false, ready: false })).json()).toMatchObject({
      status: 'STARTING',
    });
    expect((await beat({ ready: true })).json()).toMatchObject({ status: 'SUSPECT' });
    expect((await beat({ reachable: true })).json()).toMatchObject({ status: 'HEALTHY' });
    expect(await snapshotStatus('hb-one')).toBe('HEALTHY');
  });
});
