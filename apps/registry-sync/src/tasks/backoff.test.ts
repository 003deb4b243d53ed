import { describe, expect, it } from 'vitest';
import { backoffMs } from './backoff.ts';

const s = { retryBaseMs: 2000, retryCapMs: 120000 };

describe('backoffMs', () => {
  it('doubles from the base with no jitter at the midpoint', () => {
    expect([1, 2, 3, 4].map((a) => backoffMs(a, s, () => 0.5))).toEqual([2000, 4000, 8000, 16000]);
  });

  it('stays within ±20 % of the nominal delay', () => {
    expect(backoffMs(1, s, () => 0)).toBe(1600);
    expect(backoffMs(1, s, () => 1)).toBe(2400);
    for (let i = 0; i < 1000; i++) {
      const d = backoffMs(3, s);
      expect(d).toBeGreaterThanOrEqual(6400);
      expect(d).toBeLessThanOrEqual(9600);
    }
  });

  it('is capped at 120 s (before jitter)', () => {
    expect(backoffMs(20, s, () => 0.5)).toBe(120000);
    expect(backoffMs(20, s, () => 1)).toBeLessThanOrEqual(144000);
  });

  it('spreads tasks that fail together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffMs(2, s)));
    expect(delays.size).toBeGreaterThan(10);
  });
});
