import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../measure.ts';
import type { Records } from '../session.ts';
import { summarize } from '../stats.ts';
import {
  costLines,
  masterCpu,
  masterShares,
  masterTable,
  maxShare,
  shares,
  spreadLines,
  TOPOLOGY_HEADLINE_KEYS,
  topologyHeadline,
  topologyHeadlineJson,
} from './report.ts';

/** A flood run: `redisNodes` and `procCpu` in CPU seconds per 1,000 tasks. */
function rec(
  tps: number,
  redisNodes: Record<string, number>,
  procCpu: Record<string, number> = {},
): RunRecord {
  const done = summarize([1, 2, 3]);
  const redis = Object.values(redisNodes).reduce((a, b) => a + b, 0);
  const front = Object.entries(procCpu)
    .filter(([n]) => n.includes('router') || n.includes('nginx'))
    .reduce((a, [, v]) => a + v, 0);
  return {
    result: {
      id: 'x',
      mode: 'flood',
      submitted: 1000,
      completed: 1000,
      failed: 0,
      retries: 0,
      duplicates: 0,
      elapsedMs: 1000,
      tps,
      received: done,
      done,
      timedOut: false,
    },
    cpu: {
      caller: 0.05,
      front,
      sync: 0.2,
      workers: 0.4,
      redis,
      endpoint: 0,
      total: 0.65 + front + redis,
    },
    redisNodes,
    procCpu,
    commands: { evalsha: 3, xadd: 3 },
    commandUsec: { evalsha: 80 },
    window: { fromMs: 0, toMs: 1 },
  };
}

const even = { ':7000': 0.1, ':7001': 0.1, ':7002': 0.1 };
const records: Records = {
  'one-redis': { flood: [rec(1000, { redis: 0.15 }), rec(1200, { redis: 0.15 })] },
  cluster: {
    flood: [
      rec(900, { ':7000': 0.2, ':7001': 0.05, ':7002': 0.05 }, { 'cluster-router': 0.3 }),
      rec(1080, { ':7000': 0.2, ':7001': 0.05, ':7002': 0.05 }, { 'cluster-router': 0.3 }),
    ],
  },
  'cluster-3r': {
    flood: [
      rec(1800, even, {
        'cluster-3r-router-0': 0.1,
        'cluster-3r-router-1': 0.1,
        'cluster-3r-router-2': 0.2,
        'cluster-3r-nginx': 0.02,
      }),
      rec(1620, even, {
        'cluster-3r-router-0': 0.1,
        'cluster-3r-router-1': 0.1,
        'cluster-3r-router-2': 0.2,
        'cluster-3r-nginx': 0.02,
      }),
    ],
  },
};

describe('shares', () => {
  it('gives each part its share of the whole, a missing figure counting as nothing', () => {
    const s = shares({ a: 1, b: 3, c: NaN });
    expect(s.map((p) => p.share)).toEqual([0.25, 0.75, 0]);
    expect(maxShare(s)).toBe(0.75);
    expect(shares({ a: 0 })[0]?.share).toBeNaN();
    expect(maxShare([])).toBeNaN();
  });

  it("reads each master's CPU per task as µs, with its share", () => {
    const m = masterShares(records, 'cluster');
    expect(m.map((p) => p.name)).toEqual([':7000', ':7001', ':7002']);
    expect(m[0]?.value).toBeCloseTo(200);
    expect(m[0]?.share).toBeCloseTo(2 / 3);
  });
});

describe("each master's part of the Redis CPU", () => {
  it('gives CPU ms per flood, µs per task, share and the ceiling at one core', () => {
    const [first, second] = masterCpu(records, 'cluster');
    // 0.2 CPU s per 1,000 tasks over a 1,000-task flood: 200 ms in the flood, 200 µs per task.
    expect(first).toMatchObject({ system: 'cluster', name: ':7000' });
    expect(first?.cpuMs).toBeCloseTo(200);
    expect(first?.value).toBeCloseTo(200);
    expect(first?.share).toBeCloseTo(2 / 3);
    expect(first?.perCore).toBeCloseTo(5000);
    expect(second?.cpuMs).toBeCloseTo(50);
    expect(masterCpu(records, 'one-redis')[0]?.share).toBe(1);
  });

  it('prints a row per master of every system', () => {
    const lines = masterTable(records, ['one-redis', 'cluster']).split('\n');
    expect(lines).toHaveLength(2 + 1 + 3);
    expect(lines[2]).toMatch(/^one-redis\s+redis\s+150\s+150\s+100 %\s+6667$/);
    expect(lines[3]).toMatch(/^cluster\s+:7000\s+200\s+200\s+67 %\s+5000$/);
  });
});

describe('the topology report', () => {
  it('names a master over 45 % and the spread over the routers', () => {
    const lines = spreadLines(records, ['one-redis', 'cluster', 'cluster-3r']);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^cluster: .*:7000 200 µs \(67 %\).*busiest 67 % \(target ≤ 45 %: NOT met\)/,
    );
    expect(lines[1]).toMatch(/^cluster-3r: .*busiest 33 % \(target ≤ 45 %: met\)/);
    expect(lines[2]).toMatch(/cluster-3r-router-2 200 µs \(50 %\); nginx 20 µs$/);
  });

  it('gives the per-task costs and the ceilings they predict', () => {
    const lines = costLines(records, ['one-redis', 'cluster'], 2);
    expect(lines[0]).toBe(
      'one-redis: 6.0 Redis commands/task; CPU µs/task: Redis 150 (busiest and only node 150), router 0, registry-sync 200, agents 400, caller 50',
    );
    // One core per process: 1e6 µs ÷ 150 µs for one Redis, ÷ 200 µs for the busiest master.
    expect(lines[2]).toMatch(/one Redis 6667 tasks\/s; a 3-master cluster 5000 tasks\/s/);
    expect(lines[2]).toMatch(/one router 3333 tasks\/s per router/);
    expect(lines.at(-1)).toMatch(/^this machine has 2 vCPU\(s\)/);
  });

  it('ends with a JSON line of every key, ratios paired by repetition', () => {
    const h = topologyHeadline(records);
    expect(h.cluster_vs_one_redis).toBeCloseTo(0.9);
    expect(h.three_routers_vs_one).toBeCloseTo(1.75);
    expect(h.max_master_share).toBeCloseTo(2 / 3);
    expect(h.max_master_share_3r).toBeCloseTo(1 / 3);
    expect(h.busiest_master_cpu_us_per_task).toBeCloseTo(200);
    const json = JSON.parse(topologyHeadlineJson(h)) as Record<string, number>;
    expect(Object.keys(json)).toEqual(TOPOLOGY_HEADLINE_KEYS);
    for (const k of TOPOLOGY_HEADLINE_KEYS) expect(Number.isFinite(json[k])).toBe(true);
  });
});
