/**
 * An attempt that never reached its endpoint (a relay's `ENDPOINT_UNREACHABLE` failure) is
 * retried at once without spending an attempt: the next attempt number rises, the task keeps its
 * whole budget, and the agent's health counts no failure. At most REACH_MAX_ATTEMPTS attempts
 * are free, so a task refused everywhere still ends. On a registry-sync in process with its
 * acks consumer, sweeps and resends running; the first attempt goes out by the router's send path.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  decodeTask,
  encodeAck,
  ENDPOINT_UNREACHABLE,
  reachKeys,
  WORKER_GROUP,
  type ReachKeys,
  type RegisterReply,
  type TaskMessage,
} from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';
import { sendFirstAttempt } from '../testing/first-send.ts';

const silent = pino({ level: 'silent' });
let service: RegistryService;
let redis: Redis;
let prefix: string;
let keys: ReachKeys;
let agent: RegisterReply;

beforeEach(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  service = await createRegistryService(
    {
      redisUrl: testServices().redisUrl,
      prefix,
      maxAttempts: 2,
      // A real failure waits a second; an unreachable attempt none.
      retryBaseMs: 1000,
      retryCapMs: 1000,
      sweepIntervalMs: 50,
      snapshotIntervalMs: 200,
      probeIntervalMs: 60_000,
    },
    { logger: silent },
  );
  redis = new Redis(testServices().redisUrl);
  const res = await service.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: 'edge', capabilities: ['score'], max_concurrency: 4 },
  });
  expect(res.statusCode).toBe(200);
  agent = res.json<RegisterReply>();
});

afterEach(async () => {
  await service.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

/** The next task entry in the agent's inbox, read as its consumer (as a relay reads it). */
function nextEntry(): Promise<TaskMessage> {
  return waitFor(
    async () => {
      const reply = (await redis.xreadgroup(
        'GROUP',
        WORKER_GROUP,
        agent.instance_id,
        'COUNT',
        1,
        'STREAMS',
        agent.stream,
        '>',
      )) as [string, [string, string[]][]][] | null;
      const fields = reply?.[0]?.[1][0]?.[1];
      if (!fields) return false;
      const task = decodeTask(fields);
      if (!task.ok) throw new Error(task.error);
      return task.value;
    },
    { timeoutMs: 8000, message: 'no task entry reached the agent' },
  );
}

/** The agent's failure of `task`'s attempt, with `code`. */
async function fail(task: TaskMessage, code: string): Promise<void> {
  await redis.xadd(
    keys.acksOf(agent.agent_id),
    '*',
    ...encodeAck({
      task_id: task.task_id,
      stage: 'failed',
      agent_id: agent.agent_id,
      instance_id: agent.instance_id,
      epoch: agent.epoch,
      attempt: task.attempt,
      error: code === ENDPOINT_UNREACHABLE ? 'connect ECONNREFUSED 127.0.0.1:9' : 'boom',
      error_code: code,
      retryable: true,
      received_ago_ms: 1,
    }),
  );
}

const field = (taskId: string, name: string) => redis.hget(keys.task(taskId), name);

describe('a failure with ENDPOINT_UNREACHABLE', () => {
  it('is re-sent at once without spending an attempt, and is no failure of the agent', async () => {
    const sent = await sendFirstAttempt(redis, keys, silent, 'edge', {
      taskId: 'u-1',
      capability: 'score',
    });
    expect(sent.kind).toBe('sent');
    const first = await nextEntry();
    expect(first.attempt).toBe(1);
    await fail(first, ENDPOINT_UNREACHABLE);

    const second = await nextEntry();
    expect(second).toMatchObject({ task_id: 'u-1', attempt: 2 });
    expect(await field('u-1', 'budget_from')).toBe('1');
    const retried = (await redis.lrange(keys.timeline('u-1'), 0, -1))
      .map((e) => JSON.parse(e) as { stage: string; reason?: string; at: number; due_at: number })
      .find((e) => e.stage === 'retried');
    expect(retried).toMatchObject({ reason: 'unreachable' });
    expect((retried?.due_at ?? Infinity) - (retried?.at ?? 0)).toBeLessThan(500);

    // The whole budget is left: with REACH_MAX_ATTEMPTS=2, two real failures before it is dead.
    await fail(second, 'HANDLER_ERROR');
    const third = await nextEntry();
    expect(third.attempt).toBe(3);
    await fail(third, 'HANDLER_ERROR');
    await waitFor(async () => (await field('u-1', 'status')) === 'dead', { timeoutMs: 8000 });
    expect(await field('u-1', 'dead_reason')).toBe('max_attempts');
    // Two failures in the agent's health window, none for the unreachable attempt.
    await waitFor(
      async () => ((await redis.hget(keys.agent('edge'), 'outcomes')) ?? '').length >= 2,
      { timeoutMs: 8000 },
    );
    expect(await redis.hget(keys.agent('edge'), 'outcomes')).toBe('ff');
  });

  it('is free at most REACH_MAX_ATTEMPTS times: a task no endpoint answers still ends', async () => {
    await sendFirstAttempt(redis, keys, silent, 'edge', { taskId: 'u-2', capability: 'score' });
    // Attempts 1 and 2 are free (budget_from 0 → 2), 3 and 4 are spent: dead after the 4th.
    for (let attempt = 1; attempt <= 4; attempt++) {
      const entry = await nextEntry();
      expect(entry.attempt).toBe(attempt);
      await fail(entry, ENDPOINT_UNREACHABLE);
    }
    await waitFor(async () => (await field('u-2', 'status')) === 'dead', { timeoutMs: 8000 });
    expect(await field('u-2', 'dead_reason')).toBe('max_attempts');
    expect(await field('u-2', 'budget_from')).toBe('2');
  });
});
