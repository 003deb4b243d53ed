import { describe, expect, it } from 'vitest';
import { Slots } from './slots.ts';

describe('Slots', () => {
  it('counts, refuses to over-take, and wakes waiters on release', async () => {
    const slots = new Slots(2);
    slots.take(2);
    expect(slots.free).toBe(0);
    expect(() => slots.take(1)).toThrow(RangeError);
    let woke = false;
    const waiting = slots.whenFree().then(() => (woke = true));
    await Promise.resolve();
    expect(woke).toBe(false);
    slots.release();
    await waiting;
    expect(woke).toBe(true);
    expect(slots.free).toBe(1);
  });

  it('whenFree resolves on abort; whenIdle once all are back', async () => {
    const slots = new Slots(1);
    slots.take(1);
    const ac = new AbortController();
    const waiting = slots.whenFree(ac.signal);
    ac.abort();
    await waiting;
    const idle = slots.whenIdle();
    slots.release();
    await idle;
    expect(slots.inUse).toBe(0);
    expect(() => slots.release()).toThrow(RangeError);
  });
});
