import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { encodeCallback, reachKeys } from '@agent-reach/protocol';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from './index.ts';

let router: RouterService;
let redis: Redis;
let prefix: string;

beforeAll(async () => {
  prefix = randomPrefix();
  router = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
});

afterAll(async () => {
  await router.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const publish = (topic: string, taskId: string) =>
  redis.xadd(
    reachKeys(prefix).callback(topic),
    '*',
    ...encodeCallback({
      task_id: taskId,
      status: 'completed',
      capability: 'echo',
      agent_id: 'a',
      attempt: 1,
      result: '{"ok":1}',
      completed_at: 1,
    }),
  );

describe('GET /v1/callbacks/:topic', () => {
  it('answers at once with what is there, and a cursor to read on', async () => {
    await publish('t1', 'task-1');
    await publish('t1', 'task-2');
    const res = await router.app.inject({ url: '/v1/callbacks/t1' });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ items: { task_id: string; result: unknown }[]; cursor: string }>();
    expect(body.items.map((i) => i.task_id)).toEqual(['task-1', 'task-2']);
    expect(body.items[0]?.result).toEqual({ ok: 1 });
    const next = await router.app.inject({ url: `/v1/callbacks/t1?after=${body.cursor}` });
    expect(next.json().items).toEqual([]);
    expect(next.json().cursor).toBe(body.cursor);
  });

  it('long-polls until an item arrives, then answers with it', async () => {
    const started = Date.now();
    const pending = router.app.inject({ url: '/v1/callbacks/t2?wait_ms=10000' });
    // The request is waiting: publish only once it has blocked (anchored to an empty read).
    const empty = await router.app.inject({ url: '/v1/callbacks/t2' });
    expect(empty.json().items).toEqual([]);
    await publish('t2', 'late-1');
    const res = await pending;
    expect(res.json<{ items: { task_id: string }[] }>().items.map((i) => i.task_id)).toEqual([
      'late-1',
    ]);
    expect(Date.now() - started).toBeLessThan(9000);
  });

  it('ends an empty long-poll after wait_ms with the same cursor', async () => {
    const res = await router.app.inject({ url: '/v1/callbacks/t3?wait_ms=200&after=0' });
    expect(res.json()).toEqual({ items: [], cursor: '0' });
  });

  it('respects limit', async () => {
    for (let i = 0; i < 5; i++) await publish('t4', `task-${i}`);
    const res = await router.app.inject({ url: '/v1/callbacks/t4?limit=2' });
    expect(res.json().items).toHaveLength(2);
  });

  it('long-polls a caller back at the end of its topic with one XREAD, and reads first otherwise', async () => {
    const key = reachKeys(prefix).callback('t5');
    const monitor = await redis.monitor();
    const reads: string[] = [];
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'xread' && args.includes(key))
        reads.push(args.some((a) => a.toUpperCase() === 'BLOCK') ? 'block' : 'read');
    });
    for (let i = 0; i < 3; i++) await publish('t5', `task-${i}`);
    const page = async (after: string, limit: number) => {
      const res = await router.app.inject({
        url: `/v1/callbacks/t5?after=${after}&limit=${limit}&wait_ms=300`,
      });
      return res.json<{ items: { task_id: string }[]; cursor: string }>();
    };
    // A full page may not be the end: the next read does not block first.
    const first = await page('0', 2);
    expect(first.items.map((i) => i.task_id)).toEqual(['task-0', 'task-1']);
    const second = await page(first.cursor, 2);
    expect(second.items.map((i) => i.task_id)).toEqual(['task-2']);
    // At the end now: the next long-poll blocks at once, and answers what arrives meanwhile.
    await publish('t5', 'task-3');
    const third = await page(second.cursor, 2);
    expect(third.items.map((i) => i.task_id)).toEqual(['task-3']);
    const empty = await page(third.cursor, 2);
    expect(empty).toEqual({ items: [], cursor: third.cursor });
    // A cursor this router did not hand out reads first.
    const again = await page(first.cursor, 2);
    expect(again.items.map((i) => i.task_id)).toEqual(['task-2', 'task-3']);
    await new Promise((r) => setTimeout(r, 100));
    monitor.disconnect();
    expect(reads).toEqual(['read', 'read', 'block', 'block', 'read']);
  });
});
