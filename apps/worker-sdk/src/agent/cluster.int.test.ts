/**
 * The agent's Redis side on a real Redis Cluster (3 masters started here): the read loop's lanes
 * (one blocking read per slot, none starving, never more than the free slots, stopped promptly
 * by CLIENT UNBLOCK on each lane's master), scripts after SCRIPT FLUSH on every master (NOSCRIPT
 * answered by EVAL), the acks of a tick written in one go while the acks stream and the streams
 * read lie on different masters, and a start-up against addresses where nothing answers.
 */
import { createServer } from 'node:net';
import { WORKER_GROUP } from '@agent-reach/protocol';
import { defineScript, loadScripts } from '@agent-reach/service-kit';
import {
  clusterNodeOf,
  connectRedis,
  createRedis,
  keySlot,
  slotPipeline,
  type RedisClient,
} from '@agent-reach/service-kit/redis';
import { randomPrefix, startTestCluster, waitFor, type TestCluster } from '@agent-reach/testkit';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AckBatch } from './ack-batch.ts';
import { Consumer, type ReadSource } from './consumer.ts';
import type { Delivery, TaskRunner } from './runner.ts';
import { Slots } from './slots.ts';
import { testLogger } from '../testing/support.ts';

let cluster: TestCluster;
let seeds: { host: string; port: number }[];
const opened: RedisClient[] = [];

function open(): Cluster {
  const c = createRedis({ url: cluster.url, clusterNodes: seeds }, { maxRetriesPerRequest: null });
  opened.push(c);
  return c as Cluster;
}

beforeAll(async () => {
  // A cluster of its own, whatever REDIS_CLUSTER_NODES says: the test flushes its scripts.
  cluster = await startTestCluster({});
  seeds = cluster.seeds.split(',').map((s) => {
    const [host = '', port = ''] = s.split(':');
    return { host, port: Number(port) };
  });
}, 60_000);

afterAll(async () => {
  for (const c of opened) c.disconnect();
  await cluster?.stop();
});

/** `count` keys `<base><n>` whose hash tags land on `count` different masters. */
async function onDifferentMasters(c: Cluster, make: (n: number) => string, count: number) {
  await c.ping();
  const out: string[] = [];
  const masters = new Set<string>();
  for (let n = 0; out.length < count && n < 1000; n++) {
    const key = make(n);
    const master = c.slots[keySlot(key)]?.[0] ?? '';
    if (masters.has(master)) continue;
    masters.add(master);
    out.push(key);
  }
  return out;
}

describe('read lanes on a Redis Cluster', () => {
  it('reads the inbox and pools on three masters, each lane blocking on its own, none starving, never past the free slots', async () => {
    const redis = open();
    const prefix = randomPrefix();
    const [inbox = '', poolA = '', poolB = ''] = await onDifferentMasters(
      redis,
      (n) => `${prefix}:{x${n}}:stream`,
      3,
    );
    for (const s of [inbox, poolA, poolB])
      await redis.xgroup('CREATE', s, WORKER_GROUP, '0', 'MKSTREAM');
    // Two slots, three lanes: the lanes must take turns.
    const slots = new Slots(2);
    let running = 0;
    let most = 0;
    const done = new Map<string, number>();
    const runner = {
      accept: (batch: readonly Delivery[]) =>
        batch.map(async (d) => {
          running++;
          most = Math.max(most, running);
          await new Promise((r) => setTimeout(r, 5));
          await redis.xack(d.origin.stream, WORKER_GROUP, d.entry.id);
          done.set(d.origin.stream, (done.get(d.origin.stream) ?? 0) + 1);
          running--;
        }),
    } as unknown as TaskRunner;
    const source: ReadSource = {
      group: WORKER_GROUP,
      consumer: 'c1',
      inbox,
      pools: [poolA, poolB],
    };
    const blocking = open();
    const consumer = new Consumer({
      blocking,
      control: redis,
      source: () => source,
      runner,
      slots,
      blockMs: 1000,
      retry: { baseMs: 50, capMs: 200, jitter: 0 },
      logger: testLogger(),
      onGroupMissing: () => undefined,
    });
    consumer.start();
    // The pools are flooded first; entries on the inbox still get through.
    for (let i = 0; i < 40; i++) {
      await redis.xadd(poolA, '*', 'n', String(i));
      await redis.xadd(poolB, '*', 'n', String(i));
    }
    for (let i = 0; i < 10; i++) await redis.xadd(inbox, '*', 'n', String(i));
    await waitFor(
      () =>
        (done.get(inbox) ?? 0) === 10 &&
        (done.get(poolA) ?? 0) === 40 &&
        (done.get(poolB) ?? 0) === 40,
      { timeoutMs: 20_000 },
    );
    expect(most).toBeLessThanOrEqual(2);
    // Each lane read on its own connection (the agent's, and two of their own).
    expect(consumer.connections()).toHaveLength(2);
    // Stopping interrupts each lane's BLOCK on its master: well under the 1 s BLOCK.
    const t0 = performance.now();
    await consumer.stop();
    expect(performance.now() - t0).toBeLessThan(900);
  }, 40_000);
});

