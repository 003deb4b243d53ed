import { describe, expect, it } from 'vitest';
import { HOPS, hopsOf } from './hops.ts';

describe('hopsOf', () => {
  const marks = {
    submittedAt: 1_000,
    sentId: '1003-0',
    startedAt: 1_004,
    ackedAt: 1_005,
    publishedId: '1009-2',
    heldAt: 1_011,
  };

  it('splits submit → held into its hops, in order', () => {
    expect(hopsOf(marks)).toEqual({
      'submit → sent': 3,
      'sent → started': 1,
      'started → acked': 1,
      'acked → published': 4,
      'published → held': 2,
    });
    expect(Object.keys(hopsOf(marks) ?? {})).toEqual([...HOPS]);
  });

  it('gives nothing when a mark is missing', () => {
    expect(hopsOf({ ...marks, sentId: '' })).toBeUndefined();
    expect(hopsOf({ ...marks, startedAt: Number.NaN })).toBeUndefined();
    expect(hopsOf({ ...marks, ackedAt: 0 })).toBeUndefined();
  });
});
