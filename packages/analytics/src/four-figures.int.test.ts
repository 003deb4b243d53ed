/**
 * The four figures on a real InfluxDB with known data. Every test writes under its own random
 * capability and agent names, so data never mix; every expected number was worked out by hand
 * (InfluxQL PERCENTILE is nearest-rank: the value at index floor(N × 0.95 + 0.5) − 1 of the sorted list).
 */
import { testServices, waitFor } from '@agent-reach/testkit';
import type { TaskEvent } from '@agent-reach/events';
import { beforeAll, describe, expect, it } from 'vitest';
import { fourFigures } from './four-figures.ts';
import { queryStatements, type InfluxSource } from './influx-source.ts';
import { loadQuery, regexLiteral, renderQuery } from './queries.ts';
import { spread, uniqueName, writeEvents } from './testing/known-events.ts';
import { parseWindow, timeFilter } from './window.ts';

let source: InfluxSource;
const capA = uniqueName('ffa');
const capB = uniqueName('ffb');
const agent1 = uniqueName('ag1');
const agent2 = uniqueName('ag2');
const MIN = 60_000;

function ev(
  stage: TaskEvent['stage'],
  capability: string,
  agent: string,
  at: number,
  extra: Partial<TaskEvent> = {},
): TaskEvent {
  return { stage, capability, agent_id: agent, task_id: uniqueName('t'), attempt: 1, at, ...extra };
}

/**
 * capA, inside the last 10 minutes:
 * - 20 sent; 20 received with latency 10, 20, …, 200 (agent1: 10–100, agent2: 110–200)
 * - 12 completed with latency 10, 20, …, 120 and duration 5, 10, …, 60 (agent1: first 6, agent2: last 6)
 * - 3 failed (agent1: 2, agent2: 1), 1 dead (agent1)
 * - 20 minutes ago, outside a 15m window: one received with latency 100000.
 * capB: one received (7 ms) and one completed (3 ms, handler 2 ms) on agent2.
 */
function knownEvents(): TaskEvent[] {
  const events: TaskEvent[] = [];
  const receivedAt = spread(20, 10 * MIN, 2 * MIN);
  for (let i = 0; i < 20; i++) {
    const agent = i < 10 ? agent1 : agent2;
    const at = receivedAt[i] ?? 0;
    events.push(ev('sent', capA, agent, at - 5));
    events.push(ev('received', capA, agent, at, { latency_ms: (i + 1) * 10 }));
  }
  const completedAt = spread(12, 9 * MIN, 1 * MIN);
  for (let i = 0; i < 12; i++) {
    const agent = i < 6 ? agent1 : agent2;
    events.push(
      ev('completed', capA, agent, completedAt[i] ?? 0, {
        latency_ms: (i + 1) * 10,
        duration_ms: (i + 1) * 5,
      }),
    );
  }
  const now = Date.now();
  const boom = { latency_ms: 1, reason: 'boom' };
  events.push(ev('failed', capA, agent1, now - 3 * MIN, { ...boom, error_code: 'MODEL_DOWN' }));
  events.push(ev('failed', capA, agent1, now - 3 * MIN + 1, { ...boom, error_code: 'MODEL_DOWN' }));
  events.push(
    ev('failed', capA, agent2, now - 3 * MIN + 2, { ...boom, error_code: 'HANDLER_ERROR' }),
  );
  events.push(ev('dead', capA, agent1, now - 2 * MIN, { reason: 'attempts exhausted' }));
  events.push(ev('received', capA, agent1, now - 20 * MIN, { latency_ms: 100_000 }));
  events.push(ev('received', capB, agent2, now - 4 * MIN, { latency_ms: 7 }));
  events.push(ev('completed', capB, agent2, now - 4 * MIN + 10, { latency_ms: 3, duration_ms: 2 }));
  return events;
}

