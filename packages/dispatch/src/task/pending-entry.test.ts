import { describe, expect, it } from 'vitest';
import { parsePendingEntry } from './pending-entry.ts';

describe('parsePendingEntry', () => {
  it('reads what the delivery script writes', () => {
    expect(parsePendingEntry('t1', '2|1717-0|1000|5000|1200|3')).toEqual({
      taskId: 't1',
      attempt: 2,
      messageId: '1717-0',
      sentAt: 1000,
      deadlineMs: 5000,
      receivedAt: 1200,
      epoch: 3,
      probe: false,
    });
  });

  it('reads the marks of a probe and of a pool task', () => {
    expect(parsePendingEntry('probe:a:1', '1|1717-0|1000|0|0|3|probe')).toMatchObject({
      probe: true,
    });
    expect(parsePendingEntry('probe:a:1', '1|1717-0|1000|0|0|3')).toMatchObject({ probe: false });
    const pooled = parsePendingEntry('t1', '1|1717-0|1000|0|1100|3|pool=embed');
    expect(pooled).toMatchObject({ pool: 'embed', probe: false, receivedAt: 1100 });
  });

  it('refuses malformed entries', () => {
    expect(parsePendingEntry('t1', '2|1717-0|1000')).toBeUndefined();
    expect(parsePendingEntry('t1', 'x|1717-0|1000|0|0|1')).toBeUndefined();
  });
});
