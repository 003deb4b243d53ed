import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { poolStreams, reachKeys, type AgentView, type RegisterReply } from '@agent-reach/protocol';
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

function register(body: Record<string, unknown>, apiKey?: string) {
  return service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: body,
    ...(apiKey ? { headers: auth(apiKey) } : {}),
  });
}

const echo = { capabilities: ['echo'], max_concurrency: 2 };

describe('registration takes an agent key that covers the capabilities', () => {
  it('refuses no key (401), a caller key (403) and a key short of a capability (403)', async () => {
    expect((await register({ agent_id: 'a1', ...echo })).statusCode).toBe(401);
    const caller = await key({ tenant: 'acme', role: 'caller' });
    const refused = await register({ agent_id: 'a1', ...echo }, caller);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error: 'FORBIDDEN' });
    const narrow = await key({ tenant: 'acme', role: 'agent', capabilities: ['echo'] });
    const short = await register(
      { agent_id: 'a1', capabilities: ['echo', 'translate'], max_concurrency: 1 },
      narrow,
    );
    expect(short.statusCode).toBe(403);
    expect(short.json<{ message: string }>().message).toContain('translate');
    const ok = await register({ agent_id: 'a1', ...echo }, narrow);
    expect(ok.statusCode).toBe(200);
  });

  it('puts the agent in the key’s tenant, with its pools scoped to it', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent' });
    const res = await register({ agent_id: 'puller', ...echo, channel: 'pull' }, acme);
    expect(res.statusCode).toBe(200);
    const reply = res.json<RegisterReply>();
    expect(reply).toMatchObject({ tenant: 'acme', shared: false });
    expect(reply.pools).toEqual(poolStreams(reachKeys(prefix), 'acme/echo'));
    expect(await redis.hget(reachKeys(prefix).agent('puller'), 'tenant')).toBe('acme');
  });

  it('lets only an operator key register a shared agent', async () => {
    const agentKey = await key({ tenant: 'acme', role: 'agent' });
    expect((await register({ agent_id: 's1', ...echo, shared: true }, agentKey)).statusCode).toBe(
      403,
    );
    const res = await register({ agent_id: 's1', ...echo, shared: true }, ADMIN_KEY);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ tenant: 'default', shared: true });
  });

  it('never lets one tenant take over another tenant’s agent_id; the running agent is untouched', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent' });
    const globex = await key({ tenant: 'globex', role: 'agent' });
    const first = (await register({ agent_id: 'worker-1', ...echo }, acme)).json<RegisterReply>();
    const taken = await register({ agent_id: 'worker-1', instance_id: 'evil', ...echo }, globex);
    expect(taken.statusCode).toBe(403);
    expect(taken.json()).toMatchObject({ error: 'FORBIDDEN' });
    const record = await redis.hgetall(reachKeys(prefix).agent('worker-1'));
    expect(record).toMatchObject({
      instance_id: first.instance_id,
      epoch: String(first.epoch),
      tenant: 'acme',
    });
    // Its token still works: it was not fenced.
    const beat = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/worker-1/heartbeat',
      headers: auth(first.token),
      payload: { inflight: 0 },
    });
    expect(beat.statusCode).toBe(200);
    // The same tenant may start a new instance (and fence the old one).
    const next = await register({ agent_id: 'worker-1', instance_id: 'next', ...echo }, acme);
    expect(next.json()).toMatchObject({ epoch: first.epoch + 1 });
  });
});

describe('agent calls take the agent’s own token, listings what the key may see', () => {
  it('refuses heartbeat and deregister with an API key; serve takes an operator key only', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent' });
    await register({ agent_id: 'a1', ...echo, observe: true }, acme);
    const call = (path: string, k: string, payload: Record<string, unknown> = {}) =>
      service.app.inject({
        method: 'POST',
        url: `/v1/agents/a1/${path}`,
        headers: auth(k),
        payload: path === 'heartbeat' ? { inflight: 0 } : payload,
      });
    for (const path of ['heartbeat', 'deregister'])
      expect((await call(path, ADMIN_KEY)).statusCode, path).toBe(401);
    // An agent key or a caller key is no operator's.
    expect((await call('serve', acme)).statusCode).toBe(403);
    expect((await call('serve', await key({ tenant: 'acme', role: 'caller' }))).statusCode).toBe(
      403,
    );
    const promoted = await call('serve', ADMIN_KEY, { weight: 3 });
    expect(promoted.statusCode, promoted.body).toBe(200);
    expect(promoted.json()).toMatchObject({ agent_id: 'a1', observe: false, weight: 3 });
  });

  it('shows a caller its tenant’s agents and shared ones without epochs, an operator all', async () => {
    await register({ agent_id: 'a-acme', ...echo }, await key({ tenant: 'acme', role: 'agent' }));
    await register(
      { agent_id: 'a-globex', ...echo },
      await key({ tenant: 'globex', role: 'agent' }),
    );
    await register({ agent_id: 'a-shared', ...echo, shared: true }, ADMIN_KEY);
    const caller = await key({ tenant: 'acme', role: 'caller' });
    const list = async (k: string) =>
      (await service.app.inject({ url: '/v1/agents', headers: auth(k) })).json<{
        agents: AgentView[];
      }>().agents;
    const seen = await list(caller);
    expect(seen.map((a) => a.agent_id).sort()).toEqual(['a-acme', 'a-shared']);
    for (const a of seen) {
      expect(a.epoch).toBeUndefined();
      expect(a.instance_id).toBeUndefined();
    }
    const all = await list(ADMIN_KEY);
    expect(all.map((a) => [a.agent_id, a.tenant]).sort()).toEqual([
      ['a-acme', 'acme'],
      ['a-globex', 'globex'],
      ['a-shared', 'default'],
    ]);
    expect(all.every((a) => typeof a.epoch === 'number' && a.instance_id !== undefined)).toBe(true);
    const other = await service.app.inject({ url: '/v1/agents/a-globex', headers: auth(caller) });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toMatchObject({ error: 'AGENT_NOT_FOUND' });
    expect((await service.app.inject({ url: '/v1/agents', headers: {} })).statusCode).toBe(401);
  });
});
