import { describe, expect, it } from 'vitest';
import type { RunRecord } from './measure.ts';
import {
  commandLines,
  commandTimeLines,
  HEADLINE_KEYS,
  headline,
  headlineJson,
  hopLines,
  table,
} from './report.ts';
import type { Records } from './session.ts';
import { summarize } from './stats.ts';

function rec(tps: number, p50: number, p99: number, redis: number): RunRecord {
  const done = { ...summarize([p50]), p50, p99 };
  return {
    result: {
      id: 'x',
      mode: 'flood',
      submitted: 10,
      completed: 10,
      failed: 0,
      retries: 0,
      duplicates: 0,
      elapsedMs: 1,
      tps,
      received: done,
      done,
      timedOut: false,
    },
    cpu: { caller: 1, front: 1, sync: 0, workers: 1, redis, endpoint: 0, total: 3 + redis },
    redisNodes: { redis },
    procCpu: {},
    commands: { xadd: 3 },
    commandUsec: { xadd: 4.5 },
    window: { fromMs: 0, toMs: 1 },
  };
}

const records: Records = {
  reach: {
    flood: [rec(100, 1, 2, 1), rec(300, 1, 2, 1), rec(200, 1, 2, 1)],
    paced2000: [rec(0, 1, 5, 1)],
  },
  bullmq: {
    flood: [rec(50, 1, 2, 4), rec(100, 1, 2, 4), rec(200, 1, 2, 4)],
    paced2000: [rec(0, 2, 20, 1)],
  },
  floor: { flood: [rec(400, 1, 2, 1), rec(400, 1, 2, 1), rec(400, 1, 2, 1)] },
};

describe('headline', () => {
  it('takes medians, and ratios of the same repetition', () => {
    const h = headline(records);
    expect(h.reach_tps).toBe(200);
    expect(h.bullmq_tps).toBe(100);
    // per repetition 2, 3, 1 → median 2
    expect(h.ratio_vs_bullmq).toBe(2);
    expect(h.ratio_vs_floor).toBe(0.5);
    expect(h.paced2000_p99_ms).toBe(5);
    expect(h.bullmq_paced2000_p99_ms).toBe(20);
    expect(h.redis_cpu_per_task_ratio_vs_bullmq).toBe(0.25);
  });

  it("gives Agent-Reach's commands, script calls and CPU per task in a flood, and BullMQ's CPU", () => {
    const withScripts = (evalsha: number, total: number): RunRecord => ({
      ...rec(100, 1, 2, 1),
      commands: { evalsha, hset: 2, xadd: 3 },
      cpu: { caller: 0, front: 0, sync: 0, workers: 0, redis: 0, endpoint: 0, total },
    });
    const h = headline({
      reach: { flood: [withScripts(2, 0.4), withScripts(3, 0.6), withScripts(1, 0.5)] },
      bullmq: { flood: [withScripts(3, 0.7)] },
    });
    expect(h.redis_cmds_per_task).toBe(7);
    expect(h.script_calls_per_task).toBe(2);
    expect(h.cpu_ms_per_task).toBe(0.5);
    expect(h.bullmq_cpu_ms_per_task).toBe(0.7);
  });

  it("gives Redis' CPU µs per task and the router process' CPU ms per task of the reach flood", () => {
    const run = (redis: number, router: number): RunRecord => ({
      ...rec(100, 1, 2, redis),
      // CPU seconds per 1,000 tasks: ms per task. The caller and the agents are not the router.
      procCpu: { 'reach-router': router, 'reach-caller': 0.9, 'reach-agent-0': 0.8 },
    });
    const h = headline({
      reach: { flood: [run(0.08, 0.1), run(0.06, 0.3), run(0.07, 0.2)] },
      bullmq: { flood: [run(0.5, 0.9)] },
    });
    expect(h.redis_cpu_us_per_task).toBeCloseTo(70);
    expect(h.router_cpu_ms_per_task).toBeCloseTo(0.2);
    // Records without the router's own figure give no number rather than a wrong one.
    expect(headline(records).router_cpu_ms_per_task).toBeNaN();
  });

  it('prints exactly the keys of the issue, in order, the new ones last', () => {
    const line = headlineJson(headline(records));
    expect(Object.keys(JSON.parse(line) as object)).toEqual(HEADLINE_KEYS);
    expect(HEADLINE_KEYS.slice(0, 2)).toEqual(['reach_tps', 'bullmq_tps']);
    expect(HEADLINE_KEYS.slice(-3)).toEqual([
      'bullmq_cpu_ms_per_task',
      'redis_cpu_us_per_task',
      'router_cpu_ms_per_task',
    ]);
    expect((JSON.parse(line) as Record<string, number>)['redis_cpu_us_per_task']).toBe(1000);
  });
});

describe('table', () => {
  it('has a row per run kind and system, with a dash for a role a system lacks', () => {
    const rolesOf = (system: string) =>
      new Set(
        system === 'reach'
          ? (['caller', 'front', 'sync', 'workers'] as const)
          : (['caller', 'workers'] as const),
      );
    const text = table(records, ['reach', 'bullmq', 'floor'], ['flood'], rolesOf);
    const lines = text.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[3]).toMatch(/^flood\s+bullmq\s+100\s/);
    expect(lines[3]).toContain('–');
  });

  it('notes how many submissions went through the waiting room, summed over repetitions', () => {
    const roomed: Records = {
      reach: { paced4000: [{ ...rec(3000, 1, 900, 1), queued: 5507 }, rec(4000, 1, 90, 1)] },
      bullmq: { paced4000: [rec(4000, 1, 60, 1)] },
    };
    const lines = table(roomed, ['reach', 'bullmq'], ['paced4000'], () => new Set()).split('\n');
    expect(lines[2]).toMatch(/^paced4000\s+reach\s.*5507 queued$/);
    expect(lines[3]).not.toContain('queued');
  });
});

describe('command lines', () => {
  it('give the median per task of each command in the flood runs, systems without a flood left out', () => {
    expect(commandLines(records, ['reach', 'floor'])).toEqual([
      'reach: 3.0 commands/task — xadd 3.00',
      'floor: 3.0 commands/task — xadd 3.00',
    ]);
    expect(commandTimeLines(records, ['bullmq'])).toEqual(['bullmq: xadd 4.5']);
    expect(commandLines({ reach: { paced2000: [] } }, ['reach'])).toEqual([]);
  });
});

describe('hop lines', () => {
  it("give each repetition's p50 and p99 of each hop, for the runs whose caller told them", () => {
    const withHops = (p50: number, p99: number): RunRecord => {
      const r = rec(2000, 1, 2, 1);
      const summary = { ...summarize([p50]), p50, p99 };
      return { ...r, result: { ...r.result, hops: { 'submit → sent': summary } } };
    };
    const lines = hopLines(
      { reach: { paced2000: [withHops(3, 12), withHops(2.4, 40)] }, bullmq: records.bullmq! },
      ['reach', 'bullmq'],
    );
    expect(lines).toEqual(['reach paced2000  submit → sent      p50 3 / 2   p99 12 / 40']);
    expect(hopLines(records, ['reach'])).toEqual([]);
  });
});
