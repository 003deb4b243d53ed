/**
 * GET /v1/stats/series on a router in process with keys required, reading known events from the
 * real InfluxDB: counts and execution times per step, a caller key's tenant scope, the default
 * step, the 400s of a bad window or step, and 503 EVENTS_UNAVAILABLE as GET /v1/stats answers it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { SeriesReply } from '@agent-reach/analytics';
import { uniqueName, writeEvents } from '@agent-reach/analytics/testing';
import type { TaskEvent } from '@agent-reach/events';
import { freePort, randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../../index.ts';
import { routerFactory } from '../../testing/routers.ts';

const ADMIN = 'admin-key-for-the-stats-series-test-0123456789';
const MIN = 60_000;
const routers = routerFactory();
const cap = uniqueName('series');
let withKeys: RouterService;
let acmeKey = '';
/** The two minutes holding events: the start of each step. */
let first = 0;
let second = 0;

const auth = (key: string) => ({ authorization: `Bearer ${key}` });
const series = (qs: string, key = ADMIN) =>
  withKeys.app.inject({ url: `/v1/stats/series?${qs}`, headers: auth(key) });
const pointAt = (body: SeriesReply, at: number) => body.points.find((p) => p.at === at);

beforeAll(async () => {
  const { influxUrl, influxBucket, redisUrl } = testServices();
  const now = Date.now();
  // Mid-minute instants 4 and 2 minutes back: each in one step of a 1m series.
  const t1 = Math.floor((now - 4 * MIN) / MIN) * MIN + 30_000;
  const t2 = Math.floor((now - 2 * MIN) / MIN) * MIN + 30_000;
  first = t1 - 30_000;
  second = t2 - 30_000;
  const e = (stage: TaskEvent['stage'], at: number, extra: Partial<TaskEvent> = {}): TaskEvent => ({
    stage,
    capability: cap,
    agent_id: 'a1',
    task_id: uniqueName('t'),
    attempt: 1,
    at,
    ...extra,
  });
  // The default tenant: two completions (100 and 300 ms) in the first minute, a failure and a
  // dead letter in the second. Tenant acme: one completion (50 ms) in the second.
  await writeEvents(influxUrl, influxBucket, [
    e('completed', t1, { latency_ms: 100 }),
    e('completed', t1 + 1000, { latency_ms: 300 }),
    e('failed', t2, { latency_ms: 10, reason: 'boom' }),
    e('dead', t2 + 1000),
    e('completed', t2 + 2000, { latency_ms: 50, task_id: `acme/${uniqueName('t')}` }),
  ]);
  withKeys = await createRouterService(
    { redisUrl, prefix: randomPrefix(), auth: 'required', adminKey: ADMIN },
    {
      logger: pino({ level: 'silent' }),
      events: { url: influxUrl, bucket: influxBucket, api: 'v1' },
    },
  );
  const made = await withKeys.app.inject({
    method: 'POST',
    url: '/v1/keys',
    headers: auth(ADMIN),
    payload: { tenant: 'acme', role: 'caller' },
  });
  expect(made.statusCode).toBe(201);
  acmeKey = made.json<{ key: string }>().key;
});

afterAll(async () => {
  await withKeys?.close();
  await routers.closeAll();
});

describe('GET /v1/stats/series', () => {
  it("answers an operator every tenant's outcomes and execution times per step", async () => {
    const res = await series(`capability=${cap}&window=10m&step=1m`);
    expect(res.statusCode).toBe(200);
    const body = res.json<SeriesReply>();
    expect(body).toMatchObject({
      capability: cap,
      window: '10m',
      window_s: 600,
      step: '1m',
      step_ms: 60_000,
    });
    expect(body.points).toHaveLength(10);
    // Whole minutes, oldest first, the last one holding now.
    expect(body.points.every((p, i) => p.at === (body.points[0]?.at ?? 0) + i * MIN)).toBe(true);
    expect(body.points.at(-1)?.at).toBe(Math.floor(body.generated_at / MIN) * MIN);
    expect(pointAt(body, first)).toEqual({
      at: first,
      completed: 2,
      failed: 0,
      dead: 0,
      execution_mean_ms: 200,
      execution_p95_ms: 300,
    });
    expect(pointAt(body, second)).toEqual({
      at: second,
      completed: 1,
      failed: 1,
      dead: 1,
      execution_mean_ms: 50,
      execution_p95_ms: 50,
    });
    const rest = body.points.filter((p) => p.at !== first && p.at !== second);
    expect(rest.every((p) => p.completed + p.failed + p.dead === 0)).toBe(true);
    expect(rest.every((p) => p.execution_mean_ms === null)).toBe(true);
  });

  it("shows a caller key its own tenant's only, whatever tenant it names", async () => {
    for (const qs of ['', '&tenant=default']) {
      const res = await series(`capability=${cap}&window=10m&step=1m${qs}`, acmeKey);
      expect(res.statusCode).toBe(200);
      const body = res.json<SeriesReply>();
      const totals = body.points.reduce((n, p) => n + p.completed + p.failed + p.dead, 0);
      expect(totals).toBe(1);
      expect(pointAt(body, second)).toMatchObject({ completed: 1, execution_mean_ms: 50 });
    }
    // An operator names one tenant; the default tenant's tasks are those without a tenant tag.
    const mine = (await series(`capability=${cap}&window=10m&step=1m&tenant=default`)).json();
    expect(pointAt(mine as SeriesReply, second)).toMatchObject({ completed: 0, failed: 1 });
    expect(pointAt(mine as SeriesReply, first)).toMatchObject({ completed: 2 });
  });

  it('takes the window / 60 as the step when none is given', async () => {
    const body = (await series(`capability=${cap}&window=15m`)).json<SeriesReply>();
    expect(body).toMatchObject({ step: '15s', step_ms: 15_000 });
    expect(body.points).toHaveLength(60);
    const byDefault = (await series(`capability=${cap}`)).json<SeriesReply>();
    expect(byDefault).toMatchObject({ window: '1h', step: '60s' });
  });

  it.each([
    ['window=1h&step=1s', /3600 points, more than 1000: take a step of at least 4s/],
    ['window=15m&step=1h', /longer than the window/],
    ['window=32d', /at most 31d/],
    ['window=15m%3B%20DROP', /window/],
    ['step=1m%3B', /step/],
    ['capability=', /capability/],
    ['capability=a%7Bb%7D', /capability/],
    ['by=agent', /by/],
  ])('refuses ?%s with 400 INVALID_QUERY', async (qs, message) => {
    const withCap = qs.startsWith('capability=') ? qs : `capability=${cap}&${qs}`;
    const res = await series(withCap);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'INVALID_QUERY', message });
  });

  it('refuses a request without a capability', async () => {
    const res = await series('window=1h');
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'INVALID_QUERY' });
  });

  it('answers 503 EVENTS_UNAVAILABLE without INFLUX_URL, or when InfluxDB does not answer', async () => {
    const none = await routers.start();
    const res = await none.app.inject({ url: `/v1/stats/series?capability=${cap}` });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toMatchObject({
      error: 'EVENTS_UNAVAILABLE',
      message: expect.stringContaining('INFLUX_URL'),
    });
    const down = await routers.start({ url: `http://127.0.0.1:${await freePort()}`, bucket: 'x' });
    const res2 = await down.app.inject({ url: `/v1/stats/series?capability=${cap}` });
    expect(res2.statusCode).toBe(503);
    expect(res2.json()).toMatchObject({ error: 'EVENTS_UNAVAILABLE' });
  });
});
