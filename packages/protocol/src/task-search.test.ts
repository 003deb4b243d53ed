import { describe, expect, it } from 'vitest';
import { decodeSearchCursor, encodeSearchCursor, isNewer, parseSearchTime } from './task-search.ts';

describe('search cursors and times', () => {
  it('round-trip a position and refuse other text', () => {
    const p = { at: 1_700_000_000_123, id: 'acme/order:7' };
    expect(decodeSearchCursor(encodeSearchCursor(p))).toEqual(p);
    expect(decodeSearchCursor('bm9wZQ')).toBeUndefined();
  });
  it('order positions newest first, ties by id', () => {
    expect(isNewer({ at: 2, id: 'a' }, { at: 1, id: 'z' })).toBe(true);
    expect(isNewer({ at: 2, id: 'b' }, { at: 2, id: 'a' })).toBe(true);
  });
  it('read ages, epoch ms and dates', () => {
    expect(parseSearchTime('1h', 10_000_000)).toBe(10_000_000 - 3_600_000);
    expect(parseSearchTime('1700000000000', 0)).toBe(1_700_000_000_000);
    expect(parseSearchTime('2026-12-01T00:00:00Z', 0)).toBe(Date.UTC(2026, 11, 1));
    expect(parseSearchTime('2026-13-45', 0)).toBeUndefined();
  });
});
