import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { decodeSnapshot, encodeAck, reachKeys, type RegisterReply } from '@agent-reach/protocol';
import { loadScripts } from '@agent-reach/service-kit';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from './index.ts';
import { leaseScript } from './commands/lease.ts';
import { LeaseSweeper } from './sweeps/lease-sweeper.ts';
import { ConsumerJanitor } from './sweeps/consumer-janitor.ts';

let service: RegistryService;
let redis: Redis;
let prefix: string;

const fast = {
  heartbeatIntervalMs: 100,
  suspectMs: 400,
  offlineMs: 800,
  sweepIntervalMs: 50,
  snapshotIntervalMs: 200,
  probeIntervalMs: 60_000,
};

beforeEach(async () => {
  prefix = randomPrefix();
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, ...fast },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  await service.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

async function register(body: Record<string, unknown>): Promise<RegisterReply> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: body,
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>();
}

const heartbeat = (agentId: string, token: string, inflight = 0) =>
  service.app.inject({
    method: 'POST',
    url: `/v1/agents/${agentId}/heartbeat`,
    headers: { authorization: `Bearer ${token}` },
    payload: { inflight },
  });

describe('registration', () => {
  it('registers an agent and tells it where to read and report', async () => {
    const reply = await register({ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 4 });
    const keys = reachKeys(prefix);
    expect(reply).toMatchObject({
      agent_id: 'a1',
      epoch: 1,
      stream: keys.inbox('a1'),
      group: 'workers',
      acks_stream: keys.acks(),
    });
    expect(reply.heartbeat_interval_ms).toBe(100);
    expect(reply.lease_ms).toBe(800);
    // The consumer group exists, so a worker can XREADGROUP at once.
    const groups = (await redis.xinfo('GROUPS', reply.stream)) as unknown[];
    expect(groups).toHaveLength(1);
    const view = (await service.app.inject({ url: '/v1/agents/a1' })).json();
    expect(view).toMatchObject({
      agent_id: 'a1',
      status: 'HEALTHY',
      capabilities: ['echo'],
      max_concurrency: 4,
      inflight: 0,
    });
  });

  it('is an idempotent upsert for the same instance and raises the epoch for a new one', async () => {
    const first = await register({
      agent_id: 'a1',
      instance_id: 'i1',
      capabilities: ['echo'],
      max_concurrency: 2,
    });
    const again = await register({
      agent_id: 'a1',
      instance_id: 'i1',
      capabilities: ['echo', 'sum'],
      max_concurrency: 3,
    });
    expect(again.epoch).toBe(first.epoch);
    const view = (await service.app.inject({ url: '/v1/agents/a1' })).json();
    expect(view).toMatchObject({ capabilities: ['echo', 'sum'], max_concurrency: 3 });

    const other = await register({
      agent_id: 'a1',
      instance_id: 'i2',
      capabilities: ['echo'],
      max_concurrency: 2,
    });
    expect(other.epoch).toBe(first.epoch + 1);
    const stale = await heartbeat('a1', again.token);
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toMatchObject({ error: 'STALE_EPOCH' });
    expect((await heartbeat('a1', other.token)).statusCode).toBe(200);
  });

  it('refuses wrong, missing and unknown credentials with stable codes', async () => {
    const reply = await register({ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1 });
    const wrong = await heartbeat('a1', `${reply.epoch}.AAAAAAAAAAAAAAAAAAAAAAAA`);
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error).toBe('UNAUTHORIZED');
    const missing = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/a1/heartbeat',
      payload: { inflight: 0 },
    });
    expect(missing.statusCode).toBe(401);
    const unknown = await heartbeat('nobody', reply.token);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toBe('AGENT_NOT_FOUND');
  });

  it('rejects bad registrations with a 400 that names the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ capabilities: ['echo'], max_concurrency: 1 }, 'agent_id'],
      [{ agent_id: 'a{1}', capabilities: ['echo'], max_concurrency: 1 }, 'agent_id'],
      [{ agent_id: 'a1', capabilities: [], max_concurrency: 1 }, 'capabilities'],
      [{ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 0 }, 'max_concurrency'],
      [
        { agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1, channel: 'carrier-pigeon' },
        'channel',
      ],
      [{ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1, colour: 'red' }, 'colour'],
    ];
    for (const [payload, field] of cases) {
      const res = await service.app.inject({ method: 'POST', url: '/v1/agents/register', payload });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('INVALID_BODY');
      expect(res.json().message).toContain(field);
    }
  });
});

