import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import pino from 'pino';
import type { EventSink, EventSinkStats, TaskEvent } from '@agent-reach/events';
import { listRoutes, registerApiDocs } from '../api-docs.ts';
import { createMetricsRegistry } from './registry.ts';
import { installHttpMetrics, installMetricsEndpoint } from './http.ts';
import { observeTaskEvents } from './task-events.ts';

class MemorySink implements EventSink {
  readonly seen: TaskEvent[] = [];
  counters: EventSinkStats = { written: 0, dropped: 0, failedWrites: 0, buffered: 0, api: 'none' };
  write(event: TaskEvent): void {
    this.seen.push(event);
  }
  flush = () => Promise.resolve();
  close = () => Promise.resolve();
  stats = () => this.counters;
}

/** The value of the series `name` whose labels include `labels`, in Prometheus text; undefined when absent. */
function sample(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
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

describe('observeTaskEvents', () => {
  it('keeps at most maxCapabilityLabels capability labels and counts the rest under _other', async () => {
    const registry = createMetricsRegistry('test', { defaultMetrics: false });
    const observed = observeTaskEvents(new MemorySink(), {
      registry,
      logger: pino({ level: 'silent' }),
      maxCapabilityLabels: 3,
    });
    for (let i = 0; i < 50; i++) {
      observed.write({
        capability: `made-up-${i % 25}`,
        agent_id: 'a1',
        task_id: `t${i}`,
        attempt: 1,
        at: 1,
        stage: 'sent',
        latency_ms: 1,
      });
    }
    const text = await registry.metrics();
    const labels = new Set(
      [...text.matchAll(/reach_task_stage_latency_seconds_count\{[^}]*capability="([^"]*)"/g)].map(
        (m) => m[1],
      ),
    );
    expect([...labels].sort()).toEqual(['_other', 'made-up-0', 'made-up-1', 'made-up-2']);
    expect(
      sample(text, 'reach_task_stage_latency_seconds_count', {
        stage: 'sent',
        capability: '_other',
        service: 'test',
      }),
    ).toBe(44);
  });

  it('forwards, counts stages, times latencies, logs trace and task ids, and exposes sink counters', async () => {
    const registry = createMetricsRegistry('test', { defaultMetrics: false });
    const sink = new MemorySink();
    const lines: Record<string, unknown>[] = [];
    // A line per stage of every task is a debug line.
    const logger = pino(
      { level: 'debug' },
      { write: (l: string) => void lines.push(JSON.parse(l) as Record<string, unknown>) },
    );
    const noticed: string[] = [];
    const observed = observeTaskEvents(sink, {
      registry,
      logger,
      onEvent: (e) => noticed.push(e.task_id),
    });
    const base = {
      capability: 'echo',
      agent_id: 'a1',
      task_id: 't1',
      attempt: 1,
      at: 1,
      trace_id: 'tr-1',
    };
    observed.write({ ...base, stage: 'sent', latency_ms: 4 });
    observed.write({ ...base, stage: 'received', latency_ms: 20 });
    observed.write({ ...base, stage: 'retried', reason: 'receipt_timeout' });
    observed.write({ ...base, stage: 'retried', reason: 'receipt_timeout', attempt: 2 });
    observed.write({ ...base, stage: 'retried', reason: 'failed', attempt: 3 });
    observed.write({ ...base, stage: 'dead', reason: 'max_attempts' });
    expect(sink.seen.map((e) => e.stage)).toEqual([
      'sent',
      'received',
      'retried',
      'retried',
      'retried',
      'dead',
    ]);
    expect(noticed).toEqual(['t1', 't1', 't1', 't1', 't1', 't1']);
    expect(lines.map((l) => [l.module, l.task_id, l.trace_id, l.stage])).toEqual([
      ['task-events', 't1', 'tr-1', 'sent'],
      ['task-events', 't1', 'tr-1', 'received'],
      ['task-events', 't1', 'tr-1', 'retried'],
      ['task-events', 't1', 'tr-1', 'retried'],
      ['task-events', 't1', 'tr-1', 'retried'],
      ['task-events', 't1', 'tr-1', 'dead'],
    ]);

    sink.counters = { written: 5, dropped: 2, failedWrites: 3, buffered: 7, api: 'v1' };
    let text = await registry.metrics();
    expect(sample(text, 'reach_task_events_total', { stage: 'dead', service: 'test' })).toBe(1);
    // Retries by reason: the receipt-timeout rate is these over the sent stages.
    expect(
      sample(text, 'reach_task_retries_total', { reason: 'receipt_timeout', service: 'test' }),
    ).toBe(2);
    expect(sample(text, 'reach_task_retries_total', { reason: 'failed', service: 'test' })).toBe(1);
    expect(
      sample(text, 'reach_task_stage_latency_seconds_count', {
        stage: 'received',
        capability: 'echo',
        service: 'test',
      }),
    ).toBe(1);
    expect(
      sample(text, 'reach_task_stage_latency_seconds_sum', {
        stage: 'sent',
        capability: 'echo',
        service: 'test',
      }),
    ).toBeCloseTo(0.004);
    expect(sample(text, 'reach_events_dropped_total', { service: 'test' })).toBe(2);
    expect(sample(text, 'reach_events_write_failures_total', { service: 'test' })).toBe(3);
    expect(sample(text, 'reach_events_buffered', { service: 'test' })).toBe(7);
    sink.counters = { ...sink.counters, dropped: 10 };
    text = await registry.metrics();
    expect(sample(text, 'reach_events_dropped_total', { service: 'test' })).toBe(10);
  });
});

describe('metrics endpoint and docs', () => {
  it('serves Prometheus text with request counts by route template, and lists /metrics in the OpenAPI document', async () => {
    const registry = createMetricsRegistry('web');
    const app = Fastify();
    await registerApiDocs(app, { title: 't', description: 'd', version: '1' });
    installHttpMetrics(app, registry);
    installMetricsEndpoint(app, registry);
    app.get('/things/:id', async () => ({ ok: true }));
    await app.inject({ url: '/things/1' });
    await app.inject({ url: '/things/2' });
    const res = await app.inject({ url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    expect(
      sample(res.body, 'reach_http_requests_total', {
        method: 'GET',
        route: '/things/:id',
        status: '200',
        service: 'web',
      }),
    ).toBe(2);
    expect(res.body).toContain('process_cpu_user_seconds_total');
    const doc = (await app.inject({ url: '/docs/json' })).json<{
      openapi: string;
      paths: Record<string, unknown>;
    }>();
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/metrics', '/things/{id}']));
    const served = listRoutes(app).filter((r) => !r.url.startsWith('/docs'));
    expect(served).toEqual(
      expect.arrayContaining([
        { method: 'GET', url: '/metrics' },
        { method: 'GET', url: '/things/:id' },
      ]),
    );
    expect(served).toHaveLength(2);
    await app.close();
  });
});
