import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { FLEET_EVENT_FIELD, reachKeys, WORKER_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../index.ts';

let router: RouterService;
let redis: Redis;
let prefix: string;
let keys: ReachKeys;
let base: string;

beforeAll(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  router = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix, port: 0, host: '127.0.0.1' },
    { logger: pino({ level: 'silent' }) },
  );
  base = await router.listen();
  redis = new Redis(testServices().redisUrl);
});

afterAll(async () => {
  // Streams may still be open: close must end them rather than wait for the clients.
  await router.close();
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  await redis.quit();
});

/** An event stream read with fetch: `next()` waits for the next event matching a predicate. */
async function openStream(path: string, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const res = await fetch(`${base}${path}`, { headers, signal: controller.signal });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const events: { id: string; data: Record<string, unknown> }[] = [];
  let buffer = '';
  const pump = (async () => {
    for (;;) {
      const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const id = /^id: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (id && data) events.push({ id, data: JSON.parse(data) });
      }
    }
  })();
  return {
    events,
    next: (pred: (e: { data: Record<string, unknown> }) => boolean) =>
      waitFor(() => events.find(pred), { timeoutMs: 5000, message: 'event did not arrive' }),
    close: async () => {
      controller.abort();
      await pump;
    },
  };
}

const fleetEvent = (body: Record<string, unknown>) =>
  redis.xadd(
    keys.fleetEvents(),
    '*',
    FLEET_EVENT_FIELD,
    JSON.stringify({ at: Date.now(), ...body }),
  );

describe('console page', () => {
  it('serves the page with a strict CSP, and its modules', async () => {
    const page = await router.app.inject({ url: '/console' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.body).toContain('/console/assets/console.js');
    for (const file of ['console.js', 'charts.js', 'dom.js', 'console.css']) {
      const res = await router.app.inject({ url: `/console/assets/${file}` });
      expect(res.statusCode, file).toBe(200);
    }
    expect((await router.app.inject({ url: '/console/assets/nope.js' })).json()).toMatchObject({
      error: 'NOT_FOUND',
    });
    expect((await router.app.inject({ url: '/console/assets/..%2Fapp.ts' })).statusCode).toBe(400);
  });
});

describe('GET /v1/console/agents', () => {
  it('lists agents with live inflight, heartbeat age and recent success rate', async () => {
    const [sec] = await redis.time();
    const now = Number(sec) * 1000;
    await redis.sadd(keys.agents(), 'ag-1');
    await redis.hset(keys.agent('ag-1'), {
      agent_id: 'ag-1',
      instance_id: 'i1',
      epoch: '1',
      status: 'HEALTHY',
      capabilities: '["echo","sum"]',
      max_concurrency: '4',
      region: 'eu-west',
      channel: 'push',
      registered_at: String(now),
      lease_at: String(now - 1500),
    });
    await redis.hset(keys.pending('ag-1'), 'task-a', '1|1||1-0|0|0');
    // A task this router sent, completed by ag-1.
    await redis.hset(keys.task('c-1'), { status: 'completed', capability: 'echo' });
    const tl = [
      { stage: 'accepted', at: now - 100 },
      { stage: 'sent', at: now - 95, agent_id: 'ag-1', attempt: 1 },
      { stage: 'received', at: now - 90, agent_id: 'ag-1', attempt: 1 },
      { stage: 'completed', at: now - 40, agent_id: 'ag-1', attempt: 1 },
    ];
    await redis.rpush(keys.timeline('c-1'), ...tl.map((e) => JSON.stringify(e)));
    router.events.write({
      stage: 'sent',
      capability: 'echo',
      agent_id: 'ag-1',
      task_id: 'c-1',
      attempt: 1,
      at: now - 95,
    });

    const res = await router.app.inject({ url: '/v1/console/agents' });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ agents: Record<string, unknown>[]; total: number }>();
    expect(body.total).toBe(1);
    expect(body.agents[0]).toMatchObject({
      agent_id: 'ag-1',
      status: 'HEALTHY',
      inflight: 1,
      max_concurrency: 4,
      region: 'eu-west',
      capabilities: ['echo', 'sum'],
      recent: { completed: 1, failed: 0, success_rate: 1 },
    });
    expect(body.agents[0]?.lease_age_ms).toBeGreaterThanOrEqual(1000);

    const latency = (await router.app.inject({ url: '/v1/console/latency' })).json<{
      points: Record<string, unknown>[];
    }>();
    expect(latency.points).toEqual([
      expect.objectContaining({
        task_id: 'c-1',
        delivery_ms: 5,
        receipt_ms: 5,
        execution_ms: 50,
        agent_id: 'ag-1',
      }),
    ]);
  });
});

