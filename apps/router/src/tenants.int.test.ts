/**
 * Tenants and quotas at the router's edge, with real keys (auth required) on a real Redis: each
 * tenant sees only its own tasks, callback topics and dead letters (another tenant's answer 404),
 * the same task_id in two tenants is two tasks, operators see every tenant by `<tenant>/<id>`, a
 * key limited to capabilities submits only to those, and the per-key quotas answer 429. Tasks are
 * queued (`on_no_agent: 'queue'`): routing to agents is the e2e test's (test/e2e/tenants.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys, encodeCallback, type ReachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from './index.ts';

const ADMIN = 'admin-key-for-the-tenants-test-0123456789';
let router: RouterService;
let redis: Redis;
let prefix: string;
let keys: ReachKeys;
const key: Record<string, string> = {};

async function makeKey(body: Record<string, unknown>): Promise<string> {
  const res = await router.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: { authorization: `Bearer ${ADMIN}` },
    payload: body,
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ key: string }>().key;
}

const as = (who: string) => ({ authorization: `Bearer ${key[who] ?? ADMIN}` });

const submit = (who: string, body: Record<string, unknown>) =>
  router.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: as(who),
    payload: { capability: 'echo', payload: 1, on_no_agent: 'queue', ...body },
  });

const get = (who: string, url: string) => router.app.inject({ url, headers: as(who) });

beforeAll(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  router = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix, auth: 'required', adminKey: ADMIN, maxHops: 1 },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
  key.acme = await makeKey({ tenant: 'acme', role: 'caller' });
  key.globex = await makeKey({ tenant: 'globex', role: 'caller' });
  key.acmeEchoOnly = await makeKey({ tenant: 'acme', role: 'caller', capabilities: ['echo'] });
  key.acmeTwoInFlight = await makeKey({ tenant: 'acme', role: 'caller', max_inflight: 2 });
  key.acmeFivePerS = await makeKey({ tenant: 'acme', role: 'caller', rate_per_s: 5 });
});

afterAll(async () => {
  await router?.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('tenants', () => {
  it('the same task_id in two tenants is two tasks, each seen only by its tenant', async () => {
    const a = await submit('acme', { task_id: 'job-1', payload: 'from acme' });
    const g = await submit('globex', { task_id: 'job-1', payload: 'from globex' });
    expect(a.statusCode).toBe(202);
    // A new task (202), not the other tenant's answered 200.
    expect(g.statusCode).toBe(202);
    expect(a.json()).toMatchObject({ task_id: 'job-1', status: 'sent' });
    expect(g.json()).toMatchObject({ task_id: 'job-1', status: 'sent' });
    // Each waits in its own tenant's pool of the capability.
    expect(a.json<{ stream: string }>().stream).toBe(keys.pool('acme/echo'));
    expect(g.json<{ stream: string }>().stream).toBe(keys.pool('globex/echo'));
    expect(await redis.hget(keys.task('acme/job-1'), 'payload')).toBe('"from acme"');
    expect(await redis.hget(keys.task('globex/job-1'), 'payload')).toBe('"from globex"');
    expect(await redis.hget(keys.task('acme/job-1'), 'tenant')).toBe('acme');

    const seen = await get('acme', '/v1/tasks/job-1');
    expect(seen.statusCode).toBe(200);
    expect(seen.json()).toMatchObject({ task_id: 'job-1', capability: 'echo' });
    // A repeated task_id within the tenant is the same task.
    expect((await submit('acme', { task_id: 'job-1' })).statusCode).toBe(200);
  });

  it('another tenant’s task answers 404, never 403; operators name it <tenant>/<id>', async () => {
    for (const url of [
      '/v1/tasks/globex%2Fjob-1',
      '/v1/tasks/globex%2Fjob-1/timeline',
      '/v1/tasks/globex%2Fjob-1/events',
    ]) {
      const res = await get('acme', url);
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('TASK_NOT_FOUND');
    }
    // The default tenant (the admin key's) has no job-1.
    expect((await get('admin', '/v1/tasks/job-1')).statusCode).toBe(404);
    const op = await get('admin', '/v1/tasks/acme%2Fjob-1');
    expect(op.statusCode).toBe(200);
    expect(op.json()).toMatchObject({ task_id: 'acme/job-1' });
    const timeline = await get('admin', '/v1/tasks/globex%2Fjob-1/timeline');
    expect(timeline.json()).toMatchObject({ task_id: 'globex/job-1', source: 'redis' });
  });

  it('a callback topic is its tenant’s: items name the caller’s task ids, another tenant’s topic is 404', async () => {
    const a = await submit('acme', { task_id: 'job-2', callback_topic: 'results' });
    expect(a.statusCode).toBe(202);
    expect(await redis.hget(keys.task('acme/job-2'), 'callback_topic')).toBe('acme/results');
    // What registry-sync publishes when the task completes: the task's scoped id, on its topic.
    await redis.xadd(
      keys.callback('acme/results'),
      '*',
      ...encodeCallback({
        task_id: 'acme/job-2',
        status: 'completed',
        capability: 'echo',
        agent_id: 'a-1',
        attempt: 1,
        result: '"done"',
        completed_at: Date.now(),
      }),
    );
    const mine = await get('acme', '/v1/callbacks/results');
    expect(mine.json().items).toEqual([
      expect.objectContaining({ task_id: 'job-2', status: 'completed', result: 'done' }),
    ]);
    // Globex's topic of the same name is its own, and empty.
    expect((await get('globex', '/v1/callbacks/results')).json().items).toEqual([]);
    const theirs = await get('globex', '/v1/callbacks/acme%2Fresults');
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error).toBe('NOT_FOUND');
    const op = await get('admin', '/v1/callbacks/acme%2Fresults');
    expect(op.json().items[0]).toMatchObject({ task_id: 'acme/job-2' });
  });

  it('dead letters are listed and replayed only within their tenant', async () => {
    // Past max hops (1 here): dead on arrival as a loop, in acme's dead letters.
    expect((await submit('acme', { task_id: 'p' })).statusCode).toBe(202);
    expect((await submit('acme', { task_id: 'c', parent_task_id: 'p' })).statusCode).toBe(202);
    const dead = await submit('acme', { task_id: 'g', parent_task_id: 'c' });
    expect(dead.json()).toMatchObject({ task_id: 'g', status: 'dead' });
    // An agent names the parent by the task id its entry carried: the scoped one.
    const child = await submit('acme', { task_id: 'c2', parent_task_id: 'acme/p' });
    expect(child.statusCode).toBe(202);
    expect(await redis.hmget(keys.task('acme/c2'), 'parent_task_id', 'hops')).toEqual([
      'acme/p',
      '1',
    ]);
    expect((await get('acme', '/v1/tasks/c2')).json()).toMatchObject({ parent_task_id: 'p' });
    // A parent of another tenant names nothing.
    const foreign = await submit('globex', { task_id: 'x', parent_task_id: 'acme/c' });
    expect(foreign.statusCode).toBe(404);

    const acmeDlq = await get('acme', '/v1/dlq');
    expect(acmeDlq.json().items).toEqual([
      expect.objectContaining({ task_id: 'g', reason: 'loop' }),
    ]);
    expect((await get('globex', '/v1/dlq')).json().items).toEqual([]);
    const opDlq = await get('admin', '/v1/dlq');
    expect(opDlq.json().items).toEqual([expect.objectContaining({ task_id: 'acme/g' })]);

    for (const id of ['g', 'acme%2Fg']) {
      const res = await router.app.inject({
        method: 'POST',
        url: `/v1/dlq/${id}/replay`,
        headers: as('globex'),
      });
      expect(res.statusCode).toBe(404);
    }
    const replayed = await router.app.inject({
      method: 'POST',
      url: '/v1/dlq/g/replay',
      headers: as('acme'),
    });
    expect(replayed.statusCode).toBe(202);
    expect(replayed.json()).toMatchObject({ task_id: 'g', status: 'retry_wait' });
  });

  it('the console shows a caller its tenant’s tasks only, an operator every tenant’s', async () => {
    type Latency = { points: { task_id: string }[] };
    const ids = async (who: string) =>
      (await get(who, '/v1/console/latency?limit=1000'))
        .json<Latency>()
        .points.map((p) => p.task_id);
    const acme = await ids('acme');
    expect(acme).toContain('job-1');
    expect(acme.every((id) => !id.includes('/'))).toBe(true);
    const globex = await ids('globex');
    expect(globex).toEqual(['job-1']);
    const all = await ids('admin');
    expect(all).toEqual(expect.arrayContaining(['acme/job-1', 'globex/job-1']));
  });

  it('a key limited to capabilities submits only to those (403 otherwise)', async () => {
    const other = await submit('acmeEchoOnly', { capability: 'translate' });
    expect(other.statusCode).toBe(403);
    expect(other.json().error).toBe('FORBIDDEN');
    expect((await submit('acmeEchoOnly', { capability: 'echo' })).statusCode).toBe(202);
    // A fallback is a capability the task may run on: the key must be allowed it too.
    const fallback = await submit('acmeEchoOnly', {
      capability: 'echo',
      fallback_capabilities: ['translate'],
    });
    expect(fallback.statusCode).toBe(403);
    expect(fallback.json()).toMatchObject({
      error: 'FORBIDDEN',
      message: expect.stringContaining('translate'),
    });
  });
});

describe('quotas', () => {
  it('tasks in flight: the key’s third task is refused 429 until one of its tasks ends', async () => {
    expect((await submit('acmeTwoInFlight', { task_id: 'q-1' })).statusCode).toBe(202);
    expect((await submit('acmeTwoInFlight', { task_id: 'q-2' })).statusCode).toBe(202);
    // A repeated task_id takes no second slot.
    expect((await submit('acmeTwoInFlight', { task_id: 'q-2' })).statusCode).toBe(200);
    const over = await submit('acmeTwoInFlight', { task_id: 'q-3' });
    expect(over.statusCode).toBe(429);
    expect(over.json()).toMatchObject({ error: 'RATE_LIMITED', task_id: 'q-3' });
    expect(over.headers['retry-after']).toBe('1');
    // Another key of the same tenant is not held back.
    expect((await submit('acme', { task_id: 'q-other' })).statusCode).toBe(202);
    // The task ends (registry-sync writes its final state): its slot is free again.
    await redis.hset(keys.task('acme/q-1'), 'status', 'completed');
    await waitFor(
      async () => (await submit('acmeTwoInFlight', { task_id: 'q-3' })).statusCode === 202,
      { timeoutMs: 2000, message: 'the ended task’s slot was never freed' },
    );
    expect(await redis.zrange(keys.inflightOf(keyIdOf(key.acmeTwoInFlight)), 0, -1)).toEqual(
      expect.arrayContaining(['acme/q-2', 'acme/q-3']),
    );
  });

  it('requests per second: a key over its rate gets 429 with Retry-After while another key’s requests flow', async () => {
    const burst = await Promise.all(
      Array.from({ length: 12 }, () => get('acmeFivePerS', '/v1/dlq')),
    );
    const refused = burst.filter((r) => r.statusCode === 429);
    expect(burst.filter((r) => r.statusCode === 200).length).toBeLessThanOrEqual(5);
    expect(refused.length).toBeGreaterThanOrEqual(7);
    expect(refused[0]?.json().error).toBe('RATE_LIMITED');
    expect(Number(refused[0]?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const others = await Promise.all(Array.from({ length: 12 }, () => get('acme', '/v1/dlq')));
    expect(others.every((r) => r.statusCode === 200)).toBe(true);
    // Public routes are never counted.
    expect((await router.app.inject({ url: '/livez' })).statusCode).toBe(200);
  });
});

/** The key id of a key `rk_<key_id>_<secret>`. */
function keyIdOf(k: string | undefined): string {
  return (k ?? '').split('_')[1] ?? '';
}
