import { describe, expect, it } from 'vitest';
import { START_CURSOR } from '@agent-reach/protocol';
import { useScratchRedis } from '../testing/scratch-redis.ts';
import { TaskEventsReader } from './task-events.ts';

const scratch = useScratchRedis();
const show = (id: string) => id;

describe('the task events reader', () => {
  it('sends the final stage to a follower whose first page had a later acceptance time than the stages after it', async () => {
    const { redis, keys } = scratch;
    const reader = new TaskEventsReader(redis, keys);
    // The router's reading of Redis time was late: accepted at 1,000 ms, sent at 980.
    await redis.hset(keys.task('fast'), 'status', 'accepted', 'attempt', 1, 'created_at', 1000);
    const first = await reader.read('fast', START_CURSOR, show);
    expect(first?.events.map((e) => e.event)).toEqual(['stage']);
    expect(first?.done).toBe(false);
    // A fast task: delivered, received and completed before the late acceptance time.
    await redis.hset(keys.task('fast'), {
      status: 'completed',
      sent_at: 980,
      message_id: '980-0',
      agent_id: 'a1',
      received_at: 985,
      completed_at: 990,
    });
    const next = await reader.read('fast', first!.cursor, show);
    expect(next?.events.map((e) => e.data.stage)).toEqual(['sent', 'received', 'completed']);
    expect(next?.done).toBe(true);
    // Resumed after the last event: nothing more, and the stream may end.
    const after = await reader.read('fast', next!.cursor, show);
    expect(after?.events).toEqual([]);
    expect(after?.done).toBe(true);
  });
});
