import { describe, expect, it } from 'vitest';
import { parseArgs } from './options.ts';
import { rotate, runPlan, warmupPlan } from './plan.ts';

describe('runPlan', () => {
  it('runs flood, each paced rate and http, in that order', () => {
    expect(runPlan(parseArgs([])).map((k) => k.key)).toEqual([
      'flood',
      'paced200',
      'paced2000',
      'paced4000',
      'http',
    ]);
    expect(runPlan(parseArgs(['--modes', 'http'])).map((k) => k.key)).toEqual(['http']);
  });
});

describe('warmupPlan', () => {
  it('warms up every path the measured modes take, paced at no more than 2,000 tasks/s', () => {
    const plan = warmupPlan(parseArgs([]));
    expect(plan.map((k) => k.key)).toEqual(['warmup-flood', 'warmup-paced', 'warmup-http']);
    expect(plan[1]?.req).toMatchObject({ mode: 'paced', rate: 2000 });
    expect(
      warmupPlan(parseArgs(['--modes', 'paced', '--rates', '500'])).map((k) => [k.key, k.req.rate]),
    ).toEqual([
      ['warmup-flood', undefined],
      ['warmup-paced', 500],
    ]);
  });
});

describe('rotate', () => {
  it('starts each repetition with the next system', () => {
    expect(rotate(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 5)).toEqual(['c', 'a', 'b']);
  });
});
