import { describe, expect, it } from 'vitest';
import { formatPendingEntry, parsePendingEntry } from './pending-entry.ts';

describe('parsePendingEntry', () => {
  it('reads what the delivery script writes, the delivery time from the entry id', () => {
    expect(parsePendingEntry('t1', '2|3||1717-0|1200|5000')).toEqual({
      taskId: 't1',
      attempt: 2,
      messageId: '1717-0',
      sentAt: 1717,
      deadlineMs: 5000,
      receivedAt: 1200,
      epoch: 3,
      probe: false,
    });
  });

  it('reads the marks of a probe and of a pool task', () => {
    expect(parsePendingEntry('probe:a:1', '1|3|probe|1717-0|0|0')).toMatchObject({
      probe: true,
    });
    expect(parsePendingEntry('probe:a:1', '1|3||1717-0|0|0')).toMatchObject({ probe: false });
    const pooled = parsePendingEntry('t1', '1|3|pool=embed|1717-0|1100|0');
    expect(pooled).toMatchObject({ pool: 'embed', probe: false, receivedAt: 1100 });
  });

  it('refuses malformed entries', () => {
    expect(parsePendingEntry('t1', '2|1717-0|1000')).toBeUndefined();
    expect(parsePendingEntry('t1', 'x|1||1717-0|0|0')).toBeUndefined();
    expect(parsePendingEntry('t1', '1|1|||0|0')).toBeUndefined();
  });

  it('writes what it reads', () => {
    const e = {
      attempt: 1,
      epoch: 2,
      messageId: '5-1',
      receivedAt: 0,
      deadlineMs: 9,
      probe: false,
    };
    expect(formatPendingEntry(e)).toBe('1|2||5-1|0|9');
    expect(parsePendingEntry('t', formatPendingEntry({ ...e, pool: 'embed' }))).toMatchObject({
      ...e,
      pool: 'embed',
      sentAt: 5,
    });
  });
});
