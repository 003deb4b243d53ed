/**
 * API keys on routers in process, on the real test Redis: the keys API, 401 without or with a
 * bad key, 403 for the wrong role, expiry, a revocation seen by another router within a second,
 * public routes, open mode on loopback, the refusals at start-up, the console's login cookie, and
 * no secret in the logs of all of it (captured at debug).
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { reachKeys, type CreateKeyReply, type KeysReply } from '@agent-reach/protocol';
import { serviceLogger } from '@agent-reach/service-kit';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../../index.ts';

const ADMIN = `admin-${'x'.repeat(40)}`;
const logLines: string[] = [];
const capture = new Writable({
  write(chunk: Buffer, _enc, done) {
    logLines.push(chunk.toString());
    done();
  },
});
const logger = serviceLogger('router', 'debug', capture);
const prefix = randomPrefix();
const routers: RouterService[] = [];
let r1: RouterService;
let r2: RouterService;
let redis: Redis;
/** Every secret the tests handle: none may appear in the logs. */
const secrets: string[] = [ADMIN];

async function router(opts: Record<string, unknown> = {}): Promise<RouterService> {
  const r = await createRouterService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      auth: 'required',
      adminKey: ADMIN,
      ...opts,
    },
    { logger },
  );
  routers.push(r);
  return r;
}

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

async function createKey(
  body: Record<string, unknown>,
  on: RouterService = r1,
): Promise<CreateKeyReply> {
  const res = await on.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: auth(ADMIN),
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(201);
  const reply = res.json<CreateKeyReply>();
  secrets.push(reply.key);
  return reply;
}

