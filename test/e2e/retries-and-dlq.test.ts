/**
 * Failures are handled, not hidden: retries with backoff on another agent, the dead-letter queue
 * with a reason, replay, non-retryable failures and deadlines — while other tasks keep flowing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonRetryableError, ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { hold } from '../support/hold.ts';
import { morePasses, reached } from '../support/passes.ts';
import { connectRedis } from '../support/redis.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

/** A retry that finds no agent for this long is dead-lettered (REACH_NO_AGENT_WAIT_MS here). */
const NO_AGENT_WAIT_MS = 1500;

let stack: Stack;
const agents: ReachAgent[] = [];
let client: ReachClient;
let healed = false;
/** `slowpoke` tasks run until their test has seen them dead. */
const slowpoke = hold();

type TaskView = {
  status: string;
  attempts: number;
  dead_reason?: string;
  timeline: { stage: string; at: number; agent_id?: string; reason?: string; due_at?: number }[];
};

beforeAll(async () => {
  stack = await startStack({
    // A retry that finds no live agent is dead-lettered after 1.5 s here (5 min by default).
    env: {
      ...FAST_LEASES,
      REACH_RETRY_BASE_MS: '200',
      REACH_RETRY_CAP_MS: '2000',
      REACH_MAX_ATTEMPTS: '4',
      REACH_NO_AGENT_WAIT_MS: String(NO_AGENT_WAIT_MS),
    },
  });
  const handler = async (task: { capability: string; payload: unknown; attempt: number }) => {
    if (task.capability === 'doomed') throw new Error('always fails');
    if (task.capability === 'fatal') throw new NonRetryableError('bad input, do not retry');
    if (task.capability === 'flaky' && !healed) throw new Error('not yet');
    if (task.capability === 'slowpoke') await slowpoke.wait;
    return task.payload;
  };
  for (const id of ['r-1', 'r-2']) {
    agents.push(
      await startAgent(stack, id, ['echo', 'doomed', 'fatal', 'flaky', 'slowpoke'], handler, {
        maxConcurrency: 8,
      }),
    );
  }
  client = new ReachClient({ routerUrl: stack.routerUrl });
});

