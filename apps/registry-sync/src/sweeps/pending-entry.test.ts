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
    });
  });

  it('refuses malformed entries', () => {
    expect(parsePendingEntry('t1', '2|1717-0|1000')).toBeUndefined();
    expect(parsePendingEntry('t1', 'x|1717-0|1000|0|0|1')).toBeUndefined();
  });
});
