/**
 * The endpoint declarations API on a registry-sync in process, keys required, on the real test
 * Redis: who may declare what, tenants, the URL check, secrets stored apart and never answered,
 * each change announced to relays, and no secret in the logs (captured at trace).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import {
  decodeEndpointRecord,
  reachKeys,
  type EndpointView,
  type ReachKeys,
} from '@agent-reach/protocol';
import { ApiKeyStore, serviceLogger, type NewApiKey } from '@agent-reach/service-kit';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

const ADMIN = `admin-${'x'.repeat(40)}`;
const logLines: string[] = [];
const capture = new Writable({
  write(chunk: Buffer, _enc, done) {
    logLines.push(chunk.toString());
    done();
  },
});
let service: RegistryService;
let redis: Redis;
let subscriber: Redis;
let keys: ReachKeys;
let prefix: string;
let store: ApiKeyStore;
/** The test Redis's port: a loopback service that is not HTTP. */
const redisPort = () => new URL(testServices().redisUrl).port || '6379';
/** Every agent_id announced on the endpoints channel, in order. */
const announced: string[] = [];

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
      endpointHosts: ['agents.internal'],
      // The endpoints declared here are on loopback.
      outboundLoopback: 'on',
    },
    { logger: serviceLogger('registry-sync', 'trace', capture) },
  );
  redis = new Redis(testServices().redisUrl);
  subscriber = new Redis(testServices().redisUrl);
  subscriber.on('message', (_channel: string, id: string) => announced.push(id));
  await subscriber.subscribe(keys.endpointsChannel());
  store = new ApiKeyStore({ redis, keys });
});

afterAll(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
  await subscriber.quit();
});

const key = async (input: NewApiKey): Promise<string> => (await store.create(input)).key;
const auth = (k: string) => ({ authorization: `Bearer ${k}` });

const put = (agentId: string, body: Record<string, unknown>, apiKey?: string) =>
  service.app.inject({
    method: 'PUT',
    url: `/v1/endpoints/${agentId}`,
    payload: body,
    ...(apiKey ? { headers: auth(apiKey) } : {}),
  });
const get = (url: string, apiKey: string) =>
  service.app.inject({ method: 'GET', url, headers: auth(apiKey) });
const del = (agentId: string, apiKey: string) =>
  service.app.inject({ method: 'DELETE', url: `/v1/endpoints/${agentId}`, headers: auth(apiKey) });

const a2a = { protocol: 'a2a', url: 'http://127.0.0.1:9001' };