afterAll(async () => {
  slowpoke.release();
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

describe('retries and dead letters', () => {
  it('retries a failing task with growing backoff, on another agent, then dead-letters it while other tasks flow', async () => {
    const doomed = await client.submit({ capability: 'doomed', payload: 1 });
    // Other tasks keep completing while the doomed one is retried: fewer than the two agents'
    // 16 slots, so neither fills up (a retry goes back to the agent that failed it when the
    // other has no room, which is not what this test looks at).
    const echoes = await Promise.all(
      Array.from({ length: 10 }, (_, i) => client.run('echo', { i }, { timeoutMs: 10_000 })),
    );
    expect(echoes).toHaveLength(10);
    const dead = await waitFor(
      async () => {
        const v = await view(doomed.task_id);
        return v.status === 'dead' ? v : undefined;
      },
      { timeoutMs: 15_000, message: 'the failing task never reached the DLQ' },
    );
    expect(dead.dead_reason).toBe('max_attempts');
    expect(dead.attempts).toBe(4);
    const retried = dead.timeline.filter((e) => e.stage === 'retried');
    expect(retried).toHaveLength(3);
    expect(retried.every((e) => e.reason === 'failed')).toBe(true);
    // Backoff grows: base 200 ms × 2^(n-1), ±20 %.
    const waits = retried.map((e) => (e.due_at ?? 0) - e.at);
    expect(waits[0]).toBeGreaterThanOrEqual(140);
    expect(waits[0]).toBeLessThanOrEqual(260);
    expect(waits[2]).toBeGreaterThan(waits[0] as number);
    // Each retry went to the other agent.
    const sentTo = dead.timeline.filter((e) => e.stage === 'sent').map((e) => e.agent_id);
    for (let i = 1; i < sentTo.length; i++) expect(sentTo[i]).not.toBe(sentTo[i - 1]);
    // The caller hears of it, once, with the reason.
    const result = await client.result(doomed.task_id, { timeoutMs: 5000 });
    expect(result).toMatchObject({ status: 'dead', error: 'max_attempts' });
    const dlq = await http<{ items: { task_id: string; reason: string; attempts: number }[] }>(
      `${stack.routerUrl}/v1/dlq?capability=doomed`,
    );
    expect(dlq.body.items).toEqual([
      expect.objectContaining({ task_id: doomed.task_id, reason: 'max_attempts', attempts: 4 }),
    ]);
  });

  it('dead-letters a non-retryable failure at once', async () => {
    const sub = await client.submit({ capability: 'fatal', payload: 1 });
    const dead = await waitFor(async () => {
      const v = await view(sub.task_id);
      return v.status === 'dead' ? v : undefined;
    });
    expect(dead.dead_reason).toBe('not_retryable');
    expect(dead.attempts).toBe(1);
  });

  it('replays a dead letter once, however many replays race, and it completes', async () => {
    healed = false;
    const sub = await client.submit({ capability: 'flaky', payload: { n: 7 } });
    await waitFor(async () => (await view(sub.task_id)).status === 'dead', { timeoutMs: 15_000 });
    healed = true;
    const replays = await Promise.all(
      Array.from({ length: 5 }, () =>
        http<{ error?: string; attempt?: number }>(
          `${stack.routerUrl}/v1/dlq/${sub.task_id}/replay`,
          { method: 'POST' },
        ),
      ),
    );
    expect(replays.map((r) => r.status).sort()).toEqual([202, 409, 409, 409, 409]);
    expect(replays.filter((r) => r.status === 409).every((r) => r.body.error === 'NOT_DEAD')).toBe(
      true,
    );
    const done = await waitFor(
      async () => {
        const v = await view(sub.task_id);
        return v.status === 'completed' ? v : undefined;
      },
      { timeoutMs: 10_000, message: 'the replayed task did not complete' },
    );
    expect(done.timeline.filter((e) => e.stage === 'replayed')).toHaveLength(1);
    expect(done.attempts).toBe(5);
    const dlq = await http<{ items: { task_id: string }[] }>(
      `${stack.routerUrl}/v1/dlq?capability=flaky`,
    );
    expect(dlq.body.items).toEqual([]);
    expect(
      (await http(`${stack.routerUrl}/v1/dlq/${sub.task_id}/replay`, { method: 'POST' })).status,
    ).toBe(409);
  });

  it('dead-letters a task whose deadline passes', async () => {
    const sub = await client.submit({ capability: 'slowpoke', payload: 1, timeout_s: 1 });
    const dead = await waitFor(
      async () => {
        const v = await view(sub.task_id);
        return v.status === 'dead' ? v : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(dead.dead_reason).toBe('deadline');
    slowpoke.release();
  });

  it('keeps a retry waiting while every agent is busy, past the no-agent wait, until a slot frees', async () => {
    // One agent with two slots: one holds a long task; a task fails once, and while its retry
    // backs off, another long task takes the slot it freed. The long tasks run until let go.
    let failedOnce = false;
    const long = hold();
    const crowded = await startAgent(
      stack,
      'crowded-1',
      ['crowded'],
      async (task) => {
        const p = task.payload as { kind: string };
        if (p.kind === 'once' && !failedOnce) {
          failedOnce = true;
          throw new Error('first attempt fails');
        }
        if (p.kind === 'hold') await long.wait;
        return p.kind;
      },
      { maxConcurrency: 2 },
    );
    agents.push(crowded);
    const firstLong = await client.submit({ capability: 'crowded', payload: { kind: 'hold' } });
    const once = await client.submit({ capability: 'crowded', payload: { kind: 'once' } });
    await waitFor(async () => (await view(once.task_id)).status === 'retry_wait', {
      timeoutMs: 5000,
    });
    await client.submit({ capability: 'crowded', payload: { kind: 'hold' } });
    // Both slots are busy: the retry comes due and registry-sync holds it (and says so). Past
    // the no-agent wait, and full passes begun after it, it still waits; then a slot frees.
    const redis = connectRedis(stack);
    try {
      const waiting = stack.keys.retriesWaiting('crowded');
      const heldAt = await waitFor(
        async () => ((await redis.get(waiting)) === '1' ? Date.now() : undefined),
        { timeoutMs: 5000, message: 'the retry was not held' },
      );
      await reached(heldAt + NO_AGENT_WAIT_MS);
      await morePasses(stack, 2);
      expect((await view(once.task_id)).status).toBe('retry_wait');
    } finally {
      long.release();
      await redis.quit();
    }
    const done = await waitFor(
      async () => {
        const v = await view(once.task_id);
        return v.status === 'completed' || v.status === 'dead' ? v : undefined;
      },
      { timeoutMs: 10_000 },
    );
    expect(done.status).toBe('completed');
    expect(done.attempts).toBe(2);
    // Parked in registry-sync, the retry went out as the first long task's slot freed (about 10 ms
    // here), not at its next turn in the due set, up to a second later.
    const freed =
      (await view(firstLong.task_id)).timeline.find((e) => e.stage === 'completed')?.at ?? 0;
    const resent = done.timeline.filter((e) => e.stage === 'sent').at(-1)?.at ?? 0;
    expect(freed).toBeGreaterThan(0);
    expect(resent - freed).toBeLessThan(250);
  });

  it('answers replay of an unknown task with 404 and keeps the DLQ listing bounded', async () => {
    expect((await http(`${stack.routerUrl}/v1/dlq/nope/replay`, { method: 'POST' })).status).toBe(
      404,
    );
    const res = await http<{ items: unknown[] }>(`${stack.routerUrl}/v1/dlq?limit=1`);
    expect(res.status).toBe(200);
    expect(res.body.items.length).toBeLessThanOrEqual(1);
    expect((await http(`${stack.routerUrl}/v1/dlq?limit=0`)).status).toBe(400);
  });
});