describe('leases', () => {
  it('goes SUSPECT then OFFLINE without heartbeats, and a heartbeat brings it back', async () => {
    const reply = await register({ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1 });
    const status = async () =>
      (await service.app.inject({ url: '/v1/agents/a1' })).json().status as string;
    await waitFor(async () => (await status()) === 'SUSPECT', {
      timeoutMs: 5000,
      message: 'never SUSPECT',
    });
    await waitFor(async () => (await status()) === 'OFFLINE', {
      timeoutMs: 5000,
      message: 'never OFFLINE',
    });
    // The record is kept: a heartbeat alone brings the agent back.
    const res = await heartbeat('a1', reply.token, 0);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('HEALTHY');
  });

  it('gives leases the time back after the sweeper itself could not run', async () => {
    await service.close();
    service = await createRegistryService(
      { redisUrl: testServices().redisUrl, prefix, ...fast },
      { logger: pino({ level: 'silent' }), housekeeping: false },
    );
    await register({ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1 });
    const conn = new Redis(testServices().redisUrl);
    loadScripts(conn, [leaseScript]);
    const sweeper = new LeaseSweeper({
      redis: conn,
      keys: reachKeys(prefix),
      settings: {
        suspectMs: fast.suspectMs,
        offlineMs: fast.offlineMs,
      },
    });
    try {
      // No heartbeat for longer than the offline bound.
      await waitFor(
        async () =>
          (await service.app.inject({ url: '/v1/agents/a1' })).json().lease_age_ms >
          fast.offlineMs + 100,
      );
      // A sweep that knows it was away for that long gives the time back: still HEALTHY.
      expect(await sweeper.sweep(fast.offlineMs + 1000)).toEqual([]);
      // Without the time back it is past the offline bound: SUSPECT for one sweep, then OFFLINE
      // (a sweep delayed by a store pause finds every lease old at once; the next one decides).
      const [t] = await sweeper.sweep(0);
      expect(t).toMatchObject({ agent_id: 'a1', from: 'HEALTHY', to: 'SUSPECT' });
      const [u] = await sweeper.sweep(0);
      expect(u).toMatchObject({ agent_id: 'a1', from: 'SUSPECT', to: 'OFFLINE' });
    } finally {
      await conn.quit();
    }
  });

  it('drains on deregister and removes the agent once nothing is in flight', async () => {
    const reply = await register({ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 1 });
    const res = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/a1/deregister',
      headers: { authorization: `Bearer ${reply.token}` },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('DRAINING');
    await waitFor(
      async () => (await service.app.inject({ url: '/v1/agents/a1' })).statusCode === 404,
      {
        timeoutMs: 5000,
        message: 'drained agent was not removed',
      },
    );
  });

  it('writes versioned snapshots that list the agents', async () => {
    await register({ agent_id: 'a1', capabilities: ['echo'], max_concurrency: 2 });
    const keys = reachKeys(prefix);
    const first = await waitFor(async () => {
      const snap = decodeSnapshot(await redis.get(keys.snapshot()));
      return snap?.agents.some((a) => a.agent_id === 'a1') ? snap : undefined;
    });
    expect(first.agents[0]).toMatchObject({
      agent_id: 'a1',
      status: 'HEALTHY',
      capabilities: ['echo'],
      max_concurrency: 2,
    });
    const later = await waitFor(async () => {
      const snap = decodeSnapshot(await redis.get(keys.snapshot()));
      return snap && snap.version > first.version ? snap : undefined;
    });
    expect(later.written_at).toBeGreaterThanOrEqual(first.written_at);
  });
});