describe('acks on a Redis Cluster', () => {
  it('XADDs the acks of a tick and XACKs their entries, the acks stream on another master', async () => {
    const redis = open();
    const prefix = randomPrefix();
    const [acks = '', inbox = ''] = await onDifferentMasters(redis, (n) => `${prefix}:{y${n}}`, 2);
    await redis.xgroup('CREATE', inbox, WORKER_GROUP, '0', 'MKSTREAM');
    for (let i = 0; i < 3; i++) await redis.xadd(inbox, '*', 'n', String(i));
    const read = (await redis.xreadgroup('GROUP', WORKER_GROUP, 'c1', 'STREAMS', inbox, '>')) as [
      string,
      [string, string[]][],
    ][];
    const ids = (read[0]?.[1] ?? []).map(([id]) => id);
    expect(ids).toHaveLength(3);
    const batch = new AckBatch(redis);
    const origin = { stream: inbox, group: WORKER_GROUP, kind: 'inbox' as const };
    await Promise.all(
      ids.map((messageId, i) => batch.add(acks, ['task_id', `t${i}`], { origin, messageId })),
    );
    const written = await redis.xrange(acks, '-', '+');
    expect(written.map(([, fields]) => fields[1])).toEqual(['t0', 't1', 't2']);
    const pending = (await redis.xpending(inbox, WORKER_GROUP)) as [number, ...unknown[]];
    expect(pending[0]).toBe(0);
  });
});

/** A test script that increments a counter (testing/bump-1.lua). */
const bumpScript = defineScript({
  lua: new URL('../testing/bump-1.lua', import.meta.url),
  command: 'reachTestBump',
  keys: ['counter'],
  args: [],
  decode: (raw) => Number(raw),
});
/** The same script, queued on pipelines (defined on the connection with defineCommand). */
const bumpQueued = defineScript({
  lua: new URL('../testing/bump-1.lua', import.meta.url),
  command: 'reachTestBumpQueued',
  pipelined: true,
  keys: ['counter'],
  args: [],
  decode: (raw) => Number(raw),
});

describe('scripts on a Redis Cluster', () => {
  it('run on every master, and again after SCRIPT FLUSH (NOSCRIPT answered by EVAL)', async () => {
    const redis = open();
    loadScripts(redis, [bumpScript, bumpQueued]);
    const bump = (key: string) => bumpScript.run(redis, { keys: { counter: key }, args: {} });
    const prefix = randomPrefix();
    const keys = await onDifferentMasters(redis, (n) => `${prefix}:{k${n}}`, 3);
    for (const key of keys) expect(await bump(key)).toBe(1);
    await Promise.all(redis.nodes('master').map((node) => node.script('FLUSH')));
    for (const key of keys) expect(await bump(key)).toBe(2);
    // Pipelined too (the send path's scripts run in pipelines).
    const node = clusterNodeOf(redis, keys[0] ?? '');
    await node?.script('FLUSH');
    const pipeline = redis.pipeline();
    bumpQueued.queue(pipeline, { keys: { counter: keys[0] ?? '' }, args: {} });
    const replies = await pipeline.exec();
    expect(replies?.[0]).toEqual([null, 3]);
  });
});

describe('pipelines on a Redis Cluster', () => {
  it('spread over three masters answer in the order the commands were added', async () => {
    const redis = open();
    const prefix = randomPrefix();
    const keys = await onDifferentMasters(redis, (n) => `${prefix}:{p${n}}`, 3);
    // ioredis refuses one pipeline whose keys lie on different masters.
    const one = redis.pipeline();
    for (const key of keys) one.set(key, key);
    await expect(one.exec()).rejects.toThrow(/same slots allocation group/);
    const pipeline = slotPipeline(redis);
    for (const key of keys) pipeline.add(key, (p) => p.set(key, key).get(key));
    pipeline.add(keys[0] ?? '', (p) => p.time());
    const replies = await pipeline.exec();
    expect(replies.slice(0, 6)).toEqual(
      keys.flatMap((k) => [
        [null, 'OK'],
        [null, k],
      ]),
    );
    expect(replies).toHaveLength(7);
  });
});

describe('a start-up where nothing answers', () => {
  async function deadPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    await new Promise((resolve) => server.close(resolve));
    return typeof address === 'object' && address ? address.port : 1;
  }

  it('fails within the deadline naming REDIS_CLUSTER_NODES or REDIS_URL', async () => {
    const port = await deadPort();
    const settings = { url: 'redis://127.0.0.1', clusterNodes: [{ host: '127.0.0.1', port }] };
    const c = createRedis(settings, { lazyConnect: true });
    const t0 = performance.now();
    await expect(connectRedis(c, settings, 2000)).rejects.toThrow(
      `Redis at REDIS_CLUSTER_NODES=127.0.0.1:${port} did not answer within 2 s`,
    );
    const url = `redis://127.0.0.1:${port}`;
    const s = createRedis({ url }, { lazyConnect: true });
    await expect(connectRedis(s, { url }, 2000)).rejects.toThrow(
      `Redis at REDIS_URL=${url} did not answer within 2 s`,
    );
    expect(performance.now() - t0).toBeLessThan(6000);
  });

  it('waits for a cluster that is there', async () => {
    const settings = { url: cluster.url, clusterNodes: seeds };
    const c = createRedis(settings, { lazyConnect: true });
    opened.push(c);
    await connectRedis(c, settings, 10_000);
    expect(c.status).toBe('ready');
  });
});