describe('declaring an endpoint agent', () => {
  it('stores the declaration with the key’s tenant and capabilities, secrets apart, and announces it', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent', capabilities: ['score', 'rank'] });
    const res = await put(
      'scorer',
      {
        protocol: 'http',
        url: 'http://agents.internal:8080/score',
        capabilities: ['score'],
        headers: { 'X-Api-Key': 'hush-header-1' },
        bearer_secret: 'hush-bearer-1',
      },
      acme,
    );
    expect(res.statusCode).toBe(200);
    const view = res.json<EndpointView & Record<string, unknown>>();
    expect(view).toMatchObject({
      agent_id: 'scorer',
      protocol: 'http',
      capabilities: ['score'],
      max_concurrency: 4,
      timeout_ms: 60_000,
      shared: false,
      tenant: 'acme',
      source: 'api',
      header_names: ['X-Api-Key'],
      has_bearer_secret: true,
    });
    expect(view.created_at).toBe(view.updated_at);
    expect(res.body).not.toContain('hush');
    expect(view).not.toHaveProperty('key_capabilities');
    const stored = decodeEndpointRecord(await redis.hget(keys.endpoints(), 'scorer'));
    expect(stored).toMatchObject({ tenant: 'acme', key_capabilities: ['score', 'rank'] });
    expect(JSON.stringify(stored)).not.toContain('hush');
    expect(JSON.parse((await redis.hget(keys.endpointSecrets(), 'scorer')) ?? '{}')).toEqual({
      headers: { 'X-Api-Key': 'hush-header-1' },
      bearer_secret: 'hush-bearer-1',
    });
    await waitFor(() => announced.includes('scorer'), { timeoutMs: 2000 });
  });

  it('replaces a declaration whole: created_at kept, secrets not given dropped', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent' });
    const first = (
      await put('replaced', { ...a2a, bearer_secret: 'hush-2' }, acme)
    ).json<EndpointView>();
    const again = await put('replaced', { ...a2a, max_concurrency: 9 }, acme);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({
      created_at: first.created_at,
      max_concurrency: 9,
      has_bearer_secret: false,
    });
    expect(await redis.hexists(keys.endpointSecrets(), 'replaced')).toBe(0);
  });

  it('refuses no key (401), a caller key and a relay key (403); a relay key reads nothing', async () => {
    expect((await put('x1', a2a)).statusCode).toBe(401);
    for (const role of ['caller', 'relay'] as const) {
      const refused = await put('x1', a2a, await key({ tenant: 'acme', role }));
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toMatchObject({ error: 'FORBIDDEN' });
    }
    // Routes that name no roles take caller, operator and agent keys only.
    const relay = await key({ tenant: 'default', role: 'relay' });
    expect((await get('/v1/endpoints', relay)).statusCode).toBe(403);
    expect((await get('/v1/agents', relay)).statusCode).toBe(403);
    expect(
      (await get('/v1/endpoints', await key({ tenant: 'acme', role: 'caller' }))).statusCode,
    ).toBe(200);
  });

  it('refuses a capability the key does not cover, naming it, and shared without an operator key', async () => {
    const narrow = await key({ tenant: 'acme', role: 'agent', capabilities: ['score'] });
    const short = await put('x2', { ...a2a, capabilities: ['score', 'translate'] }, narrow);
    expect(short.statusCode).toBe(403);
    expect(short.json<{ message: string }>().message).toContain('translate');
    const shared = await put('x2', { ...a2a, shared: true }, narrow);
    expect(shared.statusCode).toBe(403);
    const ok = await put('x2', { ...a2a, shared: true }, ADMIN);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ shared: true, tenant: 'default' });
  });

  it('answers INVALID_ENDPOINT for an http endpoint without capabilities', async () => {
    const res = await put('x3', { protocol: 'http', url: 'http://127.0.0.1:9' }, ADMIN);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'INVALID_ENDPOINT' });
    expect(res.json<{ message: string }>().message).toContain('capabilities');
    expect((await put('x3', { ...a2a, capabilities: ['_probe'] }, ADMIN)).statusCode).toBe(400);
  });

  it('checks url and health_url as card URLs are checked: ENDPOINT_URL_NOT_ALLOWED', async () => {
    const refused = async (body: Record<string, unknown>) => {
      const res = await put('x4', body, ADMIN);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'ENDPOINT_URL_NOT_ALLOWED' });
      return res.json<{ message: string }>().message;
    };
    expect(await refused({ protocol: 'a2a', url: 'http://example.com/agent' })).toContain(
      'REACH_ENDPOINT_HOSTS',
    );
    expect(await refused({ protocol: 'a2a', url: 'http://user:pw@127.0.0.1:9' })).toContain(
      'credentials',
    );
    expect(await refused({ ...a2a, health_url: 'http://169.254.169.254/' })).toContain(
      'health_url',
    );
    const allowed = await put('x4', { protocol: 'mcp', url: 'https://Agents.Internal/mcp' }, ADMIN);
    expect(allowed.statusCode).toBe(200);
  });

  it('keys required, no REACH_OUTBOUND_LOOPBACK=on: a loopback url is refused, whatever listens', async () => {
    const closed = await createRegistryService(
      {
        redisUrl: testServices().redisUrl,
        prefix,
        auth: 'required',
        adminKey: ADMIN,
        probeIntervalMs: 60_000,
      },
      { logger: serviceLogger('registry-sync', 'silent'), housekeeping: false },
    );
    try {
      const messages = new Set<string>();
      for (const url of ['http://127.0.0.1:1/', `http://127.0.0.1:${redisPort()}/`]) {
        const res = await closed.app.inject({
          method: 'PUT',
          url: '/v1/endpoints/x5',
          headers: { authorization: `Bearer ${ADMIN}` },
          payload: { protocol: 'a2a', url },
        });
        expect(res.statusCode).toBe(403);
        expect(res.json()).toMatchObject({ error: 'ENDPOINT_URL_NOT_ALLOWED' });
        messages.add(res.json<{ message: string }>().message);
      }
      expect([...messages]).toEqual([
        'url host 127.0.0.1 is not in REACH_ENDPOINT_HOSTS (a loopback host needs REACH_OUTBOUND_LOOPBACK=on while API keys are required); ask the operator to allow the host',
      ]);
    } finally {
      await closed.close();
    }
  });
});

