/**
 * Pull agents honour a pooled task's placement, end to end: a strict-eu batch task read by a pull
 * agent in us is released, unrun and unreported, and waits while no agent may take it; once an
 * eu pull agent registers, registry-sync puts the entry back and the eu agent runs it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { decodeSnapshot, RELEASED_CONSUMER, WORKER_GROUP } from '@agent-reach/protocol';
import { ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let redis: Redis;
const agents: ReachAgent[] = [];

beforeAll(async () => {
  stack = await startStack({ env: FAST_LEASES });
  redis = new Redis(stack.redisUrl);
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await redis?.quit();
  await stack?.stop();
});

async function pullAgent(
  agentId: string,
  region: string,
  handler: (task: TaskContext) => Promise<unknown>,
): Promise<ReachAgent> {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities: ['placed'],
    channel: 'pull',
    region,
    maxConcurrency: 2,
    blockMs: 200,
    handler,
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agents.push(agent);
  await agent.start().ready();
  return agent;
}

/** Pool entries pending in the group, by consumer. */
async function pendingByConsumer(pool: string): Promise<Record<string, number>> {
  const rows = (await redis.xpending(pool, WORKER_GROUP, '-', '+', 100)) as [string, string][];
  const out: Record<string, number> = {};
  for (const [, consumer] of rows) out[consumer] = (out[consumer] ?? 0) + 1;
  return out;
}

describe('a strict-eu task in a pool', () => {
  it('is never run by a pull agent in us, and is run by one in eu once it registers', async () => {
    const keys = stack.keys;
    const pool = keys.pool('placed');
    const usRan: string[] = [];
    await pullAgent('placed-us', 'us', (t) => (usRan.push(t.taskId), Promise.resolve('us')));
    const submitted = await http(`${stack.routerUrl}/v1/tasks`, {
      body: {
        task_id: 'placed-eu-1',
        capability: 'placed',
        payload: { n: 1 },
        mode: 'batch',
        region: 'eu',
        region_policy: 'strict',
        callback_topic: 'placed-results',
      },
    });
    expect(submitted.status).toBe(202);
    expect(submitted.body).toMatchObject({ agent_id: '', stream: pool });

    // The us agent read it and released it: pending with the released consumer, unreported.
    await waitFor(async () => (await pendingByConsumer(pool))[RELEASED_CONSUMER] === 1, {
      message: 'entry released by the us agent',
    });
    // With no agent that may take it, it stays there: through two more snapshots, during which
    // the pool drainer sweeps (100 ms apart) several times.
    // Full snapshots, not deltas, which take versions of the same counter.
    const fullVersion = async () => decodeSnapshot(await redis.get(keys.snapshot()))?.version ?? 0;
    const seen = new Set([await fullVersion()]);
    await waitFor(async () => seen.add(await fullVersion()).size >= 3, {
      message: 'two more snapshots',
    });
    expect(await pendingByConsumer(pool)).toEqual({ [RELEASED_CONSUMER]: 1 });
    expect(await redis.xlen(pool)).toBe(1);
    expect(await redis.hmget(keys.task('placed-eu-1'), 'status', 'agent_id')).toEqual(['sent', '']);

    const euRan: string[] = [];
    await pullAgent('placed-eu', 'eu', (t) => (euRan.push(t.taskId), Promise.resolve('eu')));
    const callback = await http<{ items: Record<string, unknown>[] }>(
      `${stack.routerUrl}/v1/callbacks/placed-results?wait_ms=10000`,
    );
    expect(callback.body.items).toMatchObject([
      { task_id: 'placed-eu-1', status: 'completed', agent_id: 'placed-eu', result: 'eu' },
    ]);
    expect(euRan).toEqual(['placed-eu-1']);
    expect(usRan).toEqual([]);
    // Done: the pool is empty and nothing was refused (the SDK never reports what it may not take).
    await waitFor(async () => (await redis.xlen(pool)) === 0, { message: 'pool emptied' });
    const refused = Object.keys(await redis.hgetall(keys.stats())).filter((k) =>
      k.startsWith('acks_refused:'),
    );
    expect(refused).toEqual([]);
  });
});
