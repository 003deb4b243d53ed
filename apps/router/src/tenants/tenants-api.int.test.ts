/**
 * Tenant records through the router's API on a real Redis, keys required: an operator sets and
 * reads them (a partial update keeps the other fields), a caller key is refused, bad values are
 * 400, the list is by name, and a record written through one router is seen by another on the
 * same prefix within the cache time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  DEFAULT_MAX_FAIRNESS_WEIGHT,
  DEFAULT_TENANT_WEIGHT,
  reachKeys,
  type TenantsReply,
  type TenantView,
} from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../index.ts';

const ADMIN = 'admin-key-for-the-tenant-records-test-0123456789';
const prefix = randomPrefix();
const routers: RouterService[] = [];
let r1: RouterService;
let redis: Redis;
let callerKey: string;

async function router(): Promise<RouterService> {
  const r = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix, auth: 'required', adminKey: ADMIN },
    { logger: pino({ level: 'silent' }) },
  );
  routers.push(r);
  return r;
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

const put = (tenant: string, payload: Record<string, unknown>, key = ADMIN, on = r1) =>
  on.app.inject({ method: 'PUT', url: `/v1/tenants/${tenant}`, headers: auth(key), payload });

const get = (url: string, key = ADMIN, on = r1) => on.app.inject({ url, headers: auth(key) });

beforeAll(async () => {
  r1 = await router();
  redis = new Redis(testServices().redisUrl);
  const res = await r1.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: auth(ADMIN),
    payload: { tenant: 'acme', role: 'caller' },
  });
  expect(res.statusCode).toBe(201);
  callerKey = res.json<{ key: string }>().key;
});

afterAll(async () => {
  for (const r of routers) await r.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('tenant records', () => {
  it('show the defaults for a tenant with no record', async () => {
    const res = await get('/v1/tenants/nobody');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      tenant: 'nobody',
      weight: DEFAULT_TENANT_WEIGHT,
      max_queued: 0,
      max_inflight: 0,
      max_fairness_weight: DEFAULT_MAX_FAIRNESS_WEIGHT,
      updated_at: 0,
    });
  });

  it('are set by PUT and read back by GET', async () => {
    const before = Date.now();
    const res = await put('acme', {
      weight: 3,
      max_queued: 500,
      max_inflight: 20,
      max_fairness_weight: 4,
    });
    expect(res.statusCode, res.body).toBe(200);
    const view = res.json<TenantView>();
    expect(view).toMatchObject({
      tenant: 'acme',
      weight: 3,
      max_queued: 500,
      max_inflight: 20,
      max_fairness_weight: 4,
    });
    expect(view.updated_at).toBeGreaterThanOrEqual(before);
    const read = await get('/v1/tenants/acme');
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(view);
    // Stored under the key builder's names.
    const keys = reachKeys(prefix);
    expect(await redis.hget(keys.tenant('acme'), 'weight')).toBe('3');
    expect(await redis.sismember(keys.tenants(), 'acme')).toBe(1);
  });

  it('keep the fields a second PUT does not give', async () => {
    const res = await put('acme', { weight: 0.5 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({
      weight: 0.5,
      max_queued: 500,
      max_inflight: 20,
      max_fairness_weight: 4,
    });
    expect((await get('/v1/tenants/acme')).json()).toMatchObject({
      weight: 0.5,
      max_queued: 500,
    });
  });

  it('answer 403 FORBIDDEN to a caller key on every route', async () => {
    for (const res of [
      await put('acme', { weight: 9 }, callerKey),
      await get('/v1/tenants', callerKey),
      await get('/v1/tenants/acme', callerKey),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json()).toMatchObject({ error: 'FORBIDDEN' });
    }
    expect((await get('/v1/tenants/acme')).json()).toMatchObject({ weight: 0.5 });
  });

  it('refuse bad values and an empty body with 400 INVALID_BODY', async () => {
    const bodies: Record<string, unknown>[] = [
      { weight: 0 },
      { weight: -1 },
      { weight: 2000 },
      { weight: 'x' },
      { max_queued: 1.5 },
      { max_inflight: -1 },
      { max_fairness_weight: 0 },
      { weight: 2, colour: 'red' },
      {},
    ];
    for (const body of bodies) {
      const res = await put('acme', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json()).toMatchObject({ error: 'INVALID_BODY' });
    }
    expect((await get('/v1/tenants/acme')).json()).toMatchObject({ weight: 0.5 });
  });

  it('refuse a name that is no tenant’s with 400', async () => {
    for (const name of ['Acme', 'a'.repeat(33), '-acme']) {
      const read = await get(`/v1/tenants/${name}`);
      expect(read.statusCode, name).toBe(400);
      expect(read.json()).toMatchObject({ error: 'INVALID_PARAMS' });
      expect((await put(name, { weight: 2 })).statusCode, name).toBe(400);
    }
  });

  it('are listed by name, every tenant with a record', async () => {
    expect((await put('globex', { max_inflight: 4 })).statusCode).toBe(200);
    expect((await put('beta', { max_queued: 7 })).statusCode).toBe(200);
    const res = await get('/v1/tenants');
    expect(res.statusCode).toBe(200);
    const { tenants } = res.json<TenantsReply>();
    expect(tenants.map((t) => t.tenant)).toEqual(['acme', 'beta', 'globex']);
    expect(tenants[2]).toMatchObject({ tenant: 'globex', weight: 1, max_inflight: 4 });
  });

  it('written through one router are seen by another within the cache time', async () => {
    const r2 = await router();
    // r2 reads acme now, so its cache holds the record before the change.
    expect((await get('/v1/tenants/acme', ADMIN, r2)).json()).toMatchObject({ weight: 0.5 });
    expect((await r2.tenants.get('acme')).weight).toBe(0.5);
    const changedAt = Date.now();
    expect((await put('acme', { weight: 7 })).statusCode).toBe(200);
    await waitFor(async () => (await r2.tenants.get('acme')).weight === 7, {
      timeoutMs: 3000,
      intervalMs: 20,
      message: 'the second router to see the new weight',
    });
    // The default cache time is a second; the poll's own interval on top.
    expect(Date.now() - changedAt).toBeLessThan(1500);
    expect((await get('/v1/tenants/acme', ADMIN, r2)).json()).toMatchObject({ weight: 7 });
  });
});
