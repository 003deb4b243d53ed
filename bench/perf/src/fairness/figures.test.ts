import { describe, expect, it } from 'vitest';
import {
  answerFigures,
  busyShare,
  busyVerdict,
  clumpedStarts,
  jainIndex,
  jainVerdict,
  noisyVerdict,
  waitFigures,
  type WaitFigures,
} from './figures.ts';

const window = { fromMs: 1000, toMs: 2000 };

describe('waitFigures', () => {
  it('takes the nearest-rank percentiles of the waits submitted in the window', () => {
    const samples = Array.from({ length: 100 }, (_, i) => ({
      submitMs: 1000 + i,
      receivedMs: 1000 + i + (i + 1),
    }));
    // Outside the window: not counted.
    samples.push({ submitMs: 999, receivedMs: 5000 }, { submitMs: 2000, receivedMs: 9000 });
    expect(waitFigures(samples, window, 3000)).toEqual({
      submitted: 100,
      received: 100,
      p50: 50,
      p99: 99,
      lowerBound: false,
    });
  });

  it('counts a task still waiting with its wait so far, as a lower bound', () => {
    const samples = [
      { submitMs: 1000, receivedMs: 1010 },
      { submitMs: 1100, receivedMs: 1120 },
      { submitMs: 1900 },
    ];
    const f = waitFigures(samples, window, 2500);
    expect(f).toMatchObject({ submitted: 3, received: 2, p50: 20, p99: 600, lowerBound: true });
  });

  it('keeps the percentiles exact when the open waits are all above them', () => {
    const samples = [
      ...Array.from({ length: 199 }, (_, i) => ({ submitMs: 1000 + i, receivedMs: 1005 + i })),
      { submitMs: 1500 },
    ];
    const f = waitFigures(samples, window, 2500);
    expect(f).toMatchObject({ p99: 5, lowerBound: false, received: 199 });
  });

  it('gives NaN for no samples', () => {
    expect(waitFigures([], window, 2000).p99).toBeNaN();
  });
});

describe('jainIndex', () => {
  it('is 1 for equal shares and 1/n when one holds all', () => {
    expect(jainIndex([5, 5, 5, 5])).toBe(1);
    expect(jainIndex([10, 0, 0, 0, 0])).toBeCloseTo(0.2);
    expect(jainIndex([1, 2, 3])).toBeCloseTo(36 / (3 * 14));
    expect(jainIndex([])).toBeNaN();
    expect(jainIndex([0, 0])).toBeNaN();
  });
});

describe('busyShare', () => {
  it('counts only the run time inside the window', () => {
    const runs = [
      { startMs: 900, endMs: 1100 }, // 100 inside
      { startMs: 1200, endMs: 1400 }, // 200
      { startMs: 1900, endMs: 2100 }, // 100
      { startMs: 2100, endMs: 2300 }, // none
    ];
    expect(busyShare(runs, window, 2)).toBeCloseTo(400 / 2000);
  });
});

describe('verdicts', () => {
  const figures = (p99: number, lowerBound = false): WaitFigures => ({
    submitted: 200,
    received: 200,
    p50: p99 / 2,
    p99,
    lowerBound,
  });

  it('bounds B’s p99 by 1.10 × the alone p99 plus one slot turnover', () => {
    const alone = figures(20);
    const met = noisyVerdict(figures(34), alone, 200, 16);
    expect(met.boundMs).toBeCloseTo(22 + 12.5);
    expect(met.met).toBe(true);
    expect(met.line).toContain(': met');
    expect(noisyVerdict(figures(35), alone, 200, 16).met).toBe(false);
    // A lower bound never passes.
    expect(noisyVerdict(figures(10, true), alone, 200, 16).met).toBe(false);
    expect(noisyVerdict(figures(50, true), alone, 200, 16).line).toContain('≥ 50 ms');
  });

  it('meets Jain’s index at 0.95 and slots busy at 95 %', () => {
    expect(jainVerdict([100, 100, 100]).met).toBe(true);
    expect(jainVerdict([100, 10, 10]).met).toBe(false);
    expect(jainVerdict([90, 100, 110]).line).toContain('served 90–110 each');
    expect(busyVerdict(0.95, 'w').met).toBe(true);
    expect(busyVerdict(0.949, 'w').met).toBe(false);
  });
});

describe('answerFigures', () => {
  it('times submit → answer of the samples in the window that were answered', () => {
    const samples = [
      { submitMs: 1000, answeredMs: 1002 },
      { submitMs: 1100, answeredMs: 1104 },
      { submitMs: 1200 },
      { submitMs: 2500, answeredMs: 2600 },
    ];
    expect(answerFigures(samples, window)).toEqual({ p50: 2, p99: 4 });
  });
});

describe('clumpedStarts', () => {
  it('is the share of starts close behind the one before', () => {
    const runs = [1000, 1001, 1002, 1100, 1200, 1201, 2500].map((startMs) => ({ startMs }));
    expect(clumpedStarts(runs, window, 2)).toBeCloseTo(3 / 5);
    expect(clumpedStarts([], window, 2)).toBeNaN();
  });
});
