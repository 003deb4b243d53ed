/**
 * A pooled task the pool drainer hands to a push agent is never lost to the moment its sender is
 * still recording the send: the pool entry's XADD lands before the task's record turns `sent`
 * (record-pooled-1.lua), and a drainer sweep that reads the entry in between must leave it for a
 * later sweep instead of deleting it. The test holds a task in that moment by hand (its status set
 * back to `accepted`), lets the drainer read its entry, then lets the record land.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { WORKER_GROUP } from '@agent-reach/protocol';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { morePasses } from '../support/passes.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let redis: Redis;
const agents: ReachAgent[] = [];

beforeAll(async () => {
  stack = await startStack({
    env: {
      ...FAST_LEASES,
      REACH_RECEIPT_TIMEOUT_MS: '800',
      // Far beyond the test: a pooled task must end by a delivery, not by its pool expiry.
      REACH_POOL_WAIT_MS: '120000',
    },
  });
  redis = new Redis(stack.redisUrl);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await redis?.quit();
  await stack?.stop();
});

type View = { status: string; agent_id: string; attempt: number; stream: string };

/** Sets the task's status to `to` only while it is `from`; true when it did. */
async function swapStatus(key: string, from: string, to: string): Promise<boolean> {
  const swapped = await redis.eval(
    "if redis.call('HGET', KEYS[1], 'status') == ARGV[1] then redis.call('HSET', KEYS[1], 'status', ARGV[2]) return 1 end return 0",
    1,
    key,
    from,
    to,
  );
  return swapped === 1;
}

describe('pool drainer', () => {
  it('leaves an entry whose send is still being recorded, and delivers it once recorded', async () => {
    // A pull agent that reads nothing and sends no heartbeat: the pool is its until its lease
    // lapses (2 s), so the drainer leaves the entry alone while the test sets the task up.
    const pull = await http(`${stack.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: 'silent-puller',
        instance_id: 'silent-1',
        capabilities: ['drainy'],
        max_concurrency: 1,
        channel: 'pull',
      },
    });
    expect(pull.status).toBe(200);
    const submitted = await http<View & { task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { task_id: 'mid-send', capability: 'drainy', payload: { n: 1 }, mode: 'batch' },
    });
    expect(submitted.status).toBe(202);
    const pool = submitted.body.stream;
    const taskKey = stack.keys.task('mid-send');
    // The moment between the pool's XADD and the record of the send, once the record has landed
    // (the 202 may come before it, which would undo the hold).
    await waitFor(async () => swapStatus(taskKey, 'sent', 'accepted'), {
      timeoutMs: 5000,
      message: 'the pooled send was never recorded',
    });

    const agent = new ReachAgent({
      registryUrl: stack.registryUrl,
      routerUrl: stack.routerUrl,
      redisUrl: stack.redisUrl,
      agentId: 'drain-push',
      capabilities: ['drainy'],
      maxConcurrency: 2,
      handler: async (task) => ({ echoed: task.payload }),
      shutdownTimeoutMs: 2000,
      logger: pino({ level: 'silent' }),
    });
    agents.push(agent);
    await agent.start().ready();

    // The silent puller goes OFFLINE and the drainer reads the entry for the push agent.
    await waitFor(
      async () => {
        const groups = (await redis.xinfo('GROUPS', pool)) as unknown[][];
        const group = groups.find((g) => g[g.indexOf('name') + 1] === WORKER_GROUP);
        return Number(group?.[group.indexOf('entries-read') + 1] ?? 0) >= 1;
      },
      { timeoutMs: 10_000, message: 'the pool drainer never read the entry' },
    );
    // Two housekeeping passes later the sweep that read it is over: the entry was left pending
    // in its pool, not deleted, and the task is untouched.
    await morePasses({ registryUrl: stack.registryUrl }, 2);
    expect(await redis.xlen(pool)).toBe(1);
    const [pending] = (await redis.xpending(pool, WORKER_GROUP)) as [number];
    expect(pending).toBe(1);
    // The record lands: the task is in its pool, sent and to no agent.
    expect(await swapStatus(taskKey, 'accepted', 'sent')).toBe(true);

    await waitFor(
      async () =>
        (await http<View>(`${stack.routerUrl}/v1/tasks/mid-send`)).body.status === 'completed',
      { timeoutMs: 10_000, message: 'the pooled task was never delivered' },
    );
    const view = (await http<View>(`${stack.routerUrl}/v1/tasks/mid-send`)).body;
    expect(view).toMatchObject({ status: 'completed', agent_id: 'drain-push' });
    // Nothing of it is left in the pool.
    expect(await redis.xlen(pool)).toBe(0);
  });
});
