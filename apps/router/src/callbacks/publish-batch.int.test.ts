import { describe, expect, it } from 'vitest';
import { decodeCallback, type CallbackMessage } from '@agent-reach/protocol';
import { CallbackPublisher } from '@agent-reach/dispatch';
import { useScratchRedis } from '../testing/scratch-redis.ts';

const scratch = useScratchRedis();

const result = (
  taskId: string,
  status: CallbackMessage['status'] = 'completed',
  attempt = 1,
): CallbackMessage => ({
  task_id: taskId,
  status,
  capability: 'cap',
  agent_id: 'a1',
  attempt,
  completed_at: 1,
  ...(status === 'completed' ? { result: `{"of":"${taskId}"}` } : { error: 'max_attempts' }),
});

describe('results published in the same tick', () => {
  it('reach their topic once each, in order, a repeat in the same batch or a later one publishing nothing', async () => {
    const { redis, keys } = scratch;
    const publisher = new CallbackPublisher({
      redis,
      keys,
      settings: {
        callbackRetentionS: 60,
        callbackMaxLen: 1000,
      },
    });
    const ids = await Promise.all([
      publisher.publish('me', result('t1')),
      publisher.publish('me', result('t2')),
      publisher.publish('me', result('t1')),
      publisher.publish('other', result('t1')),
      publisher.publish('me', result('t3', 'dead', 1)),
      publisher.publish('me', result('t3', 'dead', 2)),
    ]);
    expect(ids.map((id) => id !== null)).toEqual([true, true, false, true, true, true]);
    expect(await publisher.publish('me', result('t2'))).toBeNull();
    expect(await publisher.publish('me', result('t3', 'dead', 1))).toBeNull();
    // The completions' marks: one hash per topic and minute of completion, not a key per task.
    expect((await redis.hkeys(keys.callbackMarks('me', 0))).sort()).toEqual(['t1', 't2']);
    expect(await redis.ttl(keys.callbackMarks('me', 0))).toBeGreaterThan(0);
    const entries = await redis.xrange(keys.callback('me'), '-', '+');
    expect(
      entries
        .map(([, fields]) => decodeCallback(fields))
        .map((m) => `${m.task_id}:${m.status}:${m.attempt}`),
    ).toEqual(['t1:completed:1', 't2:completed:1', 't3:dead:1', 't3:dead:2']);
    expect(await redis.xlen(keys.callback('other'))).toBe(1);
    expect(await redis.ttl(keys.callback('me'))).toBeGreaterThan(0);
  });
});
