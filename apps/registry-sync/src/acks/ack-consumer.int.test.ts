import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { reachKeys, SYNC_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { AckConsumer } from './ack-consumer.ts';
import type { AckApplier } from './ack-applier.ts';

let redis: Redis;
let blocking: Redis;
let keys: ReachKeys;
let consumer: AckConsumer | undefined;

beforeEach(() => {
  keys = reachKeys(randomPrefix());
  redis = new Redis(testServices().redisUrl);
  blocking = redis.duplicate();
});

afterEach(async () => {
  await consumer?.close();
  consumer = undefined;
  await redis.del(keys.acks());
  await redis.quit();
  blocking.disconnect();
});

/** Records which entries it was given and when; applies nothing. */
function recordingApplier(): { applied: Map<string, number>; applier: AckApplier } {
  const applied = new Map<string, number>();
  const applier = {
    apply: (id: string) => {
      applied.set(id, Date.now());
      return Promise.resolve({ applied: true, final: true });
    },
  };
  // The consumer calls apply() only; the rest of AckApplier is the ack scripts'.
  return { applied, applier: applier as unknown as AckApplier };
}

describe('AckConsumer', () => {
  it("claims a killed instance's unapplied acks once idle for claimIdleMs, not before", async () => {
    const stream = keys.acks();
    await redis.xgroup('CREATE', stream, SYNC_GROUP, '0', 'MKSTREAM');
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await redis.xadd(stream, '*', 'n', String(i))) as string);
    // A consumer that read them and died before applying them.
    await redis.xreadgroup('GROUP', SYNC_GROUP, 'sync-dead', 'COUNT', 10, 'STREAMS', stream, '>');
    const readAt = Date.now();

    const { applied, applier } = recordingApplier();
    consumer = new AckConsumer({
      blocking,
      redis,
      keys,
      applier,
      settings: {
        consumer: 'sync-live',
        stream,
        blockMs: 100,
        claimIdleMs: 1000,
        claimEveryMs: 100,
      },
      logger: pino({ level: 'silent' }),
    });
    await consumer.start();
    await waitFor(() => ids.every((id) => applied.has(id)), {
      timeoutMs: 5000,
      intervalMs: 20,
      message: 'the left acks applied by the live instance',
    });
    const firstAt = Math.min(...applied.values());
    expect(firstAt - readAt).toBeGreaterThanOrEqual(1000);
    expect(firstAt - readAt).toBeLessThan(1000 + 1000);
    // Applied, acknowledged and deleted: nothing pending, nothing left in the stream.
    await waitFor(async () => (await redis.xlen(stream)) === 0, { timeoutMs: 2000 });
    const pending = (await redis.xpending(stream, SYNC_GROUP)) as [number, ...unknown[]];
    expect(pending[0]).toBe(0);
  });
});
