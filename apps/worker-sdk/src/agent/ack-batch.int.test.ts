/**
 * AckBatch against a real Redis: the acks of one tick leave together — each XADD in the order
 * given, the XACKs after them — and a failed command fails only the acks it belongs to.
 */
import { WORKER_GROUP } from '@agent-reach/protocol';
import { randomPrefix } from '@agent-reach/testkit';
import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AckBatch } from './ack-batch.ts';
import type { ReadOrigin } from './redis-util.ts';
import { pendingCount, redisUrl } from '../testing/support.ts';

let redis: Redis;
let prefix: string;

beforeEach(() => {
  redis = new Redis(redisUrl(), { enableAutoPipelining: true });
  prefix = randomPrefix();
});

afterEach(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

/** `n` entries XADDed to a new stream and read by the worker group (pending until XACKed). */
async function readEntries(stream: string, n: number): Promise<string[]> {
  await redis.xgroup('CREATE', stream, WORKER_GROUP, '0', 'MKSTREAM');
  for (let i = 0; i < n; i++) await redis.xadd(stream, '*', 'n', String(i));
  const reply = (await redis.xreadgroup(
    'GROUP',
    WORKER_GROUP,
    'c1',
    'COUNT',
    n,
    'STREAMS',
    stream,
    '>',
  )) as [string, [string, string[]][]][];
  return (reply[0]?.[1] ?? []).map(([id]) => id);
}

describe('AckBatch', () => {
  it('writes the acks of one tick in order and XACKs their entries, on two streams', async () => {
    const acks = `${prefix}:acks`;
    const inbox: ReadOrigin = { stream: `${prefix}:inbox`, group: WORKER_GROUP, kind: 'inbox' };
    const pool: ReadOrigin = { stream: `${prefix}:pool`, group: WORKER_GROUP, kind: 'pool' };
    const fromInbox = await readEntries(inbox.stream, 3);
    const fromPool = await readEntries(pool.stream, 2);
    const batch = new AckBatch(redis);
    const writes = [
      batch.add(acks, ['task_id', 'receipt-only']),
      ...fromInbox.map((messageId, i) =>
        batch.add(acks, ['task_id', `inbox-${i}`], { origin: inbox, messageId }),
      ),
      ...fromPool.map((messageId, i) =>
        batch.add(acks, ['task_id', `pool-${i}`], { origin: pool, messageId }),
      ),
    ];
    await Promise.all(writes);
    const written = await redis.xrange(acks, '-', '+');
    expect(written.map(([, fields]) => fields[1])).toEqual([
      'receipt-only',
      'inbox-0',
      'inbox-1',
      'inbox-2',
      'pool-0',
      'pool-1',
    ]);
    expect(await pendingCount(redis, inbox.stream, WORKER_GROUP)).toBe(0);
    expect(await pendingCount(redis, pool.stream, WORKER_GROUP)).toBe(0);
  });

  it('an error reply fails only its own acks; a batch for another stream leaves apart', async () => {
    const good = `${prefix}:acks`;
    // Not a stream: XADD answers WRONGTYPE.
    const bad = `${prefix}:not-a-stream`;
    await redis.set(bad, 'x');
    const batch = new AckBatch(redis);
    const outcomes = await Promise.allSettled([
      batch.add(good, ['task_id', 'a']),
      batch.add(bad, ['task_id', 'b']),
      batch.add(good, ['task_id', 'c']),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const reason: unknown = outcomes[1]?.status === 'rejected' ? outcomes[1].reason : undefined;
    expect(reason).toBeInstanceOf(Error);
    expect((reason as Error).message).toMatch(/^WRONGTYPE/);
    const written = await redis.xrange(good, '-', '+');
    expect(written.map(([, fields]) => fields[1])).toEqual(['a', 'c']);
  });

  it('rejects every ack of a batch whose connection is closed', async () => {
    const closed = new Redis(redisUrl());
    closed.on('error', () => undefined);
    await closed.quit();
    const batch = new AckBatch(closed);
    const outcomes = await Promise.allSettled([
      batch.add(`${prefix}:acks`, ['task_id', 'a']),
      batch.add(`${prefix}:acks`, ['task_id', 'b']),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
  });
});