describe('tenants', () => {
  it('keeps a declaration to its tenant: another tenant is refused, and sees nothing', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent' });
    const globex = await key({ tenant: 'globex', role: 'agent' });
    expect((await put('acme-1', a2a, acme)).statusCode).toBe(200);
    const taken = await put('acme-1', a2a, globex);
    expect(taken.statusCode).toBe(403);
    expect(taken.json()).toMatchObject({ error: 'FORBIDDEN' });
    expect(decodeEndpointRecord(await redis.hget(keys.endpoints(), 'acme-1'))?.tenant).toBe('acme');
    for (const res of [await get('/v1/endpoints/acme-1', globex), await del('acme-1', globex)]) {
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: 'ENDPOINT_NOT_FOUND' });
    }
    const theirs = (await get('/v1/endpoints', globex)).json<{ endpoints: EndpointView[] }>();
    expect(theirs.endpoints.map((e) => e.agent_id)).not.toContain('acme-1');
    const ours = (await get('/v1/endpoints', acme)).json<{ endpoints: EndpointView[] }>();
    expect(ours.endpoints.every((e) => e.tenant === 'acme')).toBe(true);
    expect(ours.endpoints.map((e) => e.agent_id)).toContain('acme-1');
    const all = (await get('/v1/endpoints', ADMIN)).json<{ endpoints: EndpointView[] }>();
    expect(new Set(all.endpoints.map((e) => e.tenant))).toEqual(new Set(['acme', 'default']));
    expect(JSON.stringify(all)).not.toContain('hush');
    expect((await get('/v1/endpoints/acme-1', acme)).statusCode).toBe(200);
  });

  it('refuses an agent_id a registered agent of another tenant holds', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent' });
    const globex = await key({ tenant: 'globex', role: 'agent' });
    const registered = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/register',
      headers: auth(acme),
      payload: { agent_id: 'worker-9', capabilities: ['echo'], max_concurrency: 1 },
    });
    expect(registered.statusCode).toBe(200);
    const res = await put('worker-9', a2a, globex);
    expect(res.statusCode).toBe(403);
    expect(await redis.hexists(keys.endpoints(), 'worker-9')).toBe(0);
    expect((await put('worker-9', a2a, acme)).statusCode).toBe(200);
  });
});

describe('removing an endpoint agent', () => {
  it('deletes the declaration and its secrets, announces it, and is 404 after', async () => {
    const acme = await key({ tenant: 'acme', role: 'agent' });
    await put('gone-1', { ...a2a, bearer_secret: 'hush-3' }, acme);
    const seen = announced.length;
    const res = await del('gone-1', acme);
    expect(res.statusCode).toBe(204);
    expect(await redis.hexists(keys.endpoints(), 'gone-1')).toBe(0);
    expect(await redis.hexists(keys.endpointSecrets(), 'gone-1')).toBe(0);
    await waitFor(() => announced.slice(seen).includes('gone-1'), { timeoutMs: 2000 });
    expect((await del('gone-1', acme)).statusCode).toBe(404);
  });
});

describe('the logs', () => {
  it('never hold a secret, not even from a body that is not JSON', async () => {
    const broken = await service.app.inject({
      method: 'PUT',
      url: '/v1/endpoints/broken',
      headers: { ...auth(ADMIN), 'content-type': 'application/json' },
      payload: '{"protocol": "a2a", "url": "http://127.0.0.1:1", "bearer_secret": hush-4}',
    });
    expect(broken.statusCode).toBe(400);
    expect(logLines.join('')).toContain('endpoint agent declared');
    expect(logLines.join('')).not.toContain('hush');
  });
});
