import { describe, expect, it } from 'vitest';
import { median, quantile, round, summarize } from './stats.ts';

describe('quantile', () => {
  it('uses the nearest rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(quantile(xs, 0.5)).toBe(50);
    expect(quantile(xs, 0.99)).toBe(99);
    expect(quantile(xs, 1)).toBe(100);
    expect(quantile([7], 0.99)).toBe(7);
    expect(quantile([], 0.5)).toBeNaN();
  });
});

describe('summarize', () => {
  it('sorts numerically, not as text', () => {
    const s = summarize([10, 9, 100, 1, 2]);
    expect(s.p50).toBe(9);
    expect(s.max).toBe(100);
    expect(s.count).toBe(5);
    expect(s.mean).toBeCloseTo(24.4);
  });

  it('gives NaN figures for no samples', () => {
    expect(summarize([]).p99).toBeNaN();
  });
});

describe('median', () => {
  it('takes the middle value, or the mean of the middle two, ignoring NaN', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([NaN, 5])).toBe(5);
    expect(median([])).toBeNaN();
  });
});

describe('round', () => {
  it('keeps three decimals for small figures and fewer for large ones', () => {
    expect(round(0.123456)).toBe(0.123);
    expect(round(12.3456)).toBe(12.35);
    expect(round(1234.56)).toBe(1235);
  });
});