describe('GET /v1/console/events', () => {
  it('sends recent events, then live ones, and resumes after Last-Event-ID', async () => {
    await fleetEvent({ kind: 'registered', agent_id: 'sse-1', epoch: 1 });
    const stream = await openStream('/v1/console/events?backlog=5');
    const first = await stream.next((e) => e.data.agent_id === 'sse-1');
    expect(first.data).toMatchObject({ kind: 'registered', epoch: 1 });
    await fleetEvent({
      kind: 'status',
      agent_id: 'sse-1',
      from: 'HEALTHY',
      to: 'SUSPECT',
      reason: 'lease',
    });
    await stream.next((e) => e.data.kind === 'status' && e.data.to === 'SUSPECT');
    const lastId = stream.events.at(-1)!.id;
    await stream.close();

    await fleetEvent({ kind: 'deregistered', agent_id: 'sse-1', epoch: 1 });
    const resumed = await openStream('/v1/console/events', { 'last-event-id': lastId });
    await resumed.next((e) => e.data.kind === 'deregistered');
    expect(resumed.events.map((e) => e.data.kind)).toEqual(['deregistered']);
    // Left open on purpose: afterAll's close() must end it.
    void resumed.close;
  });

  it('refuses a malformed Last-Event-ID', async () => {
    const res = await router.app.inject({
      url: '/v1/console/events',
      headers: { 'last-event-id': 'x' },
    });
    expect(res.statusCode).toBe(400);
  });
});

describe('GET /metrics', () => {
  it('reports submits by outcome, agents by status, inbox depths and dead letters', async () => {
    await router.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      payload: { capability: 'nobody-serves-this', payload: 1 },
    });
    await router.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      payload: { capability: 'x', priorty: 1 },
    });
    await redis.set(
      keys.snapshot(),
      JSON.stringify({
        version: 7,
        written_at: Date.now(),
        agents: [
          {
            agent_id: 'm-1',
            status: 'HEALTHY',
            capabilities: ['echo'],
            max_concurrency: 2,
            inflight: 0,
            epoch: 1,
            instance_id: 'i',
            region: '',
            channel: 'push',
            lease_age_ms: 0,
          },
          {
            agent_id: 'm-2',
            status: 'SUSPECT',
            capabilities: ['echo'],
            max_concurrency: 2,
            inflight: 0,
            epoch: 1,
            instance_id: 'i',
            region: '',
            channel: 'push',
            lease_age_ms: 0,
          },
        ],
      }),
    );
    await redis.xgroup('CREATE', keys.inbox('m-1'), WORKER_GROUP, '0', 'MKSTREAM');
    await redis.xadd(keys.inbox('m-1'), '*', 'task_id', 'q1');
    await redis.xadd(keys.inbox('m-1'), '*', 'task_id', 'q2');
    await redis.zadd(keys.dlq(), Date.now(), 'dead-1');

    const res = await router.app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toContain(
      'reach_router_submits_total{status="503",outcome="NO_AGENT",service="router"} 1',
    );
    expect(text).toContain(
      'reach_router_submits_total{status="400",outcome="INVALID_BODY",service="router"} 1',
    );
    expect(text).toContain('reach_agents{status="HEALTHY",service="router"} 1');
    expect(text).toContain('reach_agents{status="SUSPECT",service="router"} 1');
    expect(text).toContain('reach_inbox_backlog{agent_id="m-1",service="router"} 2');
    expect(text).toContain('reach_dead_letters{service="router"} 1');
    expect(text).toContain('reach_fleet_sample_ok{service="router"} 1');
    expect(text).toMatch(/reach_router_routing_seconds_count\{[^}]*status="503"[^}]*\} 1/);
    expect(text).toMatch(/reach_http_requests_total\{[^}]*route="\/v1\/tasks"[^}]*\} /);
    expect(text).toContain('reach_events_dropped_total{service="router"} 0');
  });
});
