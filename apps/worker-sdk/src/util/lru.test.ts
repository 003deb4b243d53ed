import { describe, expect, it } from 'vitest';
import { LruMap } from './lru.ts';

describe('LruMap', () => {
  it('evicts the least recently used entry past capacity', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1).set('b', 2);
    expect(lru.get('a')).toBe(1); // a is now the most recent
    lru.set('c', 3);
    expect(lru.has('b')).toBe(false);
    expect(lru.get('a')).toBe(1);
    expect(lru.get('c')).toBe(3);
    expect(lru.size).toBe(2);
  });

  it('re-setting a key refreshes it and keeps one entry', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1).set('b', 2).set('a', 10).set('c', 3);
    expect(lru.get('a')).toBe(10);
    expect(lru.has('b')).toBe(false);
  });

  it('has() does not refresh recency', () => {
    const lru = new LruMap<string, number>(2);
    lru.set('a', 1).set('b', 2);
    expect(lru.has('a')).toBe(true);
    lru.set('c', 3);
    expect(lru.has('a')).toBe(false);
  });

  it('keeps falsy values apart from missing ones', () => {
    const lru = new LruMap<string, number>(1);
    lru.set('zero', 0);
    expect(lru.get('zero')).toBe(0);
    expect(lru.get('none')).toBeUndefined();
  });

  it('capacity 0 keeps nothing; a bad capacity throws', () => {
    const lru = new LruMap<string, number>(0);
    lru.set('a', 1);
    expect(lru.size).toBe(0);
    expect(() => new LruMap(-1)).toThrow(RangeError);
    expect(() => new LruMap(1.5)).toThrow(RangeError);
  });

  it('delete and clear', () => {
    const lru = new LruMap<string, number>(3);
    lru.set('a', 1).set('b', 2);
    expect(lru.delete('a')).toBe(true);
    expect(lru.delete('a')).toBe(false);
    lru.clear();
    expect(lru.size).toBe(0);
  });

  it('keeps evicting the least recently used entry over many turns of a full map', () => {
    const lru = new LruMap<number, number>(3);
    for (let i = 0; i < 1000; i++) {
      lru.set(i, i);
      // The oldest but one is read each turn: it outlives the one read before it.
      if (i >= 2) lru.get(i - 1);
    }
    expect(lru.size).toBe(3);
    expect([997, 998, 999].map((k) => lru.has(k))).toEqual([true, true, true]);
    lru.clear();
    lru.set(1, 1).set(2, 2).set(3, 3).set(4, 4);
    expect([1, 2, 3, 4].map((k) => lru.has(k))).toEqual([false, true, true, true]);
  });

  it('a full map of 10,000 keeps exactly the newest 10,000 of 110,000 keys', () => {
    const lru = new LruMap<string, number>(10_000);
    for (let i = 0; i < 110_000; i++) lru.set(`t${i}`, i);
    expect(lru.size).toBe(10_000);
    expect([lru.has('t100000'), lru.has('t109999'), lru.has('t99999')]).toEqual([
      true,
      true,
      false,
    ]);
  });
});
