import { describe, expect, it } from 'vitest';
import { SlotShares } from './slot-shares.ts';
import { Slots } from './slots.ts';

const never = new AbortController().signal;

describe('SlotShares', () => {
  it('says contended while fewer slots are free than lanes read, so a read holds no long BLOCK', async () => {
    const slots = new Slots(2);
    const shares = new SlotShares(slots, () => 2);
    expect(shares.contended).toBe(false);
    expect(await shares.reserve(never)).toBe(1);
    shares.settle(1, 1);
    // One slot left for two lanes (an inbox and a pool on a Cluster): they must take turns.
    expect(shares.contended).toBe(true);
    slots.release();
    expect(shares.contended).toBe(false);
  });

  it('gives one lane every free slot', async () => {
    const slots = new Slots(4);
    const shares = new SlotShares(slots, () => 1);
    expect(await shares.reserve(never)).toBe(4);
    shares.settle(4, 1);
    expect(slots.free).toBe(3);
    expect(await shares.reserve(never)).toBe(3);
  });

  it('splits free slots evenly among lanes, and never more than are free', async () => {
    const slots = new Slots(7);
    const shares = new SlotShares(slots, () => 3);
    const got = [await shares.reserve(never), await shares.reserve(never)];
    const third = await shares.reserve(never);
    expect([...got, third]).toEqual([2, 2, 3]);
    expect(shares.available).toBe(0);
  });

  it('serves lanes in the order they asked, so one free slot goes round (no lane starves)', async () => {
    const slots = new Slots(1);
    const shares = new SlotShares(slots, () => 3);
    const order: string[] = [];
    const lane = async (name: string, rounds: number) => {
      for (let i = 0; i < rounds; i++) {
        const share = await shares.reserve(never);
        order.push(name);
        await Promise.resolve();
        shares.settle(share, 0);
      }
    };
    await Promise.all([lane('a', 3), lane('b', 3), lane('c', 3)]);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('waits for a finished task when every slot is in use, and answers 0 on abort', async () => {
    const slots = new Slots(1);
    const shares = new SlotShares(slots, () => 2);
    shares.settle(await shares.reserve(never), 1);
    const next = shares.reserve(never);
    const stop = new AbortController();
    const aborted = shares.reserve(stop.signal);
    stop.abort();
    expect(await aborted).toBe(0);
    slots.release();
    expect(await next).toBe(1);
  });
});
