import type { DeadReason } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReachAgent } from '../agent/agent.ts';
import {
  NonRetryableError,
  isReachClosedError,
  isReachConnectionError,
  isReachHttpError,
  isResultTimeoutError,
  isTaskFailedError,
  type TaskFailedError,
} from '../errors.ts';
import { startHarness, type Harness } from '../testing/harness.ts';
import { startRouterDouble, type RouterDouble } from '../testing/router-double.ts';
import { redisUrl, testLogger } from '../testing/support.ts';
import { ReachClient } from './client.ts';

let h: Harness;
let router: RouterDouble;
let agent: ReachAgent;
let client: ReachClient;

beforeEach(async () => {
  h = await startHarness();
  agent = h.agent({
    maxConcurrency: 4,
    handler: (task) => {
      if (task.payload === 'fail')
        return Promise.reject(new NonRetryableError('refused on purpose'));
      return Promise.resolve(task.payload);
    },
  });
  const reg = await agent.start().ready();
  router = await startRouterDouble({
    redisUrl: redisUrl(),
    keys: h.registry.keys,
    agentId: reg.agent_id,
    capability: 'echo',
  });
  client = new ReachClient({ routerUrl: router.url, pollWaitMs: 2000, logger: testLogger() });
});

afterEach(async () => {
  await client.close();
  await router.close();
  await h.cleanup();
});

describe('ReachClient', () => {
  it('run() submits, awaits the callback topic and returns the result', async () => {
    await expect(client.run('echo', { hello: 'world' })).resolves.toEqual({ hello: 'world' });
    const [submitted] = router.submits;
    expect(submitted).toMatchObject({
      capability: 'echo',
      callback_topic: client.callbackTopic,
      payload: { hello: 'world' },
    });
    const view = await client.getTask(submitted?.task_id ?? '');
    expect(view).toMatchObject({
      task_id: submitted?.task_id,
      status: 'completed',
      capability: 'echo',
    });
  });

  it('serves many waiters from one shared poll loop', async () => {
    const payloads = Array.from({ length: 20 }, (_, i) => ({ i }));
    const results = await Promise.all(payloads.map((p) => client.run('echo', p)));
    expect(results).toEqual(payloads);
    expect(router.polls.maxOpen).toBe(1);
  });

  it('keeps results that arrived before anyone waited for them', async () => {
    const a = await client.submit({ capability: 'echo', payload: 'a' });
    const b = await client.submit({ capability: 'echo', payload: 'b' });
    await waitFor(() => router.published(client.callbackTopic).length === 2, {
      message: 'both published',
    });
    expect(await client.result(a.task_id)).toMatchObject({
      task_id: a.task_id,
      status: 'completed',
      result: 'a',
    });
    const polls = router.polls.total;
    expect(await client.result(b.task_id)).toMatchObject({
      task_id: b.task_id,
      status: 'completed',
      result: 'b',
    });
    expect(router.polls.total).toBe(polls); // b came in the same page as a
  });

  it('run() retries a 503 NO_AGENT with the same task_id', async () => {
    router.refuseSubmits(3);
    await expect(client.run('echo', 'eventually')).resolves.toBe('eventually');
    expect(router.submits).toHaveLength(4);
    expect(new Set(router.submits.map((s) => s.task_id)).size).toBe(1);
  });

  it('run() retries a 429 AT_CAPACITY with the same task_id', async () => {
    router.refuseSubmits(2, 'AT_CAPACITY');
    const before = router.submits.length;
    await expect(client.run('echo', 'after backpressure')).resolves.toBe('after backpressure');
    const mine = router.submits.slice(before);
    expect(mine).toHaveLength(3);
    expect(new Set(mine.map((s) => s.task_id)).size).toBe(1);
  });

  it('submit with an existing task_id returns the same task', async () => {
    const first = await client.submit({ task_id: 'same-id', capability: 'echo', payload: 1 });
    const again = await client.submit({ task_id: 'same-id', capability: 'echo', payload: 1 });
    expect(again).toEqual(first);
  });

  it('run() throws TaskFailedError for failed and dead tasks', async () => {
    const failed: unknown = await client.run('echo', 'fail').catch((e: unknown) => e);
    expect(
      isTaskFailedError(failed) &&
        failed.status === 'failed' &&
        failed.error === 'refused on purpose',
    ).toBe(true);

    const pending = client.result('ghost', { timeoutMs: 10_000 });
    router.publish(client.callbackTopic, {
      task_id: 'ghost',
      status: 'dead',
      capability: 'echo',
      agent_id: '',
      attempt: 4,
      error: 'max_attempts',
      completed_at: Date.now(),
    });
    await expect(pending).resolves.toMatchObject({ status: 'dead', error: 'max_attempts' });
  });

  it.each<DeadReason>(['max_attempts', 'deadline', 'loop', 'not_retryable', 'no_agent'])(
    'run() throws TaskFailedError with status dead and error = the dead-letter reason (%s)',
    async (reason) => {
      router.deadLetterNext(reason);
      const err: unknown = await client
        .run('echo', 'doomed', { taskId: `dead-${reason}` })
        .catch((e: unknown) => e);
      expect(isTaskFailedError(err)).toBe(true);
      expect(err).toMatchObject({
        name: 'TaskFailedError',
        taskId: `dead-${reason}`,
        status: 'dead',
        error: reason,
      });
      expect((err as TaskFailedError).item).toMatchObject({
        task_id: `dead-${reason}`,
        status: 'dead',
        error: reason,
      });
    },
  );

  it('turns error replies into ReachHttpError with the stable code', async () => {
    const noAgent: unknown = await client
      .submit({ capability: 'nobody', payload: 1 })
      .catch((e: unknown) => e);
    expect(isReachHttpError(noAgent) && noAgent.code === 'NO_AGENT' && noAgent.status === 503).toBe(
      true,
    );
    const bad: unknown = await client
      .submit({ capability: 'has space', payload: 1 })
      .catch((e: unknown) => e);
    expect(isReachHttpError(bad) && bad.code === 'INVALID_BODY' && bad.status === 400).toBe(true);
    const missing: unknown = await client.getTask('nope').catch((e: unknown) => e);
    expect(isReachHttpError(missing) && missing.code === 'TASK_NOT_FOUND').toBe(true);
  });

  it('times out, and close() rejects waiters, is idempotent, and refuses new submits', async () => {
    const timedOut: unknown = await client
      .result('never', { timeoutMs: 100 })
      .catch((e: unknown) => e);
    expect(isResultTimeoutError(timedOut) && timedOut.taskId === 'never').toBe(true);

    const waiting = client.result('never-either').catch((e: unknown) => e);
    await waitFor(() => router.polls.open === 1, { message: 'poll open' });
    const closing = client.close();
    expect(client.close()).toBe(closing);
    await closing;
    expect(isReachClosedError(await waiting)).toBe(true);
    await expect(client.submit({ capability: 'echo', payload: 1 })).rejects.toMatchObject({
      name: 'ReachClosedError',
    });
  });

  it('reports an unreachable router as ReachConnectionError', async () => {
    const gone = new ReachClient({
      routerUrl: 'http://127.0.0.1:9',
      requestTimeoutMs: 2000,
      logger: testLogger(),
    });
    const err: unknown = await gone
      .submit({ capability: 'echo', payload: 1 })
      .catch((e: unknown) => e);
    expect(isReachConnectionError(err)).toBe(true);
    await gone.close();
  });
});
