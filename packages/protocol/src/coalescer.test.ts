import { describe, expect, it } from 'vitest';
import { Coalescer } from './coalescer.ts';

/** A runner that records each batch and answers `item * 10`. */
function recording() {
  const batches: { key: string; items: number[] }[] = [];
  const run = (key: string, items: readonly number[]) => {
    batches.push({ key, items: [...items] });
    return Promise.resolve(items.map((i) => i * 10));
  };
  return { batches, run };
}

describe('Coalescer', () => {
  it('runs the calls of one turn that share a key as one batch, each with its own result', async () => {
    const { batches, run } = recording();
    const c = new Coalescer(run);
    const results = await Promise.all([c.call('a', 1), c.call('b', 2), c.call('a', 3)]);
    expect(results).toEqual([10, 20, 30]);
    expect(batches).toEqual([
      { key: 'a', items: [1, 3] },
      { key: 'b', items: [2] },
    ]);
  });

  it('gathers calls made by continuations of the same turn', async () => {
    const { batches, run } = recording();
    const c = new Coalescer(run);
    const first = Promise.resolve(1);
    const results = await Promise.all([1, 2, 3].map(async (i) => c.call('k', (await first) + i)));
    expect(results).toEqual([20, 30, 40]);
    expect(batches).toHaveLength(1);
  });

  it('starts a new batch in a later turn', async () => {
    const { batches, run } = recording();
    const c = new Coalescer(run);
    await c.call('k', 1);
    await c.call('k', 2);
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
  });

  it('sends a batch at once when it reaches the cap', async () => {
    const { batches, run } = recording();
    const c = new Coalescer(run, { maxItems: 2 });
    const all = Promise.all([c.call('k', 1), c.call('k', 2), c.call('k', 3)]);
    expect(batches.map((b) => b.items)).toEqual([[1, 2]]);
    expect(await all).toEqual([10, 20, 30]);
    expect(batches.map((b) => b.items)).toEqual([[1, 2], [3]]);
  });

  it('sends a batch at once when its items reach the byte cap', async () => {
    const { batches, run } = recording();
    const c = new Coalescer(run, { maxBytes: 100 });
    const all = Promise.all([c.call('k', 60, 60), c.call('k', 50, 50), c.call('k', 1, 1)]);
    expect(batches.map((b) => b.items)).toEqual([[60, 50]]);
    await all;
    expect(batches.map((b) => b.items)).toEqual([[60, 50], [1]]);
  });

  it('rejects every call of a failed batch, and only those', async () => {
    const c = new Coalescer<number, number>((key, items) =>
      key === 'bad' ? Promise.reject(new Error('down')) : Promise.resolve(items),
    );
    const [bad1, good, bad2] = await Promise.allSettled([
      c.call('bad', 1),
      c.call('good', 2),
      c.call('bad', 3),
    ]);
    expect(bad1).toMatchObject({ status: 'rejected', reason: new Error('down') });
    expect(bad2).toMatchObject({ status: 'rejected', reason: new Error('down') });
    expect(good).toEqual({ status: 'fulfilled', value: 2 });
  });

  it('rejects every call of a batch whose runner throws instead of rejecting', async () => {
    const c = new Coalescer<number, number>(() => {
      throw new Error('bad key');
    });
    const results = await Promise.allSettled([c.call('k', 1), c.call('k', 2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('rejects the calls a batch left without a result', async () => {
    const c = new Coalescer<number, number>((_key, items) => Promise.resolve(items.slice(0, 1)));
    const [a, b] = await Promise.allSettled([c.call('k', 1), c.call('k', 2)]);
    expect(a).toEqual({ status: 'fulfilled', value: 1 });
    expect(b.status).toBe('rejected');
  });
});
