import { describe, expect, it } from 'vitest';
import { batchAcks } from './output.ts';

describe('batchAcks', () => {
  it('puts runs of chunks in one ack each and keeps the last of a run of progress values, in order', () => {
    expect(
      batchAcks([
        { kind: 'chunk', text: 'a' },
        { kind: 'chunk', text: 'b' },
        { kind: 'progress', json: '0.1' },
        { kind: 'progress', json: '0.2' },
        { kind: 'chunk', text: 'c' },
      ]),
    ).toEqual([
      { stage: 'chunk', chunks: ['a', 'b'] },
      { stage: 'progress', progress: '0.2' },
      { stage: 'chunk', chunks: ['c'] },
    ]);
  });

  it('starts another ack past 1,000 chunks', () => {
    const items = Array.from({ length: 1500 }, (_, i) => ({
      kind: 'chunk' as const,
      text: `${i}`,
    }));
    const acks = batchAcks(items);
    expect(acks.map((a) => (a.stage === 'chunk' ? a.chunks.length : 0))).toEqual([1000, 500]);
  });
});
