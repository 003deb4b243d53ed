/**
 * GET /v1/tasks/:task_id on a router in process with a real Redis: the live view leaves the
 * caller's payload out unless asked (`?include=payload`), a cancelled task keeps none, and an
 * unknown `include` is a 400. (A completed task's payload is emptied by its final ack.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { TaskView } from '@agent-reach/protocol';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../../index.ts';

let router: RouterService;
let redis: Redis;
let prefix: string;

const payload = { doc: 'report.pdf', pages: [1, 2, 3] };

const view = (url: string) => router.app.inject({ url });

beforeAll(async () => {
  prefix = randomPrefix();
  router = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
  for (const task_id of ['p1', 'p2']) {
    const res = await router.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      payload: { task_id, capability: 'echo', payload, on_no_agent: 'queue' },
    });
    expect(res.statusCode, res.body).toBe(202);
  }
});

afterAll(async () => {
  await router?.close();
  const left = await redis.keys(`${prefix}*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('the live task view', () => {
  it('carries the payload only when asked', async () => {
    const plain = await view('/v1/tasks/p1');
    expect(plain.statusCode).toBe(200);
    expect(plain.json<TaskView>().payload).toBeUndefined();
    const full = await view('/v1/tasks/p1?include=payload');
    expect(full.statusCode).toBe(200);
    expect(full.json<TaskView>()).toMatchObject({ task_id: 'p1', payload });
  });

  it('keeps no payload once cancelled', async () => {
    const cancel = await router.app.inject({ method: 'POST', url: '/v1/tasks/p2/cancel' });
    expect(cancel.statusCode, cancel.body).toBe(202);
    const res = await view('/v1/tasks/p2?include=payload');
    expect(res.json<TaskView>()).toMatchObject({ status: 'cancelled' });
    expect(res.json<TaskView>().payload).toBeUndefined();
  });

  it('refuses an include it does not know', async () => {
    const res = await view('/v1/tasks/p1?include=secrets');
    expect(res.statusCode).toBe(400);
    expect(res.json<{ error: string }>().error).toBe('INVALID_QUERY');
  });
});
