import { describe, expect, it } from 'vitest';
import { parseReadReply, redisErrorCode } from './redis-util.ts';

describe('parseReadReply', () => {
  it('flattens an XREADGROUP reply, keeps the stream of each entry and marks trimmed entries', () => {
    const reply = [
      [
        's',
        [
          ['1-0', ['task_id', 't1']],
          ['2-0', null],
        ],
      ],
      ['p', [['1-0', ['task_id', 't2']]]],
    ];
    expect(parseReadReply(reply)).toEqual([
      { stream: 's', id: '1-0', fields: ['task_id', 't1'] },
      { stream: 's', id: '2-0', fields: null },
      { stream: 'p', id: '1-0', fields: ['task_id', 't2'] },
    ]);
  });

  it('returns nothing for a timeout and skips garbage', () => {
    expect(parseReadReply(null)).toEqual([]);
    expect(parseReadReply([['s', 'oops'], 'x', ['s', [[1, []]]], [7, [['1-0', []]]]])).toEqual([]);
  });
});

describe('redisErrorCode', () => {
  it('reads the code word of a Redis error reply only', () => {
    const reply = Object.assign(new Error('NOGROUP No such key or consumer group'), {
      name: 'ReplyError',
    });
    expect(redisErrorCode(reply)).toBe('NOGROUP');
    expect(redisErrorCode(new Error('NOGROUP lookalike'))).toBeUndefined();
    expect(redisErrorCode('NOGROUP')).toBeUndefined();
  });
});
