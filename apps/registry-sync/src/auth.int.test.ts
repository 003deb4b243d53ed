/**
 * The auth hook on registry-sync with REACH_AUTH=required, on the real test Redis: the listings
 * need a key, registration an agent key; heartbeat, serve and deregister take the agent's token
 * alone (agent-token routes: no API key); health, liveness and metrics are open; a key revoked
 * through another process's store is refused within a second; open on loopback with auto.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys, type RegisterReply } from '@agent-reach/protocol';
import { ApiKeyStore } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from './index.ts';

const ADMIN = `admin-registry-${'r'.repeat(40)}`;
const prefix = randomPrefix();
let service: RegistryService;
let redis: Redis;
/** Another process's view of the same keys (a router's, say). */
let store: ApiKeyStore;

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, auth: 'required', adminKey: ADMIN },
    { logger: pino({ level: 'silent' }), housekeeping: false },
  );
  redis = new Redis(testServices().redisUrl);
  store = new ApiKeyStore({ redis, keys: reachKeys(prefix) });
});

afterAll(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('registry-sync with keys required', () => {
  it('answers 401 without a key and leaves health, liveness and metrics open', async () => {
    const list = await service.app.inject({ url: '/v1/agents' });
    expect(list.statusCode).toBe(401);
    expect(list.json()).toMatchObject({ error: 'UNAUTHORIZED' });
    const register = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/register',
      payload: { agent_id: 'auth-a1', capabilities: ['echo'], max_concurrency: 1 },
    });
    expect(register.statusCode).toBe(401);
    for (const url of ['/healthz', '/livez', '/metrics', '/docs/json'])
      expect((await service.app.inject({ url })).statusCode, url).toBe(200);
  });

  it('registers with an agent key; heartbeat and deregister take the agent token, not a key', async () => {
    const { key } = await store.create({ tenant: 'default', role: 'agent' });
    const res = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/register',
      headers: bearer(key),
      payload: { agent_id: 'auth-a2', capabilities: ['echo'], max_concurrency: 1 },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { token } = res.json<RegisterReply>();
    const beat = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/auth-a2/heartbeat',
      headers: bearer(token),
      payload: { inflight: 0 },
    });
    expect(beat.statusCode, beat.body).toBe(200);
    // The API key is not the agent's token.
    const withKey = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/auth-a2/heartbeat',
      headers: bearer(key),
      payload: { inflight: 0 },
    });
    expect(withKey.statusCode).toBe(401);
    const gone = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/auth-a2/deregister',
      headers: bearer(token),
    });
    expect(gone.statusCode, gone.body).toBe(200);
  });

  it('answers 403 to a caller key at registration', async () => {
    const { key } = await store.create({ tenant: 'default', role: 'caller' });
    const res = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/register',
      headers: bearer(key),
      payload: { agent_id: 'auth-a3', capabilities: ['echo'], max_concurrency: 1 },
    });
    expect(res.statusCode).toBe(403);
    expect((await service.app.inject({ url: '/v1/agents', headers: bearer(key) })).statusCode).toBe(
      200,
    );
  });

  it('refuses a key revoked by another process within a second', async () => {
    const { record, key } = await store.create({ tenant: 'default', role: 'caller' });
    expect((await service.app.inject({ url: '/v1/agents', headers: bearer(key) })).statusCode).toBe(
      200,
    );
    const start = Date.now();
    await store.revoke(record.keyId);
    for (;;) {
      const res = await service.app.inject({ url: '/v1/agents', headers: bearer(key) });
      if (res.statusCode === 401) break;
      expect(Date.now() - start).toBeLessThan(1000);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(Date.now() - start).toBeLessThan(1000);
  });

  it('takes the admin key as an operator', async () => {
    const res = await service.app.inject({ url: '/v1/agents', headers: bearer(ADMIN) });
    expect(res.statusCode).toBe(200);
  });
});

describe('registry-sync start-up', () => {
  it('is open on loopback with REACH_AUTH=auto, and refuses 0.0.0.0 without REACH_ADMIN_KEY', async () => {
    const open = await createRegistryService(
      { redisUrl: testServices().redisUrl, prefix: randomPrefix(), host: '127.0.0.1' },
      { logger: pino({ level: 'silent' }), housekeeping: false },
    );
    try {
      expect((await open.app.inject({ url: '/v1/agents' })).statusCode).toBe(200);
    } finally {
      await open.close();
    }
    await expect(
      createRegistryService(
        { redisUrl: testServices().redisUrl, prefix: randomPrefix(), host: '0.0.0.0' },
        { logger: pino({ level: 'silent' }), housekeeping: false },
      ),
    ).rejects.toThrow(/REACH_ADMIN_KEY must be set/);
  });
});
