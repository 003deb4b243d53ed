/**
 * GET /v1/stats on a router in process, reading known events from the real InfluxDB; and the
 * 503 EVENTS_UNAVAILABLE replies when InfluxDB is not configured or does not answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatsReply } from '@agent-reach/analytics';
import { uniqueName, writeEvents } from '@agent-reach/analytics/testing';
import type { TaskEvent } from '@agent-reach/events';
import { reachKeys } from '@agent-reach/protocol';
import { freePort, testServices } from '@agent-reach/testkit';
import type { RouterService } from '../../index.ts';
import { routerFactory } from '../../testing/routers.ts';

const routers = routerFactory();
const router = routers.start;
const cap = uniqueName('stats');
const agentA = uniqueName('sa');
const agentB = uniqueName('sb');

let withInflux: RouterService;

beforeAll(async () => {
  const { influxUrl, influxBucket } = testServices();
  const now = Date.now();
  const e = (
    stage: TaskEvent['stage'],
    agent: string,
    ago: number,
    extra: Partial<TaskEvent> = {},
  ): TaskEvent => ({
    stage,
    capability: cap,
    agent_id: agent,
    task_id: uniqueName('t'),
    attempt: 1,
    at: now - ago,
    ...extra,
  });
  // agentA: receipts 4 and 8 ms, completions 100 and 300 ms; agentB: receipt 30 ms, one failure.
  await writeEvents(influxUrl, influxBucket, [
    e('received', agentA, 60_000, { latency_ms: 4 }),
    e('received', agentA, 59_000, { latency_ms: 8 }),
    e('completed', agentA, 50_000, { latency_ms: 100, duration_ms: 90 }),
    e('completed', agentA, 49_000, { latency_ms: 300, duration_ms: 280 }),
    e('received', agentB, 40_000, { latency_ms: 30 }),
    e('failed', agentB, 39_000, { latency_ms: 10, reason: 'boom', error_code: 'MODEL_DOWN' }),
  ]);
  withInflux = await router({ url: influxUrl, bucket: influxBucket });
});

afterAll(async () => {
  await routers.closeAll();
});

describe('GET /v1/stats', () => {
  it('answers the four figures per capability over the window', async () => {
    const res = await withInflux.app.inject({ url: `/v1/stats?window=15m&capability=${cap}` });
    expect(res.statusCode).toBe(200);
    const body = res.json<StatsReply>();
    expect(body).toMatchObject({ window: '15m', window_s: 900, by: 'capability', capability: cap });
    expect(body.groups).toEqual([
      {
        key: cap,
        success_rate: 2 / 3,
        outcomes: { completed: 2, failed: 1, dead: 0, total: 3 },
        // receipts 4, 8, 30: mean 14, p95 = sorted[floor(3.35) − 1] = 30
        receipt_ms: { mean: 14, p95: 30, count: 3 },
        execution_ms: { mean: 200, p95: 300, count: 2, handler_mean: 185, handler_p95: 280 },
        completion_rate: { completed: 2, per_second: 2 / 900, per_minute: (2 / 900) * 60 },
        stages: { received: 3, completed: 2, failed: 1 },
        failures_by_code: { MODEL_DOWN: 1 },
      },
    ]);
  });

  it('groups per agent with by=agent, and an empty capability means every capability', async () => {
    const res = await withInflux.app.inject({
      url: `/v1/stats?window=1h&by=agent&capability=${cap}`,
    });
    const body = res.json<StatsReply>();
    expect(body.by).toBe('agent');
    expect(body.groups.map((g) => [g.key, g.success_rate, g.receipt_ms.mean])).toEqual(
      [
        [agentA, 1, 6],
        [agentB, 0, 30],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    const all = await withInflux.app.inject({ url: '/v1/stats?capability=' });
    expect(all.statusCode).toBe(200);
    expect(all.json<StatsReply>().groups.some((g) => g.key === cap)).toBe(true);
  });

  it.each([
    'window=15',
    'window=32d',
    'window=15m%3B%20DROP',
    'by=region',
    'capability=a%7Bb%7D',
    'limit=3',
  ])('refuses ?%s with 400 INVALID_QUERY', async (qs) => {
    const res = await withInflux.app.inject({ url: `/v1/stats?${qs}` });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'INVALID_QUERY', message: expect.any(String) });
  });

  it('answers 503 EVENTS_UNAVAILABLE without INFLUX_URL', async () => {
    const r = await router();
    const res = await r.app.inject({ url: '/v1/stats' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toMatchObject({
      error: 'EVENTS_UNAVAILABLE',
      message: expect.stringContaining('INFLUX_URL'),
    });
  });

  it('answers 503 EVENTS_UNAVAILABLE when InfluxDB does not answer, and dispatch is unaffected', async () => {
    const r = await router({ url: `http://127.0.0.1:${await freePort()}`, bucket: 'reach' });
    const res = await r.app.inject({ url: '/v1/stats?window=5m' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toMatchObject({ error: 'EVENTS_UNAVAILABLE' });
    // Healthy all the same once it holds a snapshot (registry-sync's part, written by hand here).
    await r.redis.set(
      reachKeys(r.options.prefix).snapshot(),
      JSON.stringify({ version: 1, written_at: Date.now(), agents: [] }),
    );
    await r.snapshot.reload();
    expect((await r.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    await r.redis.del(reachKeys(r.options.prefix).snapshot());
  });
});
