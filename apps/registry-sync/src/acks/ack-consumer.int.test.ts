import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { reachKeys, SYNC_GROUP, type ReachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { AckConsumer, type AckConsumerSettings } from './ack-consumer.ts';
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

/** Starts the test's consumer with `settings` and a recording applier; the entries it applied. */
async function startRecordingConsumer(settings: AckConsumerSettings): Promise<Map<string, number>> {
  const { applied, applier } = recordingApplier();
  consumer = new AckConsumer({
    blocking,
    redis,
    keys,
    applier,
    settings,
    logger: pino({ level: 'silent' }),
  });
  await consumer.start();
  return applied;
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

    const applied = await startRecordingConsumer({
      consumer: 'sync-live',
      stream,
      blockMs: 100,
      claimIdleMs: 1000,
      claimEveryMs: 100,
    });
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

  it('waits lingerMs after a read of a few entries, so the acks that follow make one batch', async () => {
    const stream = keys.acks();
    const applied = await startRecordingConsumer({
      consumer: 'sync-linger',
      stream,
      blockMs: 100,
      lingerMs: 400,
    });
    // One entry alone: read and applied at once, and the next read goes out at once too.
    const alone = (await redis.xadd(stream, '*', 'n', 'alone')) as string;
    await waitFor(() => applied.has(alone), { timeoutMs: 2000, intervalMs: 5 });
    const second = (await redis.xadd(stream, '*', 'n', 'second')) as string;
    const secondAt = Date.now();
    await waitFor(() => applied.has(second), { timeoutMs: 2000, intervalMs: 5 });
    expect((applied.get(second) as number) - secondAt).toBeLessThan(300);
    // Two at once: read together, then the consumer waits before reading again.
    const pair = (await redis
      .multi()
      .xadd(stream, '*', 'n', 'p1')
      .xadd(stream, '*', 'n', 'p2')
      .exec()) as [null, string][];
    const pairIds = pair.map(([, id]) => id);
    await waitFor(() => pairIds.every((id) => applied.has(id)), { timeoutMs: 2000, intervalMs: 5 });
    const pairAt = Math.max(...pairIds.map((id) => applied.get(id) as number));
    // Three more, 50 ms apart, while it waits: applied together once it reads again.
    const later: string[] = [];
    for (let i = 0; i < 3; i++) {
      later.push((await redis.xadd(stream, '*', 'n', `l${i}`)) as string);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await waitFor(() => later.every((id) => applied.has(id)), { timeoutMs: 3000, intervalMs: 5 });
    const laterAt = later.map((id) => applied.get(id) as number);
    expect(Math.min(...laterAt) - pairAt).toBeGreaterThanOrEqual(390);
    expect(Math.max(...laterAt) - Math.min(...laterAt)).toBeLessThan(50);
  });
});
