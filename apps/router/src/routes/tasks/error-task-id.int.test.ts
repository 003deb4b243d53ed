/**
 * Every refused submission names its task_id: the caller's, or the one the router made before
 * anything could fail. A 503 may follow a write that reached Redis, so the caller retries with
 * that task_id (docs/errors.md). The store outage is a Redis of this file's own, frozen with
 * SIGSTOP (the router's command timeout turns it into 503 STORE_UNAVAILABLE) and resumed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import type { SubmitBatchReply } from '@agent-reach/protocol';
import { randomPrefix, startOwnRedis, type OwnRedis } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../../index.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let own: OwnRedis;
let router: RouterService;

beforeAll(async () => {
  own = await startOwnRedis();
  router = await createRouterService(
    { redisUrl: own.url, prefix: randomPrefix() },
    { logger: pino({ level: 'silent' }) },
  );
});

afterAll(async () => {
  await router?.close();
  await own?.stop();
});

const submit = (body: Record<string, unknown>, query = '') =>
  router.app.inject({ method: 'POST', url: `/v1/tasks${query}`, payload: body });

/** Runs `fn` while Redis is frozen (SIGSTOP), and resumes it whatever happens. */
async function whileFrozen<T>(fn: () => Promise<T>): Promise<T> {
  own.kill('SIGSTOP');
  try {
    return await fn();
  } finally {
    own.kill('SIGCONT');
  }
}

describe('a refused submission names its task_id', () => {
  it('503 NO_AGENT: the task_id the router made, or the caller’s', async () => {
    const made = await submit({ capability: 'nobody', payload: 1 });
    expect(made.statusCode).toBe(503);
    expect(made.json()).toMatchObject({ error: 'NO_AGENT', task_id: expect.stringMatching(UUID) });
    const given = await submit({ task_id: 'caller-1', capability: 'nobody', payload: 1 });
    expect(given.json()).toMatchObject({ error: 'NO_AGENT', task_id: 'caller-1' });
  });

  it('503 STORE_UNAVAILABLE while Redis does not answer, with and without wait_ms, and per batch item', async () => {
    const [plain, waited, batch] = await whileFrozen(() =>
      Promise.all([
        submit({ capability: 'echo', payload: 1 }),
        submit({ task_id: 'caller-2', capability: 'echo', payload: 2 }, '?wait_ms=2000'),
        router.app.inject({
          method: 'POST',
          url: '/v1/tasks/batch',
          payload: {
            tasks: [
              { capability: 'echo', payload: 3 },
              { task_id: 'caller-3', capability: 'echo', payload: 4 },
            ],
          },
        }),
      ]),
    );
    expect(plain.statusCode).toBe(503);
    expect(plain.headers['retry-after']).toBe('1');
    expect(plain.json()).toMatchObject({
      error: 'STORE_UNAVAILABLE',
      task_id: expect.stringMatching(UUID),
    });
    expect(waited.statusCode).toBe(503);
    expect(waited.json()).toMatchObject({ error: 'STORE_UNAVAILABLE', task_id: 'caller-2' });
    expect(batch.statusCode).toBe(200);
    expect(batch.json<SubmitBatchReply>().results).toEqual([
      expect.objectContaining({
        http_status: 503,
        error: 'STORE_UNAVAILABLE',
        task_id: expect.stringMatching(UUID),
      }),
      expect.objectContaining({
        http_status: 503,
        error: 'STORE_UNAVAILABLE',
        task_id: 'caller-3',
      }),
    ]);
  });

  it('a client mistake found by the handler names it too; a schema error does not', async () => {
    const query = await submit(
      { capability: 'echo', payload: 1, callback_topic: 't' },
      '?wait_ms=10',
    );
    expect(query.statusCode).toBe(400);
    expect(query.json()).toMatchObject({
      error: 'INVALID_QUERY',
      task_id: expect.stringMatching(UUID),
    });
    const schema = await submit({ capability: 'has space', payload: 1 });
    expect(schema.statusCode).toBe(400);
    expect(schema.json()).not.toHaveProperty('task_id');
  });
});
