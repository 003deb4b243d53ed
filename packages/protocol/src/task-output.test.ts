import { describe, expect, it } from 'vitest';
import { decodeAck, encodeAck, isOutputAck, isTaskAck, type AckMessage } from './codecs.ts';
import {
  decodeTaskOutput,
  encodeTaskOutput,
  formatEventCursor,
  MAX_CHUNKS_PER_ACK,
  parseEventCursor,
  START_CURSOR,
} from './task-output.ts';

const base = { task_id: 't1', agent_id: 'a1', instance_id: 'i1', epoch: 3, attempt: 1 };

describe('progress and chunk acks', () => {
  it('round-trip, and are neither task acks nor renewals', () => {
    const chunk: AckMessage = { ...base, stage: 'chunk', chunks: ['Hello, ', 'world', ''] };
    const progress: AckMessage = { ...base, stage: 'progress', progress: '{"done":1,"of":2}' };
    for (const ack of [chunk, progress]) {
      const decoded = decodeAck(encodeAck(ack));
      expect(decoded).toEqual({ ok: true, value: ack });
      expect(decoded.ok && isOutputAck(decoded.value)).toBe(true);
      expect(decoded.ok && isTaskAck(decoded.value)).toBe(false);
    }
  });

  it.each([
    ['chunks that are not JSON', ['chunks', '[oops']],
    ['chunks that are not strings', ['chunks', '[1,2]']],
    ['no chunks', ['chunks', '[]']],
    ['too many chunks', ['chunks', JSON.stringify(Array(MAX_CHUNKS_PER_ACK + 1).fill('x'))]],
  ])('refuses a chunk ack with %s', (_name, extra) => {
    const fields = [...encodeAck({ ...base, stage: 'chunk', chunks: ['x'] })];
    fields.splice(fields.indexOf('chunks'), 2, ...extra);
    expect(decodeAck(fields).ok).toBe(false);
  });

  it('refuses a progress value that is not JSON or too long', () => {
    const bad = encodeAck({ ...base, stage: 'progress', progress: 'nope' });
    expect(decodeAck(bad).ok).toBe(false);
    const long = encodeAck({
      ...base,
      stage: 'progress',
      progress: JSON.stringify('x'.repeat(5000)),
    });
    expect(decodeAck(long).ok).toBe(false);
  });
});

describe('the events stream and its cursor', () => {
  it('decodes what registry-sync writes', () => {
    const fields = encodeTaskOutput({ kind: 'chunk', at: 5, attempt: 2, data: 'hi' });
    expect(decodeTaskOutput('1-0', fields)).toEqual({
      id: '1-0',
      kind: 'chunk',
      at: 5,
      attempt: 2,
      data: 'hi',
    });
  });

  it('reads back the ids it writes, and nothing else', () => {
    const c = { entryId: '1764480000150-3', stages: 4 };
    expect(formatEventCursor(c)).toBe('1764480000150-3.4');
    expect(parseEventCursor(formatEventCursor(c))).toEqual(c);
    expect(parseEventCursor(formatEventCursor(START_CURSOR))).toEqual(START_CURSOR);
    for (const text of [undefined, '', '1-0', '1-0.x', '1-0.1.2', '1764480000150-3', 'a.b'])
      expect(parseEventCursor(text)).toBeUndefined();
  });
});
