import { describe, expect, it } from 'vitest';
import { MAX_SERIES_POINTS, seriesStatements, seriesStep } from './series.ts';
import { isInvalidWindowError, parseWindow } from './window.ts';

describe('series steps', () => {
  it('defaults to the window / 60 in whole seconds', () => {
    expect(seriesStep(parseWindow('15m'), undefined)).toEqual({ literal: '15s', seconds: 15 });
    expect(seriesStep(parseWindow('1h'), undefined)).toEqual({ literal: '60s', seconds: 60 });
    expect(seriesStep(parseWindow('30s'), undefined)).toEqual({ literal: '1s', seconds: 1 });
  });

  it('takes a step giving up to 1000 points', () => {
    expect(seriesStep(parseWindow('1h'), '1m')).toEqual({ literal: '1m', seconds: 60 });
    expect(seriesStep(parseWindow('1000s'), '1s').seconds).toBe(1);
    expect(MAX_SERIES_POINTS).toBe(1000);
  });

  it.each([
    ['1h', '1s', /3600 points, more than 1000: take a step of at least 4s/],
    ['15m', '1h', /longer than the window/],
    ['1h', '1m; DROP', /step must be a number and a unit/],
    ['1h', '0m', /step must be a number and a unit/],
  ])('over %s refuses step %j', (window, step, message) => {
    let caught: unknown;
    try {
      seriesStep(parseWindow(window), step);
    } catch (err) {
      caught = err;
    }
    expect(isInvalidWindowError(caught)).toBe(true);
    expect((caught as Error).message).toMatch(message);
  });
});

describe('series statements', () => {
  it('run the shipped chart files over whole steps ending with the one holding now', () => {
    const now = Date.UTC(2026, 11, 5, 12, 30, 20);
    const { startMs, count, statements } = seriesStatements({
      window: '5m',
      step: '1m',
      capability: 'a.b',
      tenant: 'acme',
      now,
    });
    expect(count).toBe(5);
    expect(startMs).toBe(Date.UTC(2026, 11, 5, 12, 26));
    const range = `"tenant" = 'acme' AND time >= ${startMs}ms and time < ${startMs + 5 * 60_000}ms`;
    expect(statements).toEqual([
      `SELECT COUNT("task_id") AS "count" FROM "reach_task_events" WHERE "stage" =~ /^(completed|failed|dead)$/ AND "capability" =~ /^a\\.b$/ AND ${range} GROUP BY time(1m), "stage" fill(0)`,
      `SELECT MEAN("latency_ms") AS "mean", PERCENTILE("latency_ms", 95) AS "p95" FROM "reach_task_events" WHERE "stage" = 'completed' AND "capability" =~ /^a\\.b$/ AND ${range} GROUP BY time(1m), "capability" fill(none)`,
    ]);
  });

  it("reads the default tenant's points as those without a tenant tag", () => {
    const { statements } = seriesStatements({ window: '1h', capability: 'x', tenant: 'default' });
    expect(statements[0]).toContain(`"tenant" = '' AND time >= `);
    expect(seriesStatements({ window: '1h', capability: 'x' }).statements[0]).not.toContain(
      'tenant',
    );
  });
});