describe('old consumers', () => {
  it('are deleted only once their pending lists are empty', async () => {
    const keys = reachKeys(prefix);
    const first = await register({
      agent_id: 'a1',
      instance_id: 'i1',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    await redis.xadd(first.stream, '*', 'task_id', 't1');
    // Instance i1 reads the entry and never acknowledges it; i2 takes over.
    await redis.xreadgroup('GROUP', 'workers', 'i1', 'COUNT', 1, 'STREAMS', first.stream, '>');
    await register({
      agent_id: 'a1',
      instance_id: 'i2',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    await redis.xgroup('CREATECONSUMER', first.stream, 'workers', 'i2');
    const janitor = new ConsumerJanitor({
      redis: service.redis,
      keys,
      logger: pino({ level: 'silent' }),
      idleMs: 0,
    });
    const names = async () =>
      ((await redis.xinfo('CONSUMERS', first.stream, 'workers')) as string[][]).map((c) => c[1]);
    expect(await janitor.sweep()).toBe(0);
    expect((await names()).sort()).toEqual(['i1', 'i2']);
    const [held] = (await redis.xpending(first.stream, 'workers', '-', '+', 1, 'i1')) as [
      string,
      string,
      number,
      number,
    ][];
    await redis.xack(first.stream, 'workers', held![0]);
    expect(await janitor.sweep()).toBe(1);
    expect(await names()).toEqual(['i2']);
  });
});

describe('acks', () => {
  it('finishes a task whose completion is replayed after its slot was freed and a new instance registered', async () => {
    const keys = reachKeys(prefix);
    const old = await register({
      agent_id: 'a2',
      instance_id: 'first',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    // The completion's agent step ran (slot freed), its task step did not (Redis went away).
    await redis.hset(
      keys.task('t9'),
      'task_id',
      't9',
      'status',
      'received',
      'attempt',
      '1',
      'agent_id',
      'a2',
      'epoch',
      String(old.epoch),
      'capability',
      'echo',
    );
    await register({
      agent_id: 'a2',
      instance_id: 'second',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    await redis.xadd(
      keys.acks(),
      '*',
      ...encodeAck({
        task_id: 't9',
        stage: 'completed',
        agent_id: 'a2',
        instance_id: 'first',
        epoch: old.epoch,
        attempt: 1,
        result: '"done"',
      }),
    );
    await waitFor(async () => (await redis.hget(keys.task('t9'), 'status')) === 'completed', {
      message: 'the replayed completion was refused',
    });
  });

  it('refuses and counts acks from a fenced instance', async () => {
    const old = await register({
      agent_id: 'a1',
      instance_id: 'old',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    await register({
      agent_id: 'a1',
      instance_id: 'new',
      capabilities: ['echo'],
      max_concurrency: 1,
    });
    const keys = reachKeys(prefix);
    // Task t1 was delivered to the old instance and still holds its slot.
    await redis.hset(keys.pending('a1'), 't1', `1|${old.epoch}||1-1|0|0`);
    await redis.xadd(
      keys.acks(),
      '*',
      ...encodeAck({
        task_id: 't1',
        stage: 'completed',
        agent_id: 'a1',
        instance_id: 'old',
        epoch: old.epoch,
        attempt: 1,
        result: '1',
      }),
    );
    await redis.xadd(keys.acks(), '*', 'task_id', 't2', 'stage', 'exploded');
    await waitFor(async () => {
      const stats = await redis.hgetall(keys.stats());
      return stats['acks_refused:stale_epoch'] === '1' && stats['acks_refused:malformed'] === '1';
    });
    // Processed entries leave the acks stream.
    await waitFor(async () => (await redis.xlen(keys.acks())) === 0);
  });
});
