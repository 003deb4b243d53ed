import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../measure.ts';
import type { Records } from '../session.ts';
import { EMPTY_SUMMARY } from '../stats.ts';
import { pacedKey, pairedDiff, relayTable, relayTargets } from './compare.ts';

function rec(workers: number, p50: number, endpoint = 0): RunRecord {
  return {
    result: {
      id: 'x',
      mode: 'flood',
      submitted: 100,
      completed: 100,
      failed: 0,
      retries: 0,
      duplicates: 0,
      elapsedMs: 100,
      tps: 1000,
      received: EMPTY_SUMMARY,
      done: { ...EMPTY_SUMMARY, p50, p99: 2 * p50 },
      timedOut: false,
    },
    cpu: {
      caller: 0.1,
      front: 0.2,
      sync: 0.2,
      workers,
      redis: 0.1,
      endpoint,
      total: 0.6 + workers + endpoint,
    },
    redisNodes: {},
    procCpu: {},
    commands: {},
    commandUsec: {},
    window: { fromMs: 0, toMs: 100 },
  };
}

const records: Records = {
  reach: { flood: [rec(0.2, 5), rec(0.3, 6)], paced200: [rec(0.2, 3), rec(0.2, 4)] },
  'relay-http': {
    flood: [rec(0.3, 6, 0.4), rec(0.6, 7, 0.4)],
    paced200: [rec(0.3, 4, 0.4), rec(0.3, 5, 0.4)],
  },
};

describe('relay comparison', () => {
  it('pairs repetitions: the median of per-repetition differences', () => {
    const d = pairedDiff(records, 'relay-http', 'reach', 'flood', (r) => r.cpu.workers);
    expect(d.reps.map((x) => Math.round(x * 100) / 100)).toEqual([0.1, 0.3]);
    expect(d.median).toBeCloseTo(0.2);
    expect(pacedKey(records)).toBe('paced200');
  });

  it('reports each relay against the targets, the endpoint server apart', () => {
    const { lines, json } = relayTargets(records, ['reach', 'relay-http']);
    expect(lines[0]).toContain('MISSED');
    expect(lines[1]).toContain('met');
    expect(json['relay_http_extra_cpu_ms_per_task']).toBeCloseTo(0.2);
    expect(json['relay_http_extra_paced200_p50_ms']).toBeCloseTo(1);
    // total leaves the endpoint server out: 0.6 + the relay's median 0.45.
    expect(json['relay_http_cpu_ms_per_task']).toBeCloseTo(1.05);
    expect(json['relay_http_endpoint_cpu_ms_per_task']).toBeCloseTo(0.4);
    expect(relayTable(records, ['reach', 'relay-http']).split('\n')).toHaveLength(4);
  });
});
