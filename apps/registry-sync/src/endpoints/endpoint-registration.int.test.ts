/**
 * A relay's registration of a declared endpoint agent, keys required, on the real test Redis:
 * only relay and operator keys; the declaration decides the tenant, placement, meta and which
 * capabilities may be registered; the agent is a real instance, marked `relay`, in the snapshot
 * when the relay has its reply.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RELAY_FIELD, reachKeys, type ReachKeys, type RegisterReply } from '@agent-reach/protocol';
import { ApiKeyStore, type NewApiKey } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import pino from 'pino';
import { createRegistryService, type RegistryService } from '../index.ts';
import { routerRegistry } from '../testing/router-registry.ts';

const ADMIN = `admin-${'x'.repeat(40)}`;
let service: RegistryService;
let redis: Redis;
let keys: ReachKeys;
let prefix: string;
let store: ApiKeyStore;
let relayKey: string;

beforeAll(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  service = await createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      auth: 'required',
      adminKey: ADMIN,
      probeIntervalMs: 60_000,
      // The endpoints declared here are on loopback.
      outboundLoopback: 'on',
    },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
  store = new ApiKeyStore({ redis, keys });
  relayKey = await key({ tenant: 'default', role: 'relay' });
});

afterAll(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

const key = async (input: NewApiKey): Promise<string> => (await store.create(input)).key;
const auth = (k: string) => ({ authorization: `Bearer ${k}` });

async function declare(agentId: string, body: Record<string, unknown>, apiKey = ADMIN) {
  const res = await service.app.inject({
    method: 'PUT',
    url: `/v1/endpoints/${agentId}`,
    headers: auth(apiKey),
    payload: body,
  });
  expect(res.statusCode).toBe(200);
}

const register = (agentId: string, body: Record<string, unknown>, apiKey = relayKey) =>
  service.app.inject({
    method: 'POST',
    url: `/v1/endpoints/${agentId}/register`,
    headers: auth(apiKey),
    payload: { instance_id: `relay-1.${agentId}`, ...body },
  });

describe('a relay registers an endpoint agent', () => {
  it('as its declaration says, marked relay, in the snapshot when the reply comes', async () => {
    const acme = await key({
      tenant: 'acme',
      role: 'agent',
      capabilities: ['x.summarise', 'x.translate'],
    });
    await declare(
      'summariser',
      {
        protocol: 'a2a',
        url: 'http://127.0.0.1:9001',
        capability_prefix: 'x.',
        max_concurrency: 7,
        region: 'eu-west',
        tags: ['gpu'],
        meta: { team: 'nlp' },
      },
      acme,
    );
    const card = { name: 'Summariser', skills: [{ id: 'summarise' }] };
    const res = await register('summariser', {
      capabilities: ['x.summarise'],
      input_schemas: { 'x.summarise': { type: 'object' } },
      card,
    });
    expect(res.statusCode).toBe(200);
    const reply = res.json<RegisterReply>();
    expect(reply).toMatchObject({
      agent_id: 'summariser',
      instance_id: 'relay-1.summariser',
      tenant: 'acme',
      shared: false,
      stream: keys.inbox('summariser'),
    });
    const record = await redis.hgetall(keys.agent('summariser'));
    expect(record).toMatchObject({
      [RELAY_FIELD]: '1',
      tenant: 'acme',
      max_concurrency: '7',
      region: 'eu-west',
      status: 'HEALTHY',
    });
    expect(JSON.parse(record['capabilities'] ?? '[]')).toEqual(['x.summarise']);
    expect(JSON.parse(record['tags'] ?? '[]')).toEqual(['gpu']);
    expect(JSON.parse(record['meta'] ?? '{}')).toEqual({
      team: 'nlp',
      endpoint_protocol: 'a2a',
      endpoint_url: 'http://127.0.0.1:9001',
    });
    expect((await routerRegistry(redis, keys)).agent('summariser')).toBeDefined();
    const stored = await service.app.inject({
      method: 'GET',
      url: '/v1/agents/summariser/card',
      headers: auth(ADMIN),
    });
    expect(stored.json()).toEqual(card);
  });

  it('takes only relay and operator keys', async () => {
    await declare('open-1', { protocol: 'mcp', url: 'http://127.0.0.1:9002/mcp' });
    for (const role of ['agent', 'caller'] as const) {
      const res = await register(
        'open-1',
        { capabilities: ['tool'] },
        await key({ tenant: 'default', role }),
      );
      expect(res.statusCode).toBe(403);
    }
    expect((await register('open-1', { capabilities: ['tool'] }, ADMIN)).statusCode).toBe(200);
    expect((await register('open-1', { capabilities: ['tool'] })).statusCode).toBe(200);
  });

  it('answers ENDPOINT_NOT_FOUND for an agent nobody declared', async () => {
    const res = await register('nobody', { capabilities: ['echo'] });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ error: 'ENDPOINT_NOT_FOUND' });
    expect(await redis.exists(keys.agent('nobody'))).toBe(0);
  });
});

describe('the capabilities a relay may register', () => {
  it('http: only the declared ones', async () => {
    await declare('scorer', {
      protocol: 'http',
      url: 'http://127.0.0.1:9003',
      capabilities: ['score'],
    });
    const res = await register('scorer', { capabilities: ['score', 'rank'] });
    expect(res.statusCode).toBe(403);
    expect(res.json<{ message: string }>().message).toContain('rank');
    expect(await redis.exists(keys.agent('scorer'))).toBe(0);
    expect((await register('scorer', { capabilities: ['score'] })).statusCode).toBe(200);
  });

  it('a2a and mcp: within the declared list, and within the declaring key’s capabilities', async () => {
    await declare('listed', {
      protocol: 'a2a',
      url: 'http://127.0.0.1:9004',
      capabilities: ['alpha', 'beta'],
    });
    const outside = await register('listed', { capabilities: ['alpha', 'gamma'] });
    expect(outside.statusCode).toBe(403);
    expect(outside.json<{ message: string }>().message).toContain('gamma');
    expect((await register('listed', { capabilities: ['beta'] })).statusCode).toBe(200);

    const narrow = await key({ tenant: 'acme', role: 'agent', capabilities: ['alpha'] });
    await declare('narrow', { protocol: 'mcp', url: 'http://127.0.0.1:9005/mcp' }, narrow);
    const beyond = await register('narrow', { capabilities: ['alpha', 'delta'] });
    expect(beyond.statusCode).toBe(403);
    expect(beyond.json<{ message: string }>().message).toContain('delta');
    expect((await register('narrow', { capabilities: ['alpha'] })).statusCode).toBe(200);
  });

  it('registers a shared declaration shared, and a plain registration takes the relay mark off', async () => {
    await declare('everyone', {
      protocol: 'a2a',
      url: 'http://127.0.0.1:9006',
      shared: true,
    });
    const res = await register('everyone', { capabilities: ['common'] });
    expect(res.json()).toMatchObject({ shared: true, tenant: 'default' });
    expect(await redis.hget(keys.agent('everyone'), RELAY_FIELD)).toBe('1');
    const plain = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/register',
      headers: auth(ADMIN),
      payload: { agent_id: 'everyone', capabilities: ['common'], max_concurrency: 1 },
    });
    expect(plain.statusCode).toBe(200);
    expect(await redis.hget(keys.agent('everyone'), RELAY_FIELD)).toBeNull();
  });
});
