/**
 * Task priorities and fallback capabilities on real Redis, with registry-sync and a router in
 * this process: a high-priority task overtakes low-priority ones already waiting — in a pool
 * read by an SDK pull agent, among the submissions a router holds for a free slot and among the
 * retries registry-sync holds for one — and a
 * task goes to its fallback capability only while no agent of its own is live, which its
 * timeline and GET /v1/tasks/:id say.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { poolStreams, reachKeys, type ReachKeys } from '@agent-reach/protocol';
import { createRegistryService, type RegistryService } from '@agent-reach/registry-sync';
import { createRouterService, type RouterService } from '@agent-reach/router';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { CapacityWaiter } from '@agent-reach/dispatch';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';

const silent = pino({ level: 'silent' });
let prefix: string;
let keys: ReachKeys;
let redis: Redis;
let sync: RegistryService;
let router: RouterService;
let registryUrl = '';
let routerUrl = '';
const agents: ReachAgent[] = [];

beforeAll(async () => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  const url = testServices().redisUrl;
  redis = new Redis(url);
  sync = await createRegistryService(
    { redisUrl: url, prefix, port: 0, probeIntervalMs: 600_000 },
    { logger: silent },
  );
  router = await createRouterService({ redisUrl: url, prefix, port: 0 }, { logger: silent });
  registryUrl = await sync.listen();
  routerUrl = await router.listen();
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await router?.close();
  await sync?.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

type View = {
  status: string;
  attempts: number;
  agent_id: string;
  priority?: number;
  fallback_capabilities?: string[];
  timeline: { stage: string; routing?: Record<string, unknown> }[];
};

async function submit(body: Record<string, unknown>): Promise<{ status: number; task_id: string }> {
  const res = await router.app.inject({ method: 'POST', url: '/v1/tasks', payload: body });
  return { status: res.statusCode, task_id: res.json<{ task_id: string }>().task_id };
}

async function view(taskId: string): Promise<View> {
  return (await router.app.inject({ url: `/v1/tasks/${taskId}` })).json<View>();
}

async function register(body: Record<string, unknown>) {
  const res = await sync.app.inject({ method: 'POST', url: '/v1/agents/register', payload: body });
  expect(res.statusCode, res.body).toBe(200);
  await router.snapshot.reload();
  return res.json<{ epoch: number; pools: string[] }>();
}

/** A handler's gate: the test opens it to let that task finish. */
class Gate {
  readonly promise: Promise<void>;
  open!: () => void;
  constructor() {
    this.promise = new Promise((resolve) => (this.open = resolve));
  }
}

describe('priority in a pool', () => {
  it('a pull agent with one slot takes the priority-9 task before the priority-0 ones that waited longer', async () => {
    const started: string[] = [];
    const gates = new Map<string, Gate>();
    const gate = (id: string) => {
      let g = gates.get(id);
      if (!g) gates.set(id, (g = new Gate()));
      return g;
    };
    const agent = new ReachAgent({
      registryUrl,
      routerUrl,
      redisUrl: testServices().redisUrl,
      agentId: 'puller',
      capabilities: ['crunch'],
      channel: 'pull',
      maxConcurrency: 1,
      shutdownTimeoutMs: 2000,
      logger: silent,
      handler: async (task) => {
        const { n } = task.payload as { n: string };
        started.push(n);
        await gate(n).promise;
        return n;
      },
    });
    agents.push(agent);
    agent.start();
    const reg = await agent.ready();
    // The pool's bands, highest first: the order the agent reads them in.
    expect(reg.pools).toEqual(poolStreams(keys, 'crunch'));
    await router.snapshot.reload();

    // Straight to the pool, whatever its depth (a request that says `reject` never waits in the
    // waiting room): this reads the pool's bands as the agent does.
    const batch = (n: string, priority?: number) =>
      submit({
        capability: 'crunch',
        mode: 'batch',
        on_at_capacity: 'reject',
        payload: { n },
        ...(priority === undefined ? {} : { priority }),
      });
    // The agent's one slot is taken; three default-priority tasks wait in the pool, then one of 9.
    expect((await batch('first')).status).toBe(202);
    await waitFor(() => started.length === 1, { message: 'the first task did not start' });
    const low = [await batch('low-1'), await batch('low-2'), await batch('low-3', 0)];
    const high = await batch('high', 9);
    expect([...low, high].map((r) => r.status)).toEqual([202, 202, 202, 202]);
    // Band 0 holds the three waiting and the running one (an entry leaves once its task is done).
    expect(await redis.xlen(keys.pool('crunch'))).toBe(4);
    expect(await redis.xlen(keys.poolBand('crunch', 2))).toBe(1);
    expect((await view(high.task_id)).priority).toBe(9);

    for (const expected of ['high', 'low-1', 'low-2', 'low-3']) {
      gate(started.at(-1) ?? '').open();
      await waitFor(() => started.at(-1) === expected || started.length > 5, {
        message: `${expected} did not start next (started: ${started.join(', ')})`,
      });
    }
    expect(started).toEqual(['first', 'high', 'low-1', 'low-2', 'low-3']);
    gate('low-3').open();
    await waitFor(async () => (await view(low[2]?.task_id ?? '')).status === 'completed', {
      message: 'the last task did not complete',
    });
  });
});