beforeAll(async () => {
  const { influxUrl, influxBucket } = testServices();
  source = { url: influxUrl, db: influxBucket };
  const events = knownEvents();
  await writeEvents(influxUrl, influxBucket, events);
  const wanted = events.filter((e) => e.capability === capA).length;
  await waitFor(
    async () => {
      const [rows = []] = await queryStatements(source, [
        `SELECT COUNT("task_id") FROM "reach_task_events" WHERE "capability" = '${capA}' AND time > now() - 1h`,
      ]);
      return rows[0]?.count === wanted;
    },
    { message: 'the known events are not all queryable' },
  );
});

describe('fourFigures on known data', () => {
  it('per capability: success rate, receipt and execution mean/p95, completion rate', async () => {
    const figures = await fourFigures(source, {
      window: '15m',
      capability: capA,
      groupBy: 'capability',
    });
    expect(figures.window).toEqual({ literal: '15m', seconds: 900 });
    expect(figures.groups).toHaveLength(1);
    expect(figures.groups[0]).toEqual({
      key: capA,
      success_rate: 12 / 16,
      outcomes: { completed: 12, failed: 3, dead: 1, total: 16 },
      // mean of 10…200 = 105; p95 = sorted[floor(20 × 0.95 + 0.5) − 1] = sorted[18] = 190
      receipt_ms: { mean: 105, p95: 190, count: 20 },
      // mean of 10…120 = 65; p95 = sorted[floor(12 × 0.95 + 0.5) − 1] = sorted[10] = 110; handler: 32.5 and 55
      execution_ms: { mean: 65, p95: 110, count: 12, handler_mean: 32.5, handler_p95: 55 },
      completion_rate: { completed: 12, per_second: 12 / 900, per_minute: (12 / 900) * 60 },
      stages: { sent: 20, received: 20, completed: 12, failed: 3, dead: 1 },
      failures_by_code: { MODEL_DOWN: 2, HANDLER_ERROR: 1 },
    });
  });

  it('per agent within one capability', async () => {
    const figures = await fourFigures(source, {
      window: '15m',
      capability: capA,
      groupBy: 'agent_id',
    });
    const byKey = Object.fromEntries(figures.groups.map((g) => [g.key, g]));
    expect(Object.keys(byKey).sort()).toEqual([agent1, agent2].sort());
    // agent1: received 10…100 → mean 55, p95 = sorted[floor(9.5 + 0.5) − 1] = sorted[9] = 100
    //         completed 10…60 → mean 35, p95 = sorted[floor(5.7 + 0.5) − 1] = sorted[5] = 60
    //         outcomes 6 completed + 2 failed + 1 dead → 6/9
    expect(byKey[agent1]).toMatchObject({
      success_rate: 6 / 9,
      outcomes: { completed: 6, failed: 2, dead: 1, total: 9 },
      receipt_ms: { mean: 55, p95: 100, count: 10 },
      execution_ms: { mean: 35, p95: 60, count: 6, handler_mean: 17.5, handler_p95: 30 },
      completion_rate: { completed: 6, per_second: 6 / 900 },
      failures_by_code: { MODEL_DOWN: 2 },
    });
    // agent2: received 110…200 → mean 155, p95 200; completed 70…120 → mean 95, p95 120; 6/7
    expect(byKey[agent2]).toMatchObject({
      success_rate: 6 / 7,
      outcomes: { completed: 6, failed: 1, dead: 0, total: 7 },
      receipt_ms: { mean: 155, p95: 200, count: 10 },
      execution_ms: { mean: 95, p95: 120, count: 6, handler_mean: 47.5, handler_p95: 60 },
    });
  });

  it('the window decides what counts: 30m takes in the receipt from 20 minutes ago', async () => {
    const figures = await fourFigures(source, {
      window: '30m',
      capability: capA,
      groupBy: 'capability',
    });
    // 21 samples: 10…200 and 100000; mean = (2100 + 100000) / 21; p95 = sorted[floor(20.45)−1] = sorted[19] = 200
    expect(figures.groups[0]?.receipt_ms).toEqual({
      mean: (2100 + 100_000) / 21,
      p95: 200,
      count: 21,
    });
    expect(figures.groups[0]?.completion_rate.per_second).toBe(12 / 1800);
  });

  it('without a capability filter every capability is a group; a capability name is matched literally', async () => {
    const all = await fourFigures(source, { window: '15m', groupBy: 'capability' });
    const b = all.groups.find((g) => g.key === capB);
    expect(b).toMatchObject({
      success_rate: 1,
      receipt_ms: { mean: 7, p95: 7, count: 1 },
      execution_ms: { mean: 3, p95: 3, count: 1, handler_mean: 2, handler_p95: 2 },
    });
    expect(all.groups.find((g) => g.key === capA)?.outcomes.total).toBe(16);
    // A regex-looking name matches nothing rather than everything.
    const none = await fourFigures(source, {
      window: '15m',
      capability: `${capA.slice(0, 3)}.*`,
      groupBy: 'capability',
    });
    expect(none.groups).toEqual([]);
  });
});

