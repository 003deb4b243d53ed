/**
 * Traces and metrics across real processes: a W3C traceparent's trace id follows a task through
 * the router, the stream entry, the worker, the acks, the InfluxDB events and both services'
 * logs; and both services' /metrics count what happened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryInfluxQL } from '@agent-reach/events';
import { testServices, waitFor } from '@agent-reach/testkit';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { RawWorker, submitAndComplete } from '../support/raw-worker.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const TRACE = '0af7651916cd43dd8448eb211c80319c';
const SPAN = 'b7ad6b7169203331';

let stack: Stack;
let worker: RawWorker;
let doomed: ReachAgent | undefined;

beforeAll(async () => {
  // Two attempts 200 ms apart: the retried and dead stages within a test's time.
  stack = await startStack({
    influx: 'v1',
    env: { LOG_LEVEL: 'debug', REACH_RETRY_BASE_MS: '200', REACH_MAX_ATTEMPTS: '2' },
  });
  worker = await RawWorker.start(
    stack,
    {
      agent_id: 'trace-agent',
      instance_id: 'trace-agent-1',
      capabilities: ['traced'],
      max_concurrency: 2,
    },
    { heartbeatMs: 2000 },
  );
});

afterAll(async () => {
  await doomed?.close();
  await worker?.stop();
  await stack?.stop();
});

/** The JSON log lines a service wrote (its recent output). */
const logLines = (output: string): Record<string, unknown>[] =>
  output.split('\n').flatMap((line) => {
    const start = line.indexOf('{');
    if (start < 0) return [];
    try {
      return [JSON.parse(line.slice(start)) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

/** The value of a Prometheus series whose labels include `labels`; undefined when absent. */
function series(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]),
    );
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}

const metrics = async (base: string) => {
  const res = await fetch(`${base}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('text/plain');
  return res.text();
};

describe('a trace id from traceparent', () => {
  it('follows the task: task state, stream entry, InfluxDB events and both services’ logs', async () => {
    const taskId = await submitAndComplete(
      stack,
      { capability: 'traced', payload: { hello: 'trace' } },
      { traceparent: `00-${TRACE}-${SPAN}-01` },
    );

    const task = await http<{ trace_id?: string }>(`${stack.routerUrl}/v1/tasks/${taskId}`);
    expect(task.body.trace_id).toBe(TRACE);
    // The stream entry the worker read carried it.
    expect(worker.seen.get(taskId)?.trace_id).toBe(TRACE);

    const { influxUrl, influxBucket } = testServices();
    const rows = await waitFor(
      async () => {
        const r = await queryInfluxQL(
          influxUrl,
          influxBucket,
          `SELECT "stage", "trace_id" FROM "reach_task_events" WHERE "task_id" = '${taskId}'`,
        );
        return r.length >= 3 ? r : undefined;
      },
      { timeoutMs: 10_000, message: 'events did not reach InfluxDB' },
    );
    expect(rows.map((r) => r.stage).sort()).toEqual(['completed', 'received', 'sent']);
    for (const r of rows) expect(r.trace_id).toBe(TRACE);

    // Router: the submit's request log; registry-sync: a line per stage it recorded (at debug).
    const routerLogs = await waitFor(
      () => {
        const lines = logLines(stack.router.output()).filter(
          (l) => l.trace_id === TRACE && l.task_id === taskId,
        );
        return lines.some((l) => l.msg === 'request completed') ? lines : undefined;
      },
      { message: 'no router log line with the trace id and task id' },
    );
    expect(routerLogs.find((l) => l.msg === 'request completed')).toMatchObject({
      res: { statusCode: 202 },
    });
    expect(routerLogs.some((l) => l.msg === 'task stage' && l.stage === 'sent')).toBe(true);
    const registryLogs = await waitFor(
      () => {
        const lines = logLines(stack.registry.output()).filter(
          (l) => l.trace_id === TRACE && l.task_id === taskId,
        );
        return lines.length >= 2 ? lines : undefined;
      },
      { message: 'no registry-sync log lines with the trace id and task id' },
    );
    expect(registryLogs.map((l) => l.stage).sort()).toEqual(['completed', 'received']);
  });

  it('prefers the body’s trace_id, and starts a new trace for a malformed header', async () => {
    const explicit = await submitAndComplete(
      stack,
      { capability: 'traced', payload: 1, trace_id: 'from-body' },
      { traceparent: `00-${TRACE}-${SPAN}-01` },
    );
    expect(
      (await http<{ trace_id?: string }>(`${stack.routerUrl}/v1/tasks/${explicit}`)).body.trace_id,
    ).toBe('from-body');

    const fresh = await submitAndComplete(
      stack,
      { capability: 'traced', payload: 2 },
      { traceparent: `00-${'0'.repeat(32)}-${SPAN}-01` },
    );
    const traceId = (await http<{ trace_id?: string }>(`${stack.routerUrl}/v1/tasks/${fresh}`)).body
      .trace_id;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
    expect(worker.seen.get(fresh)?.trace_id).toBe(traceId);
  });
});

describe('GET /metrics', () => {
  it('counts submits, stages and agents on both services', async () => {
    const refused = await http(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'nobody-has-this', payload: 1 },
    });
    expect(refused.status).toBe(503);

    const router = await metrics(stack.routerUrl);
    expect(
      series(router, 'reach_router_submits_total', { status: '202', outcome: 'accepted' }),
    ).toBe(3);
    expect(
      series(router, 'reach_router_submits_total', { status: '503', outcome: 'NO_AGENT' }),
    ).toBe(1);
    expect(series(router, 'reach_router_routing_seconds_count', { status: '202' })).toBe(3);
    expect(
      series(router, 'reach_task_stage_latency_seconds_count', {
        stage: 'sent',
        capability: 'traced',
      }),
    ).toBe(3);
    expect(series(router, 'reach_agents', { status: 'HEALTHY' })).toBe(1);
    expect(series(router, 'reach_inbox_backlog', { agent_id: 'trace-agent' })).toBe(0);
    expect(series(router, 'reach_router_snapshot_version', {})).toBeGreaterThan(0);

    // registry-sync applied the receipts and completions; the events reached InfluxDB.
    const registry = await waitFor(
      async () => {
        const text = await metrics(stack.registryUrl);
        return (series(text, 'reach_events_written_total', {}) ?? 0) >= 6 ? text : undefined;
      },
      { message: 'registry-sync did not report its events as written' },
    );
    expect(
      series(registry, 'reach_task_stage_latency_seconds_count', {
        stage: 'received',
        capability: 'traced',
      }),
    ).toBe(3);
    expect(
      series(registry, 'reach_task_stage_latency_seconds_count', {
        stage: 'completed',
        capability: 'traced',
      }),
    ).toBe(3);
    expect(
      series(registry, 'reach_http_requests_total', {
        route: '/v1/agents/register',
        status: '200',
      }),
    ).toBe(1);
    expect(series(registry, 'reach_events_write_failures_total', {})).toBe(0);
    expect(series(registry, 'reach_agents', { status: 'HEALTHY' })).toBe(1);
    expect(series(registry, 'reach_dead_letters', {})).toBe(0);
  });
});

describe('a failing task', () => {
  it('keeps its trace id in the retried and dead events and log lines', async () => {
    // Started here, after the metrics above were counted with one agent.
    doomed = await startAgent(stack, 'doomed-agent', ['traced-doomed'], () =>
      Promise.reject(new Error('always fails')),
    );
    const sub = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'traced-doomed', payload: 1 },
      headers: { traceparent: `00-${TRACE}-${SPAN}-01` },
    });
    expect(sub.status).toBe(202);
    const taskId = sub.body.task_id;
    await waitFor(
      async () =>
        (await http<{ status: string }>(`${stack.routerUrl}/v1/tasks/${taskId}`)).body.status ===
        'dead',
      {
        timeoutMs: 15_000,
        message: 'the failing task was not dead-lettered',
      },
    );

    const { influxUrl, influxBucket } = testServices();
    const rows = await waitFor(
      async () => {
        const r = await queryInfluxQL(
          influxUrl,
          influxBucket,
          `SELECT "stage", "trace_id" FROM "reach_task_events" WHERE "task_id" = '${taskId}'`,
        );
        return r.some((e) => e.stage === 'dead') ? r : undefined;
      },
      { timeoutMs: 10_000, message: 'the dead event did not reach InfluxDB' },
    );
    const stages = rows.map((r) => r.stage);
    expect(stages).toContain('retried');
    expect(stages).toContain('dead');
    for (const r of rows) expect(r.trace_id).toBe(TRACE);

    const lines = logLines(stack.registry.output()).filter((l) => l.task_id === taskId);
    for (const msg of ['task retry scheduled', 'task dead-lettered']) {
      expect(lines.find((l) => l.msg === msg)?.trace_id).toBe(TRACE);
    }
  });
});
