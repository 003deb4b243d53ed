import { describe, expect, it } from 'vitest';
import { RingBuffer } from './ring.ts';

describe('RingBuffer', () => {
  it('is FIFO and takes at most what it holds', () => {
    const r = new RingBuffer<number>(5);
    for (const n of [1, 2, 3]) expect(r.push(n)).toBe(false);
    expect(r.take(2)).toEqual([1, 2]);
    expect(r.take(10)).toEqual([3]);
    expect(r.size).toBe(0);
  });

  it('overwrites the oldest item when full and says so', () => {
    const r = new RingBuffer<number>(3);
    const overwritten = [1, 2, 3, 4, 5].map((n) => r.push(n));
    expect(overwritten).toEqual([false, false, false, true, true]);
    expect(r.take(10)).toEqual([3, 4, 5]);
  });

  it('keeps order across wrap-around while partly drained', () => {
    const r = new RingBuffer<number>(4);
    const out: number[] = [];
    let next = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 3; i++) r.push(next++);
      out.push(...r.take(3));
    }
    expect(out).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });

  it('clear() empties it and reports the count', () => {
    const r = new RingBuffer<string>(2);
    r.push('a');
    r.push('b');
    r.push('c');
    expect(r.clear()).toBe(2);
    expect(r.size).toBe(0);
    r.push('d');
    expect(r.take(5)).toEqual(['d']);
  });

  it('rejects a capacity below 1', () => {
    expect(() => new RingBuffer(0)).toThrow(RangeError);
  });
});
