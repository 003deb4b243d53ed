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
  isSubmitFailedError,
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
/** Handler runs per task_id. */
let runs: Map<string, number>;

beforeEach(async () => {
  h = await startHarness();
  runs = new Map();
  agent = h.agent({
    maxConcurrency: 4,
    handler: (task) => {
      runs.set(task.taskId, (runs.get(task.taskId) ?? 0) + 1);
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

  it.each(['STORE_UNAVAILABLE', 'drop'] as const)(
    'submit() retries with the same task_id when a delivered task was answered %s, and it runs once',
    async (how) => {
      router.loseReplies(1, how);
      const before = router.submits.length;
      const reply = await client.submit({ capability: 'echo', payload: how });
      const tries = router.submits.slice(before);
      // The first try delivered the task; the second, with the same task_id, got it back (200).
      expect(tries).toHaveLength(2);
      expect(new Set(tries.map((t) => t.task_id))).toEqual(new Set([reply.task_id]));
      expect(reply.task_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(await client.result(reply.task_id)).toMatchObject({
        status: 'completed',
        result: how,
      });
      expect(runs.get(reply.task_id)).toBe(1);
    },
  );

  it('submit() gives up after submitMaxAttempts with a SubmitFailedError naming the task_id', async () => {
    const quick = new ReachClient({
      routerUrl: router.url,
      submitMaxAttempts: 3,
      submitRetry: { baseMs: 10, capMs: 20 },
      logger: testLogger(),
    });
    try {
      router.refuseSubmits(3);
      const before = router.submits.length;
      const err: unknown = await quick
        .submit({ capability: 'echo', payload: 'later' })
        .catch((e: unknown) => e);
      const tries = router.submits.slice(before);
      expect(tries).toHaveLength(3);
      expect(isSubmitFailedError(err)).toBe(true);
      expect(err).toMatchObject({
        name: 'SubmitFailedError',
        taskId: tries[0]?.task_id,
        attempts: 3,
        code: 'NO_AGENT',
        status: 503,
      });
      expect(new Set(tries.map((t) => t.task_id)).size).toBe(1);
      // The error reply named the same task_id; a later submission with it is the same task.
      const failed = err as { taskId: string; lastError: unknown };
      expect(isReachHttpError(failed.lastError) && failed.lastError.body).toMatchObject({
        task_id: failed.taskId,
      });
      const again = await quick.submit({ task_id: failed.taskId, capability: 'echo', payload: 1 });
      expect(again.task_id).toBe(failed.taskId);
    } finally {
      await quick.close();
    }
  });

  it('submit() stops retrying at submitRetryTimeoutMs, and at once when the client is closed', async () => {
    const quick = new ReachClient({
      routerUrl: router.url,
      submitMaxAttempts: 1000,
      submitRetryTimeoutMs: 300,
      submitRetry: { baseMs: 20, capMs: 40 },
      logger: testLogger(),
    });
    const patient = new ReachClient({
      routerUrl: router.url,
      submitRetry: { baseMs: 60_000, capMs: 60_000 },
      submitRetryTimeoutMs: 600_000,
      logger: testLogger(),
    });
    try {
      router.refuseSubmits(1000, 'AT_CAPACITY');
      let started = Date.now();
      const timedOut: unknown = await quick
        .submit({ task_id: 'given-id', capability: 'echo', payload: 1 })
        .catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(timedOut).toMatchObject({
        name: 'SubmitFailedError',
        taskId: 'given-id',
        code: 'AT_CAPACITY',
      });
      expect((timedOut as { attempts: number }).attempts).toBeGreaterThan(1);

      const before = router.submits.length;
      started = Date.now();
      const pending = patient.submit({ capability: 'echo', payload: 1 }).catch((e: unknown) => e);
      await waitFor(() => router.submits.length > before, { message: 'first try sent' });
      await patient.close();
      const closed = await pending;
      expect(Date.now() - started).toBeLessThan(5000);
      expect(closed).toMatchObject({
        name: 'SubmitFailedError',
        taskId: router.submits[before]?.task_id,
        attempts: 1,
      });
    } finally {
      router.refuseSubmits(0);
      await quick.close();
      await patient.close();
    }
  });

  it('turns error replies into ReachHttpError with the stable code', async () => {
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

  it('reports an unreachable router as ReachConnectionError, after its retries', async () => {
    const gone = new ReachClient({
      routerUrl: 'http://127.0.0.1:9',
      requestTimeoutMs: 2000,
      submitMaxAttempts: 2,
      submitRetry: { baseMs: 10, capMs: 20 },
      logger: testLogger(),
    });
    const err: unknown = await gone
      .submit({ capability: 'echo', payload: 1 })
      .catch((e: unknown) => e);
    expect(isSubmitFailedError(err) && err.attempts === 2 && err.code === undefined).toBe(true);
    expect(isSubmitFailedError(err) && isReachConnectionError(err.lastError)).toBe(true);
    expect(isSubmitFailedError(err) && err.cause === err.lastError).toBe(true);
    await gone.close();
  });
});
