/**
 * Pull pools for batch agents, end to end on real Redis: a pull agent reads its capability's
 * pool with the same receipt/completion protocol; `mode: "batch"` and pull-only capabilities go
 * to the pool; `on_no_agent: "queue"` waits in the pool until an agent of either channel
 * appears; a capability at capacity queues in the waiting room, or answers 429 when the request
 * asks for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReachClient, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { poolStreams } from '@agent-reach/protocol';
import { groupBySlot } from '@agent-reach/service-kit/redis';
import { startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';

let stack: Stack;
let redis: TestRedis;
let client: ReachClient;
const agents: ReachAgent[] = [];

type Reg = {
  epoch: number;
  instance_id: string;
  group: string;
  acks_stream: string;
  pools: string[];
};
type Entry = [string, string[]];

beforeAll(async () => {
  stack = await startStack({ env: { ...FAST_LEASES, REACH_BACKPRESSURE: '{"overflow":"queue"}' } });
  redis = connectRedis(stack);
  client = new ReachClient({ routerUrl: stack.routerUrl });
});

afterAll(async () => {
  await client?.close();
  await Promise.all(agents.map((a) => a.close()));
  await redis?.quit();
  await stack?.stop();
});

const field = (f: string[], name: string) => f[f.indexOf(name) + 1] ?? '';
const view = async (id: string) =>
  (
    await http<{ status: string; agent_id: string; attempts: number }>(
      `${stack.routerUrl}/v1/tasks/${id}`,
    )
  ).body;

/**
 * A pull worker played with raw Redis, as docs/PROTOCOL.md describes: one XREADGROUP per hash
 * slot of its pools, since a Redis Cluster refuses a read of streams in several slots.
 */
async function pullOnce(agentId: string, reg: Reg, count: number): Promise<number> {
  const groups = groupBySlot(reg.pools, (pool) => pool);
  const reply: [string, Entry[]][] = [];
  let left = count;
  for (const streams of groups) {
    if (left <= 0) break;
    const part = (await redis.call(
      'XREADGROUP',
      'GROUP',
      reg.group,
      reg.instance_id,
      'COUNT',
      String(left),
      'BLOCK',
      String(Math.floor(2000 / groups.length)),
      'STREAMS',
      ...streams,
      ...streams.map(() => '>'),
    )) as [string, Entry[]][] | null;
    for (const [pool, entries] of part ?? []) {
      reply.push([pool, entries]);
      left -= entries.length;
    }
  }
  let done = 0;
  for (const [pool, entries] of reply) {
    for (const [id, f] of entries) {
      const common = [
        'task_id',
        field(f, 'task_id'),
        'agent_id',
        agentId,
        'instance_id',
        reg.instance_id,
        'epoch',
        String(reg.epoch),
        'attempt',
        field(f, 'attempt'),
        'pool',
        field(f, 'capability'),
        'message_id',
        id,
      ];
      await redis.call('XADD', reg.acks_stream, '*', ...common, 'stage', 'received');
      await redis.call(
        'XADD',
        reg.acks_stream,
        '*',
        ...common,
        'stage',
        'completed',
        'result',
        field(f, 'payload'),
        'duration_ms',
        '1',
      );
      await redis.call('XACK', pool, reg.group, id);
      done++;
    }
  }
  return done;
}

