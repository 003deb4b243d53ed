/**
 * `POST /v1/agents/:agent_id/drain`: an operator drains an agent as its own deregister would
 * (DRAINING, no new tasks, removed once nothing is in flight); other keys are refused.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  decodeFleetEvent,
  reachKeys,
  type AgentView,
  type RegisterReply,
} from '@agent-reach/protocol';
import { ApiKeyStore, type NewApiKey } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

const ADMIN_KEY = `admin-${'x'.repeat(40)}`;
let service: RegistryService;
let redis: Redis;
let prefix: string;
let store: ApiKeyStore;

beforeEach(async () => {
  prefix = randomPrefix();
  service = await createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      auth: 'required',
      adminKey: ADMIN_KEY,
      probeIntervalMs: 60_000,
      sweepIntervalMs: 100,
      heartbeatIntervalMs: 200,
      suspectMs: 1000,
      offlineMs: 2000,
    },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
  store = new ApiKeyStore({ redis, keys: reachKeys(prefix) });
});

afterEach(async () => {
  await service.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const key = async (input: NewApiKey): Promise<string> => (await store.create(input)).key;
const auth = (k: string) => ({ authorization: `Bearer ${k}` });
const echo = { capabilities: ['echo'], max_concurrency: 2 };

async function register(agentId: string, apiKey: string): Promise<RegisterReply> {
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: agentId, ...echo },
    headers: auth(apiKey),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<RegisterReply>();
}

const drain = (agentId: string, k: string) =>
  service.app.inject({ method: 'POST', url: `/v1/agents/${agentId}/drain`, headers: auth(k) });

/** The fleet events about `agentId` of `kind`. */
async function events(agentId: string, kind: string) {
  const entries = await redis.xrange(reachKeys(prefix).fleetEvents(), '-', '+');
  return entries
    .map(([, fields]) => decodeFleetEvent(fields))
    .filter((e) => e?.agent_id === agentId && e.kind === kind);
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('an operator drains an agent', () => {
  it('refuses a caller key, an agent key and no key; an unknown agent is 404', async () => {
    const agentKey = await key({ tenant: 'acme', role: 'agent' });
    await register('a1', agentKey);
    const caller = await key({ tenant: 'acme', role: 'caller' });
    for (const k of [caller, agentKey]) {
      const res = await drain('a1', k);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'FORBIDDEN' });
    }
    const anonymous = await service.app.inject({ method: 'POST', url: '/v1/agents/a1/drain' });
    expect(anonymous.statusCode).toBe(401);
    const unknown = await drain('nobody', ADMIN_KEY);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: 'AGENT_NOT_FOUND' });
    expect(await redis.hget(reachKeys(prefix).agent('a1'), 'status')).not.toBe('DRAINING');
  });

  it('turns it DRAINING; a second drain answers the same; it is removed once idle', async () => {
    const agentKey = await key({ tenant: 'acme', role: 'agent' });
    const reg = await register('a1', agentKey);
    // Held DRAINING while a task is still pending, so the sweeper keeps it for now.
    await redis.hset(reachKeys(prefix).pending('a1'), 't1', '1');
    const first = await drain('a1', ADMIN_KEY);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ agent_id: 'a1', epoch: reg.epoch, status: 'DRAINING' });
    const seen = await service.app.inject({ url: '/v1/agents/a1', headers: auth(ADMIN_KEY) });
    expect(seen.json<AgentView>().status).toBe('DRAINING');
    // The agent's own heartbeat does not bring it back.
    const beat = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/a1/heartbeat',
      headers: auth(reg.token),
      payload: { inflight: 1 },
    });
    expect(beat.json()).toMatchObject({ status: 'DRAINING' });
    const again = await drain('a1', ADMIN_KEY);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({ agent_id: 'a1', status: 'DRAINING' });
    const announced = await until(
      () => events('a1', 'deregistered'),
      (e) => e.length > 0,
    );
    expect(announced).toEqual([expect.objectContaining({ reason: 'operator', epoch: reg.epoch })]);
    // Its last task finishes: the sweeper removes it.
    await redis.del(reachKeys(prefix).pending('a1'));
    const gone = await until(
      () => service.app.inject({ url: '/v1/agents/a1', headers: auth(ADMIN_KEY) }),
      (res) => res.statusCode === 404,
    );
    expect(gone.statusCode).toBe(404);
    expect(await events('a1', 'deregistered')).toHaveLength(1);
  });

  it('keeps an idle agent a lease long, so its next heartbeat is told DRAINING', async () => {
    const agentKey = await key({ tenant: 'acme', role: 'agent' });
    const reg = await register('a2', agentKey);
    const drained = await drain('a2', ADMIN_KEY);
    expect(drained.statusCode, drained.body).toBe(200);
    const drainedAt = Date.now();
    // Nothing is pending, yet a heartbeat after several sweeps still finds the record.
    await new Promise((r) => setTimeout(r, 600));
    const beat = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/a2/heartbeat',
      headers: auth(reg.token),
      payload: { inflight: 0 },
    });
    expect(beat.statusCode, beat.body).toBe(200);
    expect(beat.json()).toMatchObject({ status: 'DRAINING' });
    // Then, the lease bound (offlineMs) after the drain, it is removed.
    const gone = await until(
      () => service.app.inject({ url: '/v1/agents/a2', headers: auth(ADMIN_KEY) }),
      (res) => res.statusCode === 404,
    );
    expect(gone.statusCode).toBe(404);
    expect(Date.now() - drainedAt).toBeGreaterThanOrEqual(1900);
  });
});