/** Polls until `check` holds; returns how long it took. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

beforeAll(async () => {
  r1 = await router();
  r2 = await router();
  redis = new Redis(testServices().redisUrl);
});

afterAll(async () => {
  await Promise.all(routers.map((r) => r.close()));
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('API keys on the router', () => {
  it('answers 401 without a key, with a bad one, and with a key in the query string', async () => {
    const none = await r1.app.inject({ url: '/v1/dlq' });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toMatchObject({ error: 'UNAUTHORIZED' });
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const bad = await r1.app.inject({
      url: '/v1/dlq',
      headers: auth(`rk_${'0'.repeat(16)}_${'A'.repeat(43)}`),
    });
    expect(bad.statusCode).toBe(401);
    const basic = await r1.app.inject({ url: '/v1/dlq', headers: { authorization: 'Basic eDp5' } });
    expect(basic.statusCode).toBe(401);
    const query = await r1.app.inject({ url: `/v1/dlq?key=${ADMIN}` });
    expect(query.statusCode).toBe(401);
    // No route: refused like any other without a key, never a 500.
    const unknown = await r1.app.inject({ url: '/v1/nowhere' });
    expect(unknown.statusCode).toBe(401);
    const unknownWithKey = await r1.app.inject({ url: '/v1/nowhere', headers: auth(ADMIN) });
    expect(unknownWithKey.statusCode).toBe(404);
  });

  it('leaves health, liveness, metrics and the docs open', async () => {
    for (const url of ['/livez', '/healthz', '/metrics', '/docs/json', '/console']) {
      const res = await r1.app.inject({ url });
      expect(res.statusCode, url).not.toBe(401);
    }
  });

  it('says in the OpenAPI document which routes take a key', async () => {
    const doc = (await r1.app.inject({ url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { security?: unknown }>>;
      components: { securitySchemes: Record<string, { scheme: string }> };
    }>();
    expect(doc.components.securitySchemes['apiKey']?.scheme).toBe('bearer');
    expect(doc.paths['/v1/keys']?.['post']?.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/v1/tasks']?.['post']?.security).toEqual([{ apiKey: [] }]);
    expect(doc.paths['/metrics']?.['get']?.security).toEqual([]);
  });

  it('makes, lists and revokes keys; the secret is shown once and stored only as a hash', async () => {
    const made = await createKey({
      tenant: 'acme',
      role: 'caller',
      label: 'ci',
      capabilities: ['echo'],
    });
    expect(made).toMatchObject({
      tenant: 'acme',
      role: 'caller',
      label: 'ci',
      capabilities: ['echo'],
      expires_at: null,
    });
    expect(made.key).toMatch(new RegExp(`^rk_${made.key_id}_[A-Za-z0-9_-]{43}$`));
    const list = await r1.app.inject({ url: '/v1/keys', headers: auth(ADMIN) });
    expect(list.statusCode).toBe(200);
    const item = list.json<KeysReply>().items.find((k) => k.key_id === made.key_id);
    expect(item).toMatchObject({ tenant: 'acme', role: 'caller', label: 'ci' });
    expect(item?.created_at).toBeGreaterThan(Date.now() - 60_000);
    expect(list.body).not.toContain(made.key.slice(20));
    const stored = await redis.hgetall(reachKeys(prefix).apiKey(made.key_id));
    expect(JSON.stringify(stored)).not.toContain(made.key.slice(20));
    const gone = await r1.app.inject({
      method: 'DELETE',
      url: `/v1/keys/${made.key_id}`,
      headers: auth(ADMIN),
    });
    expect(gone.statusCode).toBe(204);
    const again = await r1.app.inject({
      method: 'DELETE',
      url: `/v1/keys/${made.key_id}`,
      headers: auth(ADMIN),
    });
    expect(again.statusCode).toBe(404);
  });

  it('refuses a bad body and an expiry in the past', async () => {
    const res = await r1.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(ADMIN),
      payload: { tenant: 'acme', role: 'caller', expires_at: Date.now() - 1000 },
    });
    expect(res.statusCode).toBe(400);
    const role = await r1.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(ADMIN),
      payload: { tenant: 'acme', role: 'root' },
    });
    expect(role.statusCode).toBe(400);
  });

  it('answers 403 FORBIDDEN to a key of the wrong role', async () => {
    const caller = await createKey({ tenant: 'acme', role: 'caller' });
    const agent = await createKey({ tenant: 'acme', role: 'agent' });
    const keys = await r1.app.inject({ url: '/v1/keys', headers: auth(caller.key) });
    expect(keys.statusCode).toBe(403);
    expect(keys.json()).toMatchObject({ error: 'FORBIDDEN' });
    const make = await r1.app.inject({
      method: 'POST',
      url: '/v1/keys',
      headers: auth(caller.key),
      payload: { tenant: 'acme', role: 'operator' },
    });
    expect(make.statusCode).toBe(403);
    const route = await r1.app.inject({
      url: '/v1/route?capability=echo',
      headers: auth(agent.key),
    });
    expect(route.statusCode).toBe(403);
    const routeCaller = await r1.app.inject({
      url: '/v1/route?capability=echo',
      headers: auth(caller.key),
    });
    expect([401, 403]).not.toContain(routeCaller.statusCode);
    const dlq = await r1.app.inject({ url: '/v1/dlq', headers: auth(agent.key) });
    expect(dlq.statusCode).toBe(200);
  });

  it('refuses an expired key', async () => {
    const short = await createKey({ tenant: 'acme', role: 'caller', expires_at: Date.now() + 400 });
    const now = await r1.app.inject({ url: '/v1/dlq', headers: auth(short.key) });
    expect(now.statusCode).toBe(200);
    await within(3000, async () => {
      const res = await r1.app.inject({ url: '/v1/dlq', headers: auth(short.key) });
      return res.statusCode === 401;
    });
  });

  it('a key revoked on one router is refused by another within a second', async () => {
    const key = await createKey({ tenant: 'acme', role: 'caller' });
    // The second router has the key cached.
    const before = await r2.app.inject({ url: '/v1/dlq', headers: auth(key.key) });
    expect(before.statusCode).toBe(200);
    const revokedAt = Date.now();
    const del = await r1.app.inject({
      method: 'DELETE',
      url: `/v1/keys/${key.key_id}`,
      headers: auth(ADMIN),
    });
    expect(del.statusCode).toBe(204);
    const took = await within(1000, async () => {
      const res = await r2.app.inject({ url: '/v1/dlq', headers: auth(key.key) });
      return res.statusCode === 401;
    });
    expect(Date.now() - revokedAt).toBeLessThan(1000);
    expect(took).toBeLessThan(1000);
  });
});

describe('the console login', () => {
  it('sets an HttpOnly SameSite=Strict cookie the console reads with, and logs out', async () => {
    const caller = await createKey({ tenant: 'acme', role: 'caller' });
    const login = await r1.app.inject({
      method: 'POST',
      url: '/v1/console/login',
      payload: { key: caller.key },
    });
    expect(login.statusCode).toBe(200);
    expect(login.json()).toEqual({ key_id: caller.key_id, tenant: 'acme', role: 'caller' });
    const setCookie = String(login.headers['set-cookie']);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    const cookie = setCookie.split(';')[0] ?? '';
    const session = await r1.app.inject({ url: '/v1/console/session', headers: { cookie } });
    expect(session.json()).toMatchObject({ tenant: 'acme', role: 'caller' });
    const agents = await r1.app.inject({ url: '/v1/console/agents', headers: { cookie } });
    expect(agents.statusCode).toBe(200);
    // The cookie alone reads; it writes only beside the console's header, which a page of
    // another origin cannot send without a preflight.
    const submit = await r1.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { cookie },
      payload: { capability: 'echo', payload: {} },
    });
    expect(submit.statusCode).toBe(401);
    const wrongMark = await r1.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { cookie, 'x-reach-console': 'yes' },
      payload: { capability: 'echo', payload: {} },
    });
    expect(wrongMark.statusCode).toBe(401);
    const fromConsole = await r1.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { cookie, 'x-reach-console': '1' },
      payload: { capability: 'echo', payload: {} },
    });
    expect(fromConsole.statusCode, fromConsole.body).not.toBe(401);
    expect(fromConsole.statusCode).not.toBe(403);
    const logout = await r1.app.inject({
      method: 'POST',
      url: '/v1/console/logout',
      headers: { cookie },
    });
    expect(logout.statusCode).toBe(204);
    expect(String(logout.headers['set-cookie'])).toMatch(/reach_key=;/);
  });

  it('refuses a bad key and an agent key', async () => {
    const bad = await r1.app.inject({
      method: 'POST',
      url: '/v1/console/login',
      payload: { key: 'nope' },
    });
    expect(bad.statusCode).toBe(401);
    const agent = await createKey({ tenant: 'acme', role: 'agent' });
    const res = await r1.app.inject({
      method: 'POST',
      url: '/v1/console/login',
      payload: { key: agent.key },
    });
    expect(res.statusCode).toBe(403);
    const page = await r1.app.inject({ url: '/v1/console/agents' });
    expect(page.statusCode).toBe(401);
  });
});

describe('start-up', () => {
  it('is open on loopback with REACH_AUTH=auto: every request is the open operator', async () => {
    const open = await router({ auth: 'auto', adminKey: undefined, host: '127.0.0.1' });
    const res = await open.app.inject({ url: '/v1/console/session' });
    expect(res.json()).toEqual({ key_id: 'open', tenant: 'default', role: 'operator' });
    expect(logLines.join('')).toMatch(/AUTH IS OFF/);
  });

  it('refuses a non-loopback HOST without REACH_ADMIN_KEY, and REACH_AUTH=off off loopback', async () => {
    await expect(router({ auth: 'auto', adminKey: undefined, host: '0.0.0.0' })).rejects.toThrow(
      /REACH_ADMIN_KEY must be set/,
    );
    await expect(router({ auth: 'off', host: '0.0.0.0' })).rejects.toThrow(/loopback/);
  });
});

describe('logs', () => {
  it('hold none of the keys, tokens or cookies used above', () => {
    const text = logLines.join('');
    expect(text).toMatch(/api key created/);
    expect(text).toMatch(/incoming request/);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      // Nor the secret part alone.
      expect(text).not.toContain(secret.slice(-43));
    }
  });
});
