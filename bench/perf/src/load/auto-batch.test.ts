import { describe, expect, it } from 'vitest';
import { autoBatch } from './auto-batch.ts';

describe('autoBatch', () => {
  it('sends the submissions of one tick together, in parts of at most maxBatch, each settling with its own outcome', async () => {
    const sent: string[][] = [];
    const submit = autoBatch(async (keys) => {
      sent.push(keys);
      return keys.map((k) => (k === 'b' ? new Error('refused b') : undefined));
    }, 2);
    const outcomes = await Promise.allSettled(['a', 'b', 'c'].map((k) => submit(k)));
    expect(sent).toEqual([['a', 'b'], ['c']]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    await submit('d');
    expect(sent).toEqual([['a', 'b'], ['c'], ['d']]);
  });

  it('fails every submission of a batch whose request failed', async () => {
    const submit = autoBatch(async () => {
      throw new Error('connection refused');
    }, 10);
    const outcomes = await Promise.allSettled([submit('a'), submit('b')]);
    expect(outcomes.every((o) => o.status === 'rejected')).toBe(true);
  });

  it('reads a limit given as a function at each flush', async () => {
    const sent: number[] = [];
    let limit = 3;
    const submit = autoBatch(
      async (keys) => {
        sent.push(keys.length);
        return keys.map(() => undefined);
      },
      () => limit,
    );
    await Promise.all(['a', 'b', 'c', 'd'].map((k) => submit(k)));
    limit = 1;
    await Promise.all(['e', 'f'].map((k) => submit(k)));
    expect(sent).toEqual([3, 1, 1, 1]);
  });
});
