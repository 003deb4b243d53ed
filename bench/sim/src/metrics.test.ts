import { describe, expect, it } from 'vitest';
import { mean, percentile, percentiles, spreadOf, stdev } from './metrics.ts';

describe('metrics', () => {
  it('takes nearest-rank percentiles', () => {
    const xs = [5, 1, 4, 2, 3, 10, 9, 8, 7, 6];
    expect(percentiles(xs, [50, 90, 99, 100])).toEqual([5, 9, 10, 10]);
    expect(percentile([], 50)).toBeNaN();
  });

  it('summarises a spread', () => {
    expect(mean([1, 2, 3])).toBe(2);
    expect(stdev([2, 4, 4, 4, 5, 5, 7, 9])).toBe(2);
    expect(spreadOf([0.5, 1])).toMatchObject({ min: 0.5, max: 1, ratio: 2 });
    expect(spreadOf([0, 1]).ratio).toBe(Infinity);
  });
});
