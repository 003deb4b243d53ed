/**
 * A router's webhook sender on one real Redis, sending to a real HTTP receiver: asleep, it looks
 * at the due set again when the earliest delivery falls due, and no sooner than that unless
 * nudged; a delivery no nudge announced is still tried within the longest wait; a nudge that
 * comes while a look is under way is not lost.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { WebhookField } from '@agent-reach/protocol';
import { loadScripts } from '@agent-reach/service-kit';
import { startTcpProxy, testServices, waitFor, type TcpProxy } from '@agent-reach/testkit';
import { useScratchRedis } from '../testing/scratch-redis.ts';
import { WEBHOOK_SCRIPTS } from './webhook-scripts.ts';
import { WebhookSecrets } from './webhook-secrets.ts';
import { WebhookSender } from './webhook-sender.ts';

const scratch = useScratchRedis();
const logger = pino({ level: 'silent' });
const TENANT = 'acme';

/** When each delivery reached the receiver (epoch ms), by `webhook-id`. */
const received = new Map<string, number>();
let receiver: Server;
let url = '';
const open: { sender: WebhookSender; redis: Redis }[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const id = req.headers['webhook-id'];
    if (typeof id === 'string' && !received.has(id)) received.set(id, Date.now());
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
  loadScripts(scratch.redis, WEBHOOK_SCRIPTS);
  await new WebhookSecrets({ redis: scratch.redis, keys: scratch.keys, graceMs: () => 0 }).rotate(
    TENANT,
  );
});
afterEach(async () => {
  await Promise.all(open.map((o) => o.sender.close()));
  await Promise.all(open.map((o) => o.redis.quit()));
  open.length = 0;
});
afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/** A sender on a connection of its own, through a proxy (recording, or slow) when asked. */
async function sender(opts: {
  maxIdleMs: number;
  proxy?: { record?: boolean; delayMs?: number };
}): Promise<{ sender: WebhookSender; proxy: TcpProxy | undefined }> {
  const target = new URL(testServices().redisUrl);
  let proxy: TcpProxy | undefined;
  if (opts.proxy) {
    proxy = await startTcpProxy(Number(target.port), opts.proxy);
    proxies.push(proxy);
    target.port = String(proxy.port);
  }
  const redis = new Redis(target.href);
  loadScripts(redis, WEBHOOK_SCRIPTS);
  const s = new WebhookSender({
    redis,
    keys: scratch.keys,
    secrets: new WebhookSecrets({ redis, keys: scratch.keys, graceMs: () => 0 }),
    allowed: { hosts: [], loopback: true },
    settings: {
      webhookRetrySchedule: [1000],
      webhookTimeoutMs: 2000,
      webhookFailureRetentionS: 60,
    },
    logger,
    maxIdleMs: opts.maxIdleMs,
  });
  open.push({ sender: s, redis });
  return { sender: s, proxy };
}

/** A pending delivery due at `dueAt` (epoch ms), as a forwarder makes it, announced to no one. */
async function delivery(id: string, dueAt: number, redis: Redis = scratch.redis): Promise<void> {
  const { keys } = scratch;
  // Sent together: both reach Redis at once.
  const made = redis.hset(keys.webhook(id), {
    [WebhookField.url]: url,
    [WebhookField.tenant]: TENANT,
    [WebhookField.taskId]: `task-${id}`,
    [WebhookField.type]: 'task.completed',
    [WebhookField.body]: JSON.stringify({ id }),
    [WebhookField.status]: 'pending',
    [WebhookField.tries]: '0',
    [WebhookField.createdAt]: String(Date.now()),
  });
  await Promise.all([made, redis.zadd(keys.webhookDue(), dueAt, id)]);
}

/** How many looks at the due set (webhook-take-1.lua calls) a recording proxy saw. */
function looks(proxy: TcpProxy): number {
  const sent = Buffer.concat(proxy.takeSent()).toString('latin1');
  return sent.split(scratch.keys.webhookDue()).length - 1;
}

describe('webhook sender: looks when something falls due, not with the clock', () => {
  it('with nothing due it looks once per longest wait, not five times a second', async () => {
    const { sender: s, proxy } = await sender({ maxIdleMs: 1000, proxy: { record: true } });
    s.start();
    await new Promise((r) => setTimeout(r, 3200));
    // Before this change the loop looked every 200 ms: 16 looks in 3.2 s.
    const n = looks(proxy as TcpProxy);
    expect(n).toBeGreaterThanOrEqual(3);
    expect(n).toBeLessThanOrEqual(5);
  });

  it('wakes when the earliest delivery falls due, though the longest wait is far off', async () => {
    const dueAt = Date.now() + 800;
    await delivery('due-soon', dueAt);
    const { sender: s } = await sender({ maxIdleMs: 10_000 });
    s.start();
    await waitFor(() => received.has('due-soon'), { timeoutMs: 3000 });
    const at = received.get('due-soon') as number;
    expect(at).toBeGreaterThanOrEqual(dueAt - 5);
    expect(at - dueAt).toBeLessThan(600);
  });

  it('tries a delivery no nudge announced within the longest wait', async () => {
    const { sender: s } = await sender({ maxIdleMs: 700 });
    s.start();
    await new Promise((r) => setTimeout(r, 300));
    const madeAt = Date.now();
    await delivery('unannounced', madeAt);
    await waitFor(() => received.has('unannounced'), { timeoutMs: 3000 });
    expect((received.get('unannounced') as number) - madeAt).toBeLessThan(1200);
  });

  it('keeps a nudge that comes while a look is under way', async () => {
    // What the sender and the writer send takes 150 ms to reach Redis.
    const { sender: s, proxy } = await sender({ maxIdleMs: 20_000, proxy: { delayMs: 150 } });
    const writer = new Redis(`redis://127.0.0.1:${(proxy as TcpProxy).port}`);
    try {
      s.start();
      await new Promise((r) => setTimeout(r, 700));
      for (let i = 0; i < 3; i++) {
        const id = `mid-look-${i}`;
        // Woken, the sender sends a look at once; it reaches Redis before the delivery below.
        s.nudge();
        await new Promise((r) => setTimeout(r, 30));
        const made = delivery(id, Date.now(), writer);
        // Announced while that look is under way: it finds nothing, and must look again.
        s.nudge();
        await made;
        await waitFor(() => received.has(id), { timeoutMs: 3000 });
      }
    } finally {
      await writer.quit();
    }
  });
});
