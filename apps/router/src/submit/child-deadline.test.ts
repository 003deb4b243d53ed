import { describe, expect, it } from 'vitest';
import { childTimeout } from './child-deadline.ts';

const NOW = 1_000_000;

describe('childTimeout', () => {
  it('leaves a task whose parent has no deadline as it is', () => {
    expect(childTimeout(0, 0, 5000, NOW)).toEqual({ ok: true, timeoutMs: 0 });
    expect(childTimeout(30_000, 0, 5000, NOW)).toEqual({ ok: true, timeoutMs: 30_000 });
  });

  it('gives a child without a timeout its parent’s time left less the margin', () => {
    expect(childTimeout(0, NOW + 60_000, 5000, NOW)).toEqual({ ok: true, timeoutMs: 55_000 });
  });

  it('keeps a shorter timeout of the child’s own, and cuts a longer one', () => {
    expect(childTimeout(10_000, NOW + 60_000, 5000, NOW)).toEqual({ ok: true, timeoutMs: 10_000 });
    expect(childTimeout(90_000, NOW + 60_000, 5000, NOW)).toEqual({ ok: true, timeoutMs: 55_000 });
  });

  it('cascades: each level gets its parent’s time less the margin', () => {
    let deadline = NOW + 60_000;
    const got: number[] = [];
    for (let level = 0; level < 3; level++) {
      const t = childTimeout(0, deadline, 5000, NOW);
      if (!t.ok) throw new Error('refused');
      got.push(t.timeoutMs);
      deadline = NOW + t.timeoutMs;
    }
    expect(got).toEqual([55_000, 50_000, 45_000]);
  });

  it('refuses a child of a parent with the margin or less left, saying what is left', () => {
    expect(childTimeout(0, NOW + 5000, 5000, NOW)).toEqual({ ok: false, leftMs: 5000 });
    expect(childTimeout(1000, NOW + 3000, 5000, NOW)).toEqual({ ok: false, leftMs: 3000 });
    expect(childTimeout(0, NOW - 10, 5000, NOW)).toEqual({ ok: false, leftMs: 0 });
  });
});
