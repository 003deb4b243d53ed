import { describe, expect, it } from 'vitest';
import { Backoff, DEFAULT_BACKOFF, backoffDelayMs, compileBackoff } from './backoff.ts';

describe('backoffDelayMs', () => {
  const noJitter = compileBackoff({ baseMs: 500, capMs: 10_000, jitter: 0 });

  it('doubles from the base and stops at the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(n, noJitter))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });

  it('spreads by ±jitter around the exponential value', () => {
    const b = compileBackoff({ baseMs: 1000, capMs: 100_000, jitter: 0.2 });
    expect(backoffDelayMs(0, b, () => 0)).toBe(800);
    expect(backoffDelayMs(0, b, () => 0.5)).toBe(1000);
    expect(backoffDelayMs(0, b, () => 1)).toBe(1200);
  });

  it('never exceeds the cap, jitter included', () => {
    for (let i = 0; i < 200; i++)
      expect(backoffDelayMs(40, DEFAULT_BACKOFF)).toBeLessThanOrEqual(10_000);
  });

  it('survives huge retry counts', () => {
    expect(backoffDelayMs(10_000, noJitter)).toBe(10_000);
    expect(backoffDelayMs(-3, noJitter)).toBe(500);
  });
});

describe('compileBackoff', () => {
  it('fills defaults: base 500 ms, cap 10 s, ±20 %', () => {
    expect(compileBackoff()).toEqual({ baseMs: 500, capMs: 10_000, jitter: 0.2 });
    expect(compileBackoff({ baseMs: 100 })).toEqual({ baseMs: 100, capMs: 10_000, jitter: 0.2 });
  });

  it('rejects nonsense', () => {
    expect(() => compileBackoff({ baseMs: 0 })).toThrow(RangeError);
    expect(() => compileBackoff({ baseMs: 1000, capMs: 10 })).toThrow(RangeError);
    expect(() => compileBackoff({ jitter: 2 })).toThrow(RangeError);
  });
});

describe('Backoff', () => {
  it('grows per failure and starts over after reset()', () => {
    const b = new Backoff(compileBackoff({ baseMs: 10, capMs: 1000, jitter: 0 }));
    expect([b.next(), b.next(), b.next()]).toEqual([10, 20, 40]);
    expect(b.failures).toBe(3);
    b.reset();
    expect(b.next()).toBe(10);
  });
});