describe('pull pools', () => {
  it('queues batch tasks and tasks of pull-only capabilities in the pool, where a pull agent takes them', async () => {
    const reg = await http<Reg>(`${stack.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: 'batcher-1',
        instance_id: 'b1',
        capabilities: ['embed', 'rank'],
        max_concurrency: 8,
        channel: 'pull',
      },
    });
    // Each capability's pool as its priority bands, highest first (pool-bands.ts).
    expect(reg.body.pools).toEqual([
      ...poolStreams(stack.keys, 'embed'),
      ...poolStreams(stack.keys, 'rank'),
    ]);
    const batch = await client.submit({ capability: 'embed', payload: { text: 'a' } });
    expect(batch).toMatchObject({
      status: 'sent',
      agent_id: '',
      stream: `${stack.prefix}:{pool:embed}`,
    });
    const second = await client.submit({ capability: 'rank', payload: [3, 1, 2] });
    expect(second.stream).toBe(`${stack.prefix}:{pool:rank}`);
    let done = 0;
    await waitFor(async () => (done += await pullOnce('batcher-1', reg.body, 8)) >= 2, {
      timeoutMs: 8000,
    });
    const r1 = await client.result(batch.task_id, { timeoutMs: 5000 });
    expect(r1).toMatchObject({ status: 'completed', result: { text: 'a' }, agent_id: 'batcher-1' });
    // The second task's acks may be applied in a later batch than the first's: wait for its result too.
    expect(await client.result(second.task_id, { timeoutMs: 5000 })).toMatchObject({
      status: 'completed',
      result: [3, 1, 2],
      agent_id: 'batcher-1',
    });
    expect(await view(second.task_id)).toMatchObject({
      status: 'completed',
      agent_id: 'batcher-1',
    });
    // Finished tasks leave the pool and the agent's slots.
    expect(await redis.xlen(`${stack.prefix}:{pool:embed}`)).toBe(0);
  });

  it('sends a task to the pool on request even when push agents serve the capability', async () => {
    agents.push(await startAgent(stack, 'pusher-1', ['mixed'], async (t) => t.payload));
    const reg = await http<Reg>(`${stack.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: 'batcher-2',
        instance_id: 'b2',
        capabilities: ['mixed'],
        max_concurrency: 2,
        channel: 'pull',
      },
    });
    const pushed = await client.submit({ capability: 'mixed', payload: 1 });
    expect(pushed.agent_id).toBe('pusher-1');
    const batched = await client.submit({ capability: 'mixed', payload: 2, mode: 'batch' });
    expect(batched.stream).toBe(`${stack.prefix}:{pool:mixed}`);
    await waitFor(async () => (await pullOnce('batcher-2', reg.body, 2)) > 0, { timeoutMs: 8000 });
    await waitFor(async () => (await view(batched.task_id)).status === 'completed');
    expect((await view(batched.task_id)).agent_id).toBe('batcher-2');
  });

  it('with on_no_agent "queue", waits in the pool and is delivered when an agent appears', async () => {
    const refused = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'later', payload: 1 },
    });
    expect(refused.status).toBe(503);
    const queued = await client.submit({
      capability: 'later',
      payload: { n: 1 },
      on_no_agent: 'queue',
      timeout_s: 60,
    });
    expect(queued.stream).toBe(`${stack.prefix}:{pool:later}`);
    expect((await view(queued.task_id)).status).toBe('sent');
    // A push agent appears: registry-sync drains the pool into it.
    agents.push(await startAgent(stack, 'late-pusher', ['later'], async (t) => t.payload));
    const result = await client.result(queued.task_id, { timeoutMs: 10_000 });
    expect(result).toMatchObject({
      status: 'completed',
      result: { n: 1 },
      agent_id: 'late-pusher',
    });
  });

  it('dead-letters a queued task nobody takes within its timeout', async () => {
    const queued = await client.submit({
      capability: 'nobody-ever',
      payload: 1,
      on_no_agent: 'queue',
      timeout_s: 1,
    });
    await waitFor(async () => (await view(queued.task_id)).status === 'dead', {
      timeoutMs: 8000,
      message: 'the queued task did not expire',
    });
    const dlq = await http<{ items: { task_id: string; reason: string }[] }>(
      `${stack.routerUrl}/v1/dlq?capability=nobody-ever`,
    );
    expect(dlq.body.items[0]).toMatchObject({ task_id: queued.task_id, reason: 'deadline' });
  });

  it('queues in the waiting room instead of 429 when every agent is at capacity, unless asked to reject', async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    agents.push(
      await startAgent(
        stack,
        'busy-1',
        ['overflow', 'squeeze'],
        async (t) => (await gate, t.payload),
        { maxConcurrency: 1 },
      ),
    );
    const first = await client.submit({ capability: 'overflow', payload: 1 });
    expect(first.agent_id).toBe('busy-1');
    const second = await client.submit({ capability: 'overflow', payload: 2 });
    expect(second.status).toBe('queued');
    // Asked for a fast answer, the same situation is a 429.
    const squeezed = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'squeeze', payload: 1, on_at_capacity: 'reject' },
    });
    expect(squeezed.status).toBe(429);
    expect(squeezed.body.error).toBe('AT_CAPACITY');
    release();
    await waitFor(async () => (await view(second.task_id)).status === 'completed', {
      timeoutMs: 10_000,
    });
  });
});
