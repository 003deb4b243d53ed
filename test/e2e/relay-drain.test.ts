/**
 * An operator drains an endpoint agent a relay serves (`POST /v1/agents/:id/drain` through the
 * router): the call it runs finishes there, it gets no new task, and once registry-sync removed
 * its record the relay leaves it out instead of registering it again. Declaring the endpoint
 * again (a PUT of its declaration) brings it back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer } from '@agent-reach/relay/demo';
import { waitFor } from '@agent-reach/testkit';
import { agentStatus, declareEndpoint, startRelay, untilRouted } from '../support/endpoints.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let redis: TestRedis;
const stops: (() => Promise<unknown>)[] = [];
let endpointUrl: string;
let relayUrl: string;

beforeAll(async () => {
  stack = await startStack({ env: FAST_LEASES });
  const server = await startHttpServer({});
  stops.push(() => server.close());
  endpointUrl = server.url;
  const relay = await startRelay(stack);
  stops.push(() => relay.proc.stop());
  relayUrl = relay.url;
  redis = connectRedis();
  stops.push(() => redis.quit());
}, 180_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await stack?.stop();
});

type TaskView = { status: string; agent_id?: string; attempts?: number };
const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

/** The relay's `reach_relay_agents_served`: the agents it heartbeats and reads for. */
async function servedByRelay(): Promise<number> {
  const text = await (await fetch(`${relayUrl}/metrics`)).text();
  const m = /^reach_relay_agents_served(?:\{[^}]*\})? (\d+)$/m.exec(text);
  if (!m) throw new Error('the relay has no reach_relay_agents_served');
  return Number(m[1]);
}

/** When the agent last heartbeat, from its record (`lease_at`, ms). */
async function leaseAt(agentId: string): Promise<number> {
  return Number(await redis.hget(stack.keys.agent(agentId), 'lease_at'));
}

describe('an operator drain of an endpoint agent', () => {
  it('lets its call finish, keeps it out once removed, and a new declaration brings it back', async () => {
    const declaration = {
      protocol: 'http',
      url: `${endpointUrl}/echo`,
      capabilities: ['drained.echo'],
      max_concurrency: 2,
    };
    await declareEndpoint(stack, 'drained-http', declaration);
    // A neighbour on the same relay, whose heartbeats show the relay's loop going on.
    await declareEndpoint(stack, 'drain-neighbour', {
      ...declaration,
      capabilities: ['drain-neighbour.echo'],
    });
    await waitFor(async () => (await agentStatus(stack, 'drained-http')) === 'HEALTHY', {
      timeoutMs: 20_000,
    });
    await waitFor(async () => (await agentStatus(stack, 'drain-neighbour')) === 'HEALTHY', {
      timeoutMs: 20_000,
    });
    await untilRouted(stack, 'drained.echo');

    const running = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'drained.echo', payload: { delay_ms: 1500 } },
    });
    expect(running.status).toBe(202);
    await waitFor(async () => (await view(running.body.task_id)).status === 'received');

    const drain = await http<{ status: string }>(
      `${stack.routerUrl}/v1/agents/drained-http/drain`,
      { body: {} },
    );
    expect(drain.status, JSON.stringify(drain.body)).toBe(200);
    expect(drain.body.status).toBe('DRAINING');

    // The running call completes on the drained agent, on its first attempt.
    await waitFor(async () => (await view(running.body.task_id)).status === 'completed', {
      timeoutMs: 10_000,
    });
    expect(await view(running.body.task_id)).toMatchObject({
      agent_id: 'drained-http',
      attempts: 1,
    });

    // Removed once its lease ran out, it stays out: the relay does not register it again.
    await waitFor(async () => (await agentStatus(stack, 'drained-http')) === undefined, {
      timeoutMs: 15_000,
      message: 'the drained agent was never removed',
    });
    // The relay saw the record gone and left the agent out (it used to register it again at once).
    await waitFor(async () => (await servedByRelay()) === 1, {
      timeoutMs: 10_000,
      message: 'the relay still serves the drained agent',
    });
    // Two of the neighbour's heartbeats later, the relay had its chance: still out.
    for (let beat = 0; beat < 2; beat++) {
      const before = await leaseAt('drain-neighbour');
      await waitFor(async () => (await leaseAt('drain-neighbour')) > before, {
        timeoutMs: 10_000,
        message: 'the neighbour never heartbeat',
      });
    }
    expect(await agentStatus(stack, 'drained-http')).toBeUndefined();
    expect(await servedByRelay()).toBe(1);

    // Declared again, it is served again and runs tasks.
    await declareEndpoint(stack, 'drained-http', { ...declaration, max_concurrency: 3 });
    await waitFor(async () => (await agentStatus(stack, 'drained-http')) === 'HEALTHY', {
      timeoutMs: 20_000,
      message: 'the declared agent never came back',
    });
    await untilRouted(stack, 'drained.echo');
    const after = await http<{ status: string }>(`${stack.routerUrl}/v1/tasks?wait_ms=10000`, {
      body: { capability: 'drained.echo', payload: { n: 2 } },
    });
    expect(after.body.status).toBe('completed');
  }, 90_000);
});
