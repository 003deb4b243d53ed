import { describe, expect, it } from 'vitest';
import { START_CURSOR } from '@agent-reach/protocol';
import { useScratchRedis } from '../testing/scratch-redis.ts';
import { TaskEventsReader } from './task-events.ts';

const scratch = useScratchRedis();
const show = (id: string) => id;

/**
 * A task received at 1,002 ms by agent a1, whose first output's ack was applied at `streamingAt`
 * (the timeline's `streaming` stage); not final yet.
 */
async function streamingTask(taskId: string, streamingAt: number): Promise<void> {
  const { redis, keys } = scratch;
  await redis.hset(keys.task(taskId), {
    status: 'accepted',
    attempt: 1,
    created_at: 1000,
    sent_at: 1001,
    message_id: '1001-0',
    agent_id: 'a1',
    received_at: 1002,
  });
  await redis.rpush(
    keys.timeline(taskId),
    JSON.stringify({ stage: 'streaming', at: streamingAt, agent_id: 'a1', attempt: 1 }),
  );
}

describe('the task events reader', () => {
  it('sends the final stage to a follower whose first page had a later acceptance time than the stages after it', async () => {
    const { redis, keys } = scratch;
    const reader = new TaskEventsReader({ redis, keys });
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

  it('sends the final stage to a follower that saw a streaming stage written in the millisecond of the completion', async () => {
    const { redis, keys } = scratch;
    const reader = new TaskEventsReader({ redis, keys });
    // Its first output's ack, applied at 1,003 ms.
    await streamingTask('tie', 1003);
    const first = await reader.read('tie', START_CURSOR, show);
    expect(first?.events.map((e) => e.data.stage)).toEqual([
      'accepted',
      'sent',
      'received',
      'streaming',
    ]);
    // The completion's ack, applied in the same millisecond.
    await redis.hset(keys.task('tie'), { status: 'completed', completed_at: 1003 });
    const next = await reader.read('tie', first!.cursor, show);
    expect(next?.events.map((e) => e.data.stage)).toEqual(['completed']);
    expect(next?.done).toBe(true);
  });

  it('sends the final stage last even when a stage of its task carries a later time', async () => {
    const { redis, keys } = scratch;
    const reader = new TaskEventsReader({ redis, keys });
    await streamingTask('late', 1010);
    const first = await reader.read('late', START_CURSOR, show);
    expect(first?.events).toHaveLength(4);
    await redis.hset(keys.task('late'), { status: 'completed', completed_at: 1005 });
    const next = await reader.read('late', first!.cursor, show);
    expect(next?.events.map((e) => e.data.stage)).toEqual(['completed']);
    expect(next?.done).toBe(true);
  });
});
