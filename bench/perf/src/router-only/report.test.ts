import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../measure.ts';
import type { Records } from '../session.ts';
import { summarize } from '../stats.ts';
import {
  ROUTER_ONLY_HEADLINE_KEYS,
  routerOnlyHeadline,
  routerOnlyHeadlineJson,
  routerOnlyTable,
  tasksPerCore,
  verdictLines,
} from './report.ts';

/** A 1,000-task flood over `elapsedMs`; `front` and `redis` in CPU ms per task. */
function rec(front: number, redis: number, elapsedMs = 500, gc?: RunRecord['gc']): RunRecord {
  const done = summarize([1, 2, 3]);
  return {
    result: {
      id: 'x',
      mode: 'flood',
      submitted: 1000,
      completed: 1000,
      failed: 0,
      retries: 0,
      duplicates: 0,
      elapsedMs,
      tps: 1e6 / elapsedMs,
      received: done,
      done,
      timedOut: false,
      requests: 40,
    },
    cpu: {
      caller: 0.02,
      front,
      sync: 0.05,
      workers: 0.01,
      redis,
      endpoint: 0,
      total: 0.08 + front + redis,
    },
    redisNodes: { redis },
    procCpu: { 'ro-router': front },
    commands: { evalsha: 2, xadd: 3 },
    commandUsec: {},
    window: { fromMs: 0, toMs: elapsedMs },
    ...(gc ? { gc } : {}),
  };
}

const gc = (count: number, pauseMs: number) => ({ count, pauseMs, markingMs: 1, byKind: {} });
const records: Records = {
  router: {
    flood: [
      rec(0.1, 0.06, 500, gc(20, 10)),
      rec(0.125, 0.07, 500, gc(30, 12)),
      rec(0.2, 0.08, 500, gc(40, 14)),
    ],
  },
  'router-floor': { flood: [rec(0.05, 0.01, 250), rec(0.05, 0.01), rec(0.05, 0.01)] },
};

const rolesOf = (system: string) =>
  new Set(
    system === 'router'
      ? (['caller', 'front', 'sync', 'workers'] as const)
      : (['caller', 'front'] as const),
  );

describe('the router-only report', () => {
  it("gives the router's CPU per task, its inverse and how busy its core was", () => {
    const h = routerOnlyHeadline(records);
    expect(h.router_cpu_ms_per_task).toBeCloseTo(0.125);
    expect(h.router_tasks_per_core).toBeCloseTo(8000);
    expect(tasksPerCore(0)).toBeNaN();
    // 0.125 ms × 1,000 tasks in 500 ms: a quarter of its core.
    expect(h.router_core_busy).toBeCloseTo(0.25);
    // 1,000 tasks in 40 requests.
    expect(h.router_tasks_per_request).toBe(25);
    expect(h.redis_cpu_us_per_task).toBeCloseTo(70);
    expect(h.floor_cpu_ms_per_task).toBeCloseTo(0.05);
    expect(h.floor_tasks_per_core).toBeCloseTo(20_000);
    // Per repetition 2, 2.5, 4: the median of the pairs.
    expect(h.router_vs_floor_cpu).toBeCloseTo(2.5);
    expect(h.router_gc_pauses).toBe(30);
    expect(h.router_gc_pause_ms).toBe(12);
  });

  it('ends with a JSON line of every key, null for what was not measured, and the pinning', () => {
    const line = routerOnlyHeadlineJson(routerOnlyHeadline({ router: records.router }), true);
    const json = JSON.parse(line) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual([...ROUTER_ONLY_HEADLINE_KEYS, 'pinned']);
    expect(json['floor_tps']).toBeNull();
    expect(json['router_cpu_ms_per_task']).toBe(0.125);
    expect(json['pinned']).toBe(true);
  });

  it('prints a row per system, GC columns only when traced, and what the figures say', () => {
    const lines = routerOnlyTable(records, ['router', 'router-floor'], rolesOf).split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toContain('GC pauses');
    expect(lines[2]).toMatch(/^router\s+2000\s+2\.00\s+3\.00\s+0\.1250\s+8000\s+25 %\s+25\.0\s/);
    expect(lines[3]).toMatch(/^router-floor\s.*\s10\.0\s+–\s+–\s+0\.020\s/);
    const untraced = routerOnlyTable(
      { 'router-floor': records['router-floor'] },
      ['router', 'router-floor'],
      rolesOf,
    );
    expect(untraced).not.toContain('GC');
    expect(untraced.split('\n')).toHaveLength(3);
    const verdict = verdictLines(records);
    expect(verdict[0]).toMatch(/^router: 125 µs CPU per task → 8000 tasks\/s per router core/);
    expect(verdict[2]).toMatch(/2\.50× the floor's CPU per task: 75 µs per task/);
  });
});
