import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { claimSubmission, Delivery, DISPATCH_SCRIPTS, DueWatch } from '@agent-reach/dispatch';
import { watchdogMember } from '@agent-reach/protocol';
import { loadScripts } from '@agent-reach/service-kit';
import { startTcpProxy, testServices, waitFor } from '@agent-reach/testkit';
import { plainSpec } from '../testing/plain-spec.ts';
import { useScratchRedis } from '../testing/scratch-redis.ts';

const scratch = useScratchRedis();

describe('the due set around a send', () => {
  it('drops the watchdog entry it set, but never the entry of a retry that followed a fast failure', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    const watchdogAt = 1_700_000_000_000;
    // Attempt 1 was claimed with a watchdog entry; it failed fast and its retry is due later.
    await redis.hset(keys.task('t-late'), 'status', 'retry_wait', 'attempt', 2);
    await redis.zadd(keys.due(), watchdogAt, watchdogMember('t-late'), watchdogAt + 250, 't-late');
    await delivery.watch.unwatch('t-late');
    expect(await redis.zrange(keys.due(), 0, -1, 'WITHSCORES')).toEqual([
      't-late',
      String(watchdogAt + 250),
    ]);
  });

  it('records a pooled task as sent, with its expiry in the due set instead of its watchdog', async () => {
    const { redis, keys } = scratch;
    const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
    await redis.hset(keys.task('t-pool'), 'status', 'accepted', 'attempt', 1, 'agent_id', '');
    await redis.zadd(keys.due(), 5, watchdogMember('t-pool'));
    await delivery.recordPooled({
      taskId: 't-pool',
      attempt: 1,
      stream: keys.pool('embed'),
      messageId: '7-0',
      sentAt: 7,
      dueAt: 60_007,
      watched: true,
    });
    expect(
      await redis.hmget(keys.task('t-pool'), 'status', 'sent_at', 'message_id', 'stream'),
    ).toEqual(['sent', '7', '7-0', keys.pool('embed')]);
    expect(await redis.zscore(keys.due(), watchdogMember('t-pool'))).toBeNull();
    expect(await redis.zscore(keys.due(), 't-pool')).toBe('60007');
    expect(await redis.exists(keys.timeline('t-pool'))).toBe(0);
  });

  it('sends the watchdog entries of one tick in one ZADD, before the commands that follow them, and drops them in one ZREM', async () => {
    const { redis, keys } = scratch;
    const watch = new DueWatch({ redis, keys });
    // What reaches Redis, in order, for this test's due key (other tests share the server).
    const monitor = await redis.monitor();
    const seenByRedis: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[1] === keys.due()) seenByRedis.push(args[0]?.toLowerCase() ?? '');
    });
    const ids = Array.from({ length: 10 }, (_, i) => `w-${i}`);
    // Each follow-up command sees its own entry already there.
    const seen = await Promise.all(
      ids.map((id, i) =>
        watch.watchThen(id, 1000 + i, () => redis.zscore(keys.due(), watchdogMember(id))),
      ),
    );
    expect(seen).toEqual(ids.map((_, i) => String(1000 + i)));
    await waitFor(() => seenByRedis.length >= 11);
    // NX: an existing entry keeps its score.
    await watch.watchThen('w-0', 5, () => Promise.resolve());
    expect(await redis.zscore(keys.due(), watchdogMember('w-0'))).toBe('1000');
    // Dropped in one ZREM per tick; the tasks' own entries stay.
    await redis.zadd(keys.due(), 7, 'w-1');
    await Promise.all(ids.slice(0, 3).map((id) => watch.unwatch(id)));
    await waitFor(() => seenByRedis.length >= 15);
    monitor.disconnect();
    expect(seenByRedis).toEqual([
      'zadd',
      ...ids.map(() => 'zscore'),
      'zadd',
      'zscore',
      'zadd',
      'zrem',
    ]);
    expect(
      (await redis.zrange(keys.due(), 0, -1)).filter((m) => m.replace('#', '').startsWith('w-')),
    ).toEqual(['w-1', ...ids.slice(3).map((id) => watchdogMember(id))]);
  });

  it('sends a tick’s watchdog entries ahead of its claims on the same connection', async () => {
    const { keys } = scratch;
    const proxy = await startTcpProxy(Number(new URL(testServices().redisUrl).port), {
      record: true,
    });
    // The router's connection: not auto-pipelined, the scripts loaded.
    const redis = new Redis(proxy.port, '127.0.0.1', { enableAutoPipelining: false });
    try {
      loadScripts(redis, Object.values(DISPATCH_SCRIPTS));
      await redis.ping();
      const delivery = new Delivery({ redis, keys, leaseBoundMs: 15_000 });
      const ids = ['one-write-1', 'one-write-2', 'one-write-3'];
      const claims = ids.map((taskId) =>
        claimSubmission(redis, keys, delivery, {
          task: plainSpec(taskId),
          nonce: `n-${taskId}`,
          timeoutMs: 0,
          watchdogAt: 1_000,
        }),
      );
      proxy.takeSent();
      const writes = recordSocketWrites(redis);
      const taken = await Promise.all(claims.map((c) => c.take(undefined, '')));
      expect(taken.every((t) => t.ok)).toBe(true);
      // The entries and the claims they cover left in one write to the socket.
      expect(writes[0]?.toLowerCase()).toMatch(/\r\nzadd\r\n[^]*\r\neval(sha)?\r\n/);
      // What reached Redis, in the order it was sent: a router that dies after sending a claim
      // has sent the entry before it.
      const sent = Buffer.concat(proxy.takeSent()).toString('latin1').toLowerCase();
      // A command's name as RESP carries it (a script's text may name commands too).
      const entriesAt = sent.indexOf('\r\nzadd\r\n');
      expect(entriesAt).toBeGreaterThanOrEqual(0);
      expect(sent.indexOf('\r\nzadd\r\n', entriesAt + 1)).toBe(-1);
      const claimAt = sent.search(/\r\neval(sha)?\r\n/);
      expect(claimAt).toBeGreaterThan(entriesAt);
      for (const id of ids) {
        expect(sent.indexOf(`n-${id}`, claimAt)).toBeGreaterThan(0);
        const entryAt = sent.indexOf(watchdogMember(id), entriesAt);
        expect(entryAt).toBeGreaterThan(entriesAt);
        expect(entryAt).toBeLessThan(claimAt);
      }
      for (const id of ids)
        expect(await redis.zscore(keys.dueOf(id), watchdogMember(id))).toBe('1000');
    } finally {
      redis.disconnect();
      await proxy.close();
    }
  });
});

/** What `redis`'s socket writes from now on, one text per write (corked commands: one `writev`). */
function recordSocketWrites(redis: Redis): string[] {
  type Write = (this: unknown, ...args: unknown[]) => unknown;
  const socket = redis.stream as unknown as { _write: Write; _writev: Write };
  const writes: string[] = [];
  const text = (chunk: unknown) =>
    Buffer.isBuffer(chunk) ? chunk.toString('latin1') : String(chunk);
  socket._write = ((original) =>
    function (this: unknown, ...args: unknown[]) {
      writes.push(text(args[0]));
      return original.apply(this, args);
    })(socket._write);
  socket._writev = ((original) =>
    function (this: unknown, ...args: unknown[]) {
      writes.push((args[0] as { chunk: unknown }[]).map((c) => text(c.chunk)).join(''));
      return original.apply(this, args);
    })(socket._writev);
  return writes;
}
