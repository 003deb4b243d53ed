/**
 * Two routers' webhook forwarders on one real Redis: a task's items take their sequence numbers
 * in the order they were recorded, whichever router reads them; a forwarder that stops hands its
 * turn to the other, which makes the deliveries of the items recorded after; a router whose
 * lease was taken makes none.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { CallbackPublisher } from '@agent-reach/dispatch';
import type { CallbackMessage } from '@agent-reach/protocol';
import { loadScripts } from '@agent-reach/service-kit';
import { startTcpProxy, testServices, waitFor, type TcpProxy } from '@agent-reach/testkit';
import { lockScript } from '@agent-reach/dispatch';
import { useScratchRedis } from '../testing/scratch-redis.ts';
import { WebhookForwarder } from './webhook-forwarder.ts';
import { WEBHOOK_SCRIPTS } from './webhook-scripts.ts';
import { WEBHOOK_TOPIC } from './webhook-topic.ts';

const scratch = useScratchRedis();
const logger = pino({ level: 'silent' });
const open: { forwarder: WebhookForwarder; closed: boolean; redis: Redis }[] = [];
const proxies: TcpProxy[] = [];

afterEach(async () => {
  await Promise.all(open.filter((f) => !f.closed).map((f) => f.forwarder.close()));
  await Promise.all(open.map((f) => f.redis.quit()));
  open.length = 0;
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
});

/**
 * A router's forwarder with a command connection of its own; `slowMs` delays what that
 * connection sends (a router whose writes lag, as on a busy core).
 */
async function forwarder(slowMs = 0): Promise<(typeof open)[number]> {
  const { keys } = scratch;
  const url = new URL(testServices().redisUrl);
  if (slowMs > 0) {
    const proxy = await startTcpProxy(Number(url.port), { delayMs: slowMs });
    proxies.push(proxy);
    url.port = String(proxy.port);
  }
  const redis = new Redis(url.href);
  loadScripts(redis, [...WEBHOOK_SCRIPTS, lockScript]);
  const conn = new Redis(testServices().redisUrl, { maxRetriesPerRequest: null });
  const made = {
    redis,
    forwarder: new WebhookForwarder({
      conn,
      redis,
      keys,
      callbacks: publisher(),
      logger,
      blockMs: 50,
      leaseMs: 900,
      retentionS: () => 600,
    }),
    closed: false,
  };
  made.forwarder.start();
  open.push(made);
  return made;
}

function publisher(): CallbackPublisher {
  const { redis, keys } = scratch;
  return new CallbackPublisher({
    redis,
    keys,
    settings: { callbackRetentionS: 600, callbackMaxLen: 100_000 },
  });
}

const item = (taskId: string, n: number): CallbackMessage => ({
  task_id: taskId,
  status: 'progress',
  capability: 'cap',
  agent_id: 'a1',
  attempt: 1,
  completed_at: Date.now(),
  progress: String(n),
});

/** Writes `rounds` items of each task, task by task within a round, each its own write. */
async function record(taskIds: readonly string[], rounds: number, from = 0): Promise<void> {
  const topic = publisher();
  for (let r = from; r < from + rounds; r++)
    for (const id of taskIds) {
      await topic.append(WEBHOOK_TOPIC, [item(id, r)]);
      // Spaced, so both forwarders read all along and a task's items come in several reads.
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
}

/** Per task, the progress values of its deliveries in the order of their sequence numbers. */
async function delivered(taskIds: readonly string[]): Promise<Map<string, number[]>> {
  const { redis, keys } = scratch;
  const ids = await redis.zrange(keys.webhookDue(), 0, -1);
  const byTask = new Map<string, { seq: number; progress: number }[]>(taskIds.map((t) => [t, []]));
  for (const id of ids) {
    const body = JSON.parse((await redis.hget(keys.webhook(id), 'body')) ?? '{}') as {
      data: { task_id: string; seq: number; progress: number };
    };
    byTask.get(body.data.task_id)?.push({ seq: body.data.seq, progress: body.data.progress });
  }
  return new Map(
    [...byTask].map(([t, got]) => [
      t,
      got.sort((a, b) => a.seq - b.seq).map((d) => Number(d.progress)),
    ]),
  );
}

async function targets(taskIds: readonly string[]): Promise<void> {
  const { redis, keys } = scratch;
  for (const id of taskIds) await redis.hset(keys.webhookTarget(id), 'url', 'http://127.0.0.1:9/');
}

describe('webhook forwarders of two routers', () => {
  it('number a task’s items in the order they were recorded', async () => {
    const taskIds = Array.from({ length: 5 }, (_, i) => `order-${i}`);
    await targets(taskIds);
    // The router that reads first writes late: without one reader at a time, the other's
    // deliveries of later items would take their numbers first.
    await forwarder(15);
    await forwarder();
    await record(taskIds, 12);
    await waitFor(async () => (await scratch.redis.zcard(scratch.keys.webhookDue())) === 60, {
      timeoutMs: 15_000,
    });
    const got = await delivered(taskIds);
    for (const id of taskIds)
      expect({ id, values: got.get(id) }).toEqual({ id, values: [...Array(12).keys()] });
  });

  it('hand the turn over when the holder stops, and only its holder makes deliveries', async () => {
    const { redis, keys } = scratch;
    const taskIds = ['turn-a', 'turn-b'];
    await targets(taskIds);
    const first = await forwarder();
    await waitFor(async () => (await redis.get(keys.webhookForwarder())) !== null, {
      timeoutMs: 5000,
    });
    const second = await forwarder();
    const before = await redis.zcard(keys.webhookDue());
    await record(taskIds, 2);
    await waitFor(async () => (await redis.zcard(keys.webhookDue())) === before + 4, {
      timeoutMs: 5000,
    });
    const holder = await redis.get(keys.webhookForwarder());
    const [stopping, staying] =
      holder === first.forwarder.consumer ? [first, second] : [second, first];
    expect(holder).toBe(stopping.forwarder.consumer);
    await stopping.forwarder.close();
    stopping.closed = true;
    await record(taskIds, 2, 2);
    await waitFor(async () => (await redis.zcard(keys.webhookDue())) === before + 8, {
      timeoutMs: 5000,
    });
    expect(await redis.get(keys.webhookForwarder())).toBe(staying.forwarder.consumer);
    // Another owner's lease: the router that held it makes no delivery, and the items wait.
    await redis.set(keys.webhookForwarder(), 'router-elsewhere', 'PX', 60_000);
    await record(taskIds, 1, 4);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(await redis.zcard(keys.webhookDue())).toBe(before + 8);
    expect(await redis.xlen(keys.callback(WEBHOOK_TOPIC))).toBe(2);
    // The lease given back: the items are made, in order, each task's numbers following on.
    await redis.del(keys.webhookForwarder());
    await waitFor(async () => (await redis.zcard(keys.webhookDue())) === before + 10, {
      timeoutMs: 5000,
    });
    const got = await delivered(taskIds);
    for (const id of taskIds) expect(got.get(id)).toEqual([0, 1, 2, 3, 4]);
  });
});