describe('priority among held submissions', () => {
  it('the router’s capacity waiter lets the priority-9 submission go first, then the others oldest first', async () => {
    await register({ agent_id: 'one-slot', capabilities: ['narrow'], max_concurrency: 1 });
    const taken = await submit({ capability: 'narrow', payload: 0 });
    expect(taken.status).toBe(202);
    // The waiter a router holds submissions in (submitter.ts), on the router's own snapshot.
    const waiter = new CapacityWaiter({ redis: router.redis, keys, snapshot: router.snapshot });
    const order: string[] = [];
    const hold = (name: string, priority: number) =>
      void waiter.wait('narrow', 20_000, priority).then((ok) => order.push(ok ? name : `${name}!`));
    hold('low-1', 0);
    hold('low-2', 0);
    hold('mid', 4);
    hold('high', 9);
    hold('low-3', 0);
    // The slot frees: the waiters go one per free slot, highest priority first.
    await redis.hdel(keys.pending('one-slot'), taken.task_id);
    await waitFor(() => order.length === 5, {
      message: `held submissions let go: ${order.join(', ')}`,
    });
    expect(order).toEqual(['high', 'mid', 'low-1', 'low-2', 'low-3']);
    waiter.close();
  });
});

describe('priority among held retries', () => {
  it('a freed slot goes to the priority-9 retry registry-sync holds before the priority-0 ones held before it', async () => {
    const reg = await register({
      agent_id: 'slots',
      instance_id: 'slots-1',
      capabilities: ['held'],
      max_concurrency: 5,
    });
    const fail = (taskId: string) =>
      redis.xadd(
        keys.acks(),
        '*',
        'task_id',
        taskId,
        'stage',
        'failed',
        'agent_id',
        'slots',
        'instance_id',
        'slots-1',
        'epoch',
        String(reg.epoch),
        'attempt',
        '1',
        'error',
        'busy',
        'retryable',
        'true',
      );
    const sent = async (body: Record<string, unknown>) => {
      const r = await submit({ capability: 'held', payload: 0, ...body });
      expect(r.status).toBe(202);
      return r.task_id;
    };
    // Five slots: three default-priority tasks, one of priority 9 and one more.
    const low = [await sent({}), await sent({}), await sent({})];
    const high = await sent({ priority: 9 });
    await sent({});
    // The three low ones fail; new tasks take their slots while they back off.
    for (const id of low) await fail(id);
    for (const id of low)
      await waitFor(async () => (await view(id)).status === 'retry_wait', {
        message: `${id} was not scheduled again`,
      });
    const fillers = [await sent({}), await sent({}), await sent({})];
    // Their retries come due and find every slot busy: registry-sync holds them.
    await waitFor(async () => (await redis.get(keys.retriesWaiting('held'))) === '3', {
      timeoutMs: 8000,
      message: 'the low-priority retries were not held',
    });
    // The high one fails: its own slot goes to a held low one, and it is held after them.
    await fail(high);
    await waitFor(
      async () => {
        const states = await Promise.all(low.map(async (id) => (await view(id)).status));
        return states.filter((s) => s === 'sent').length === 1;
      },
      { message: "the high task's freed slot did not go to a held retry" },
    );
    await waitFor(async () => (await redis.get(keys.retriesWaiting('held'))) === '3', {
      timeoutMs: 8000,
      message: 'the high-priority retry was not held',
    });
    // A slot frees: the high-priority retry takes it, though two low ones were held longer.
    await redis.hdel(keys.pending('slots'), fillers[0] ?? '');
    await waitFor(async () => (await view(high)).status === 'sent', {
      timeoutMs: 3000,
      message: 'the high-priority retry did not get the freed slot',
    });
    const lows = await Promise.all(low.map(async (id) => (await view(id)).status));
    expect(lows.filter((s) => s === 'retry_wait')).toHaveLength(2);
    // The next freed slot goes to a low one.
    await redis.hdel(keys.pending('slots'), fillers[1] ?? '');
    await waitFor(
      async () => {
        const states = await Promise.all(low.map(async (id) => (await view(id)).status));
        return states.filter((s) => s === 'sent').length === 2;
      },
      { timeoutMs: 3000, message: 'the next freed slot did not go to a low-priority retry' },
    );
  });
});

