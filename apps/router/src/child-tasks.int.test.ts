/**
 * Child tasks at the router's edge on a real Redis: a child's deadline is its parent's less
 * REACH_CHILD_MARGIN_MS over three levels (a shorter timeout of the child's own wins), a parent
 * with no more than the margin left gets 409 PARENT_DEADLINE_NEAR, the task view and timeline
 * link parent and children both ways, and the loop guard still dead-letters past max hops. Tasks
 * are queued (`on_no_agent: 'queue'`); an agent awaiting a child's result is the e2e test's
 * (test/e2e/child-tasks.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys, type ReachKeys, type TaskView } from '@agent-reach/protocol';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from './index.ts';

const MARGIN_MS = 5000;
let router: RouterService;
let redis: Redis;
let prefix: string;
let keys: ReachKeys;

const submit = (body: Record<string, unknown>) =>
  router.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    payload: { capability: 'echo', payload: 1, on_no_agent: 'queue', ...body },
  });

const view = async (taskId: string): Promise<TaskView> => {
  const res = await router.app.inject({ url: `/v1/tasks/${taskId}` });
  expect(res.statusCode).toBe(200);
  return res.json<TaskView>();
};

beforeAll(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  router = await createRouterService(
    { redisUrl: testServices().redisUrl, prefix, maxHops: 3, childMarginMs: MARGIN_MS },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
});

afterAll(async () => {
  await router?.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('child tasks', () => {
  it('a child’s deadline is its parent’s less the margin, over three levels', async () => {
    expect((await submit({ task_id: 'root', timeout_s: 60 })).statusCode).toBe(202);
    expect((await submit({ task_id: 'c1', parent_task_id: 'root' })).statusCode).toBe(202);
    // A longer timeout of the child's own is cut to what its parent allows.
    expect(
      (await submit({ task_id: 'c2', parent_task_id: 'c1', timeout_s: 3600 })).statusCode,
    ).toBe(202);
    expect((await submit({ task_id: 'c3', parent_task_id: 'c2' })).statusCode).toBe(202);
    const [root, c1, c2, c3] = await Promise.all(['root', 'c1', 'c2', 'c3'].map(view));
    const at = (v: TaskView | undefined) => v?.deadline_ms ?? 0;
    expect(at(root)).toBeGreaterThan(0);
    // 60 / 55 / 50 / 45 s: each within the few ms its own submission took of the exact figure.
    for (const [child, parent] of [
      [c1, root],
      [c2, c1],
      [c3, c2],
    ] as const) {
      expect(at(child)).toBeGreaterThanOrEqual(at(parent) - MARGIN_MS);
      expect(at(child)).toBeLessThan(at(parent) - MARGIN_MS + 500);
    }
  });

  it('a shorter timeout of the child’s own wins; a parent without a deadline leaves it as is', async () => {
    expect((await submit({ task_id: 'p60', timeout_s: 60 })).statusCode).toBe(202);
    const before = Date.now();
    expect(
      (await submit({ task_id: 'short', parent_task_id: 'p60', timeout_s: 10 })).statusCode,
    ).toBe(202);
    const short = await view('short');
    expect(short.deadline_ms).toBeGreaterThanOrEqual(before + 10_000 - 1000);
    expect(short.deadline_ms).toBeLessThan((await view('p60')).deadline_ms - MARGIN_MS);

    expect((await submit({ task_id: 'open' })).statusCode).toBe(202);
    expect((await submit({ task_id: 'open-child', parent_task_id: 'open' })).statusCode).toBe(202);
    expect((await view('open-child')).deadline_ms).toBe(0);
  });

  it('a parent with the margin or less left: 409 PARENT_DEADLINE_NEAR, and no child is kept', async () => {
    expect((await submit({ task_id: 'hurried', timeout_s: 4 })).statusCode).toBe(202);
    const res = await submit({ task_id: 'too-late', parent_task_id: 'hurried' });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error: 'PARENT_DEADLINE_NEAR', task_id: 'too-late' });
    expect(await redis.exists(keys.task('too-late'))).toBe(0);
    expect(await redis.sismember(keys.children('hurried'), 'too-late')).toBe(0);
    expect((await view('hurried')).children).toBeUndefined();
    // In a batch, the item says so and the others go on.
    const batch = await router.app.inject({
      method: 'POST',
      url: '/v1/tasks/batch',
      payload: {
        tasks: [
          { task_id: 'b-late', capability: 'echo', payload: 1, parent_task_id: 'hurried' },
          { task_id: 'b-fine', capability: 'echo', payload: 1, on_no_agent: 'queue' },
        ],
      },
    });
    expect(batch.json<{ results: { http_status: number; error?: string }[] }>().results).toEqual([
      expect.objectContaining({ http_status: 409, error: 'PARENT_DEADLINE_NEAR' }),
      expect.objectContaining({ http_status: 202 }),
    ]);
  });

  it('a delayed child counts its time from its start: the parent’s deadline less the margin, or 409', async () => {
    expect((await submit({ task_id: 'p-later', timeout_s: 60 })).statusCode).toBe(202);
    const held = await submit({
      task_id: 'later',
      parent_task_id: 'p-later',
      delay_ms: 10_000,
      on_no_agent: 'reject',
    });
    expect(held.statusCode).toBe(202);
    expect(held.json()).toMatchObject({ status: 'delayed' });
    expect((await view('later')).deadline_ms).toBe((await view('p-later')).deadline_ms - MARGIN_MS);
    // Starting 56 s from now, it would have less than the margin before its parent's deadline.
    const late = await submit({
      task_id: 'too-later',
      parent_task_id: 'p-later',
      delay_ms: 56_000,
      on_no_agent: 'reject',
    });
    expect(late.statusCode).toBe(409);
    expect(late.json()).toMatchObject({ error: 'PARENT_DEADLINE_NEAR' });
    expect(await redis.exists(keys.task('too-later'))).toBe(0);
  });

  it('the view and the timeline link parent and children both ways', async () => {
    expect((await submit({ task_id: 'fam' })).statusCode).toBe(202);
    for (const id of ['fam.b', 'fam.a'])
      expect((await submit({ task_id: id, parent_task_id: 'fam' })).statusCode).toBe(202);
    // Refused before it was created: recorded by the parent, never listed.
    expect(
      (
        await submit({
          task_id: 'fam.x',
          capability: 'nobody',
          parent_task_id: 'fam',
          on_no_agent: 'reject',
        })
      ).statusCode,
    ).toBe(503);
    expect(await redis.sismember(keys.children('fam'), 'fam.x')).toBe(1);

    const parent = await view('fam');
    expect(parent.children).toEqual(['fam.a', 'fam.b']);
    expect(parent.parent_task_id).toBeUndefined();
    const child = await view('fam.a');
    expect(child).toMatchObject({ parent_task_id: 'fam', hops: 1 });
    expect(child.children).toBeUndefined();

    const timeline = (id: string) =>
      router.app.inject({ url: `/v1/tasks/${id}/timeline` }).then((r) => r.json<unknown>());
    expect(await timeline('fam')).toMatchObject({ task_id: 'fam', children: ['fam.a', 'fam.b'] });
    expect(await timeline('fam.b')).toMatchObject({ task_id: 'fam.b', parent_task_id: 'fam' });
  });

  it('the loop guard still holds: past max hops a child is dead on arrival (loop)', async () => {
    expect((await submit({ task_id: 'h0', timeout_s: 600 })).statusCode).toBe(202);
    for (const [id, parent] of [
      ['h1', 'h0'],
      ['h2', 'h1'],
      ['h3', 'h2'],
    ])
      expect((await submit({ task_id: id, parent_task_id: parent })).json()).toMatchObject({
        status: 'sent',
      });
    const dead = await submit({ task_id: 'h4', parent_task_id: 'h3' });
    expect(dead.statusCode).toBe(202);
    expect(dead.json()).toMatchObject({ task_id: 'h4', status: 'dead' });
    expect(await view('h4')).toMatchObject({ status: 'dead', dead_reason: 'loop', hops: 4 });
    expect((await view('h3')).children).toEqual(['h4']);
  });
});