describe('the chart queries on the same data', () => {
  it('completions per minute, outcomes by stage and latency over time add up to the window figures', async () => {
    const vars = {
      timeFilter: timeFilter(parseWindow('15m')),
      capability: regexLiteral(capA),
      group: 'capability',
      __interval: '1m',
      __interval_ms: 60_000,
    };
    const [completions = [], outcomes = [], receipt = [], execution = []] = await queryStatements(
      source,
      [
        'completions-over-time',
        'outcomes-over-time',
        'receipt-latency-over-time',
        'execution-time-over-time',
      ].map((n) => renderQuery(loadQuery(n), vars)),
    );
    const sum = (rows: Array<Record<string, unknown>>, col: string) =>
      rows.reduce((s, r) => s + (Number(r[col]) || 0), 0);
    expect(sum(completions, 'per_minute')).toBe(12); // 1-minute buckets: per_minute = count
    const byStage = (stage: string) =>
      sum(
        outcomes.filter((r) => r.stage === stage),
        'count',
      );
    expect([byStage('completed'), byStage('failed'), byStage('dead')]).toEqual([12, 3, 1]);
    expect(receipt.length).toBeGreaterThan(1);
    expect(Math.max(...receipt.map((r) => Number(r.p95)))).toBe(200);
    expect(Math.max(...execution.map((r) => Number(r.p95)))).toBe(120);
  });
});

describe('fourFigures per tenant', () => {
  it('counts only the tenant’s tasks (the default tenant’s have bare ids), every tenant’s without one', async () => {
    const { influxUrl, influxBucket } = testServices();
    const cap = uniqueName('fft');
    const now = Date.now();
    const done = (taskId: string, i: number): TaskEvent => ({
      stage: 'completed',
      capability: cap,
      agent_id: agent1,
      task_id: taskId,
      attempt: 1,
      at: now - MIN + i,
      latency_ms: 5,
    });
    const events = [
      done(`acme/${uniqueName('t')}`, 0),
      done(`acme/${uniqueName('t')}`, 1),
      done(`acme/${uniqueName('t')}`, 2),
      done(`globex/${uniqueName('t')}`, 3),
      done(uniqueName('t'), 4),
      done(uniqueName('t'), 5),
    ];
    await writeEvents(influxUrl, influxBucket, events);
    const completed = async (tenant?: string) =>
      (
        await fourFigures(source, {
          window: '15m',
          capability: cap,
          groupBy: 'capability',
          ...(tenant !== undefined ? { tenant } : {}),
        })
      ).groups[0]?.stages.completed ?? 0;
    await waitFor(async () => (await completed()) === 6, {
      message: 'the tenants’ events are not all queryable',
    });
    expect(await completed('acme')).toBe(3);
    expect(await completed('globex')).toBe(1);
    expect(await completed('default')).toBe(2);
    expect(await completed('initech')).toBe(0);
  });
});
