/**
 * Flap damping on a real Redis: a late heartbeat inside the lease changes nothing a router sees;
 * leases still lapse at the suspect bound; an agent whose lease keeps lapsing is held SUSPECT
 * through its heartbeats until the hold ends, so routers see one change instead of a flap each time.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys, type RegisterReply, type ReachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

const settings = {
  heartbeatIntervalMs: 100,
  suspectMs: 400,
  offlineMs: 4000,
  sweepIntervalMs: 50,
  snapshotIntervalMs: 60_000,
  probeIntervalMs: 60_000,
  flapLimit: 2,
  flapWindowMs: 20_000,
  flapHoldMs: 1500,
};

let service: RegistryService;
let redis: Redis;
let keys: ReachKeys;
let prefix: string;

beforeEach(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, ...settings },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

async function register(agentId: string): Promise<string> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: agentId, capabilities: ['echo'], max_concurrency: 1 },
  });
  expect(res.statusCode).toBe(200);
  return res.json<RegisterReply>().token;
}

async function heartbeat(agentId: string, token: string): Promise<string> {
  const res = await service.app.inject({
    method: 'POST',
    url: `/v1/agents/${agentId}/heartbeat`,
    headers: { authorization: `Bearer ${token}` },
    payload: { inflight: 0 },
  });
  expect(res.statusCode).toBe(200);
  return res.json<{ status: string }>().status;
}

const statusOf = async (agentId: string) => (await redis.hget(keys.agent(agentId), 'status')) ?? '';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The agents of the deltas written so far, with the status each carried, in order. */
async function deltaStatuses(agentId: string): Promise<string[]> {
  const entries = await redis.xrange(keys.snapshotDeltas(), '-', '+');
  return entries.flatMap(([, fields]) => {
    const agents = JSON.parse(fields[1] ?? '[]') as { agent_id: string; status: string }[];
    return agents.filter((a) => a.agent_id === agentId).map((a) => a.status);
  });
}

describe('flap damping', () => {
  it('publishes nothing for a heartbeat that is late but inside the lease', async () => {
    const token = await register('late-once');
    const published = (await deltaStatuses('late-once')).length;
    for (let i = 0; i < 3; i++) {
      expect(await heartbeat('late-once', token)).toBe('HEALTHY');
      await sleep(100);
    }
    // Three heartbeat intervals late, still short of the 400 ms suspect bound.
    await sleep(250);
    expect(await heartbeat('late-once', token)).toBe('HEALTHY');
    await sleep(100);
    expect(await statusOf('late-once')).toBe('HEALTHY');
    expect(await deltaStatuses('late-once')).toHaveLength(published);
  });

  it('holds an agent whose lease keeps lapsing SUSPECT through its heartbeats, then lets it back', async () => {
    const token = await register('flapper');
    // First lapse: SUSPECT at the bound, back with the next heartbeat.
    await waitFor(async () => (await statusOf('flapper')) === 'SUSPECT', { timeoutMs: 3000 });
    expect(await heartbeat('flapper', token)).toBe('HEALTHY');
    // Second lapse within the window: the hold starts.
    await waitFor(async () => (await statusOf('flapper')) === 'SUSPECT', { timeoutMs: 3000 });
    const heldAt = Date.now();
    expect(Number(await redis.hget(keys.agent('flapper'), 'damped_until'))).toBeGreaterThan(0);
    // Heartbeats on time again do not bring it back while the hold lasts…
    const beats: string[] = [];
    while (Date.now() - heldAt < 1000) {
      beats.push(await heartbeat('flapper', token));
      await sleep(100);
    }
    expect(new Set(beats)).toEqual(new Set(['SUSPECT']));
    expect(await statusOf('flapper')).toBe('SUSPECT');
    // …and once it ends, with the lease fresh, the agent is HEALTHY again.
    const back = setInterval(() => void heartbeat('flapper', token).catch(() => undefined), 100);
    try {
      await waitFor(async () => (await statusOf('flapper')) === 'HEALTHY', {
        timeoutMs: 5000,
        message: 'the hold never ended',
      });
    } finally {
      clearInterval(back);
    }
    expect(Date.now() - heldAt).toBeGreaterThanOrEqual(1400);
    // Routers saw each lapse, one recovery between them, and one at the end: no change per beat.
    await waitFor(async () => (await deltaStatuses('flapper')).at(-1) === 'HEALTHY', {
      timeoutMs: 3000,
    });
    const statuses = await deltaStatuses('flapper');
    expect(statuses.slice(-4)).toEqual(['SUSPECT', 'HEALTHY', 'SUSPECT', 'HEALTHY']);
  });
});