describe('fallback capabilities', () => {
  it('routes to the first fallback with a live agent only while none of the capability is live, and says so', async () => {
    await register({ agent_id: 'lite-1', capabilities: ['summarise-lite'], max_concurrency: 4 });
    const body = {
      capability: 'summarise',
      fallback_capabilities: ['summarise-none', 'summarise-lite'],
      payload: { text: 'hello' },
    };
    // No agent of summarise: the second fallback has one.
    const first = await submit(body);
    expect(first.status).toBe(202);
    const v = await view(first.task_id);
    expect(v.agent_id).toBe('lite-1');
    expect(v.fallback_capabilities).toEqual(['summarise-none', 'summarise-lite']);
    expect(v.timeline.find((e) => e.stage === 'sent')?.routing).toMatchObject({
      capability: 'summarise-lite',
      fallback: true,
    });
    // The agent reads it as a task of the fallback capability.
    const entries = await redis.xrange(keys.inbox('lite-1'), '-', '+');
    const fields = entries.at(-1)?.[1] ?? [];
    expect(fields[fields.indexOf('capability') + 1]).toBe('summarise-lite');
    // GET /v1/route says the same.
    const route = await router.app.inject({
      url: '/v1/route?capability=summarise&fallback=summarise-none,summarise-lite',
    });
    expect(route.json()).toMatchObject({
      agent_id: 'lite-1',
      capability: 'summarise-lite',
      fallback: true,
    });
    // An agent of the capability itself is live: no fallback.
    await register({ agent_id: 'full-1', capabilities: ['summarise'], max_concurrency: 4 });
    const second = await submit(body);
    const w = await view(second.task_id);
    expect(w.agent_id).toBe('full-1');
    expect(w.timeline.find((e) => e.stage === 'sent')?.routing?.fallback).toBeUndefined();
    // The task sent to the fallback fails: its retry checks its own capability first, and goes there.
    const lite = await sync.app.inject({ url: '/v1/agents/lite-1' });
    await redis.xadd(
      keys.acks(),
      '*',
      'task_id',
      first.task_id,
      'stage',
      'failed',
      'agent_id',
      'lite-1',
      'instance_id',
      lite.json<{ instance_id: string }>().instance_id,
      'epoch',
      String(lite.json<{ epoch: number }>().epoch),
      'attempt',
      '1',
      'error',
      'model busy',
      'retryable',
      'true',
    );
    await waitFor(
      async () => {
        const r = await view(first.task_id);
        return r.attempts === 2 && r.status === 'sent';
      },
      { timeoutMs: 10_000, message: 'the failed task was not sent again' },
    );
    const retried = await view(first.task_id);
    expect(retried.agent_id).toBe('full-1');
    const lastSent = retried.timeline.filter((e) => e.stage === 'sent').at(-1);
    expect(lastSent?.routing?.fallback).toBeUndefined();
    // No live agent of any of them: NO_AGENT names the capability asked for.
    const none = await router.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      payload: { capability: 'nobody', fallback_capabilities: ['nobody-else'], payload: 0 },
    });
    expect(none.statusCode).toBe(503);
    expect(none.json()).toMatchObject({ error: 'NO_AGENT' });
  });
});
