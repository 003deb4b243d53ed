/**
 * Endpoint agents over HTTP (docs/ENDPOINTS.md): a plain JSON endpoint declared by URL is served
 * by a relay — tasks complete through the router (push and `wait_ms`), a streamed reply becomes
 * chunks, a cancel aborts the call, a 4xx is final; of two replicas, the one SIGKILLed turns
 * SUSPECT in under a second and its tasks complete on the other, one callback each; of two
 * relays, the one SIGKILLed under load loses nothing and its agents move to the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCallback } from '@agent-reach/protocol';
import { startHttpServer } from '@agent-reach/relay/demo';
import { waitFor } from '@agent-reach/testkit';
import {
  agentStatus,
  declareEndpoint,
  finalCounts,
  startEndpointProcess,
  startRelay,
  untilHealthy,
  untilRouted,
} from '../support/endpoints.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let redis: TestRedis;
const stops: (() => Promise<unknown>)[] = [];
const cancelled: string[] = [];
let endpointUrl: string;
let relayOutput: () => string;

type TaskView = {
  status: string;
  agent_id?: string;
  attempts?: number;
  result?: unknown;
  error?: string;
  timeline?: { stage: string; error_code?: string }[];
};

beforeAll(async () => {
  stack = await startStack({ env: { ...FAST_LEASES, REACH_RETRY_BASE_MS: '100' } });
  redis = connectRedis(stack);
  const server = await startHttpServer({ onCancel: (key) => cancelled.push(key) });
  stops.push(() => server.close());
  endpointUrl = server.url;
  // At debug, so that the check below reads every line the relay writes.
  const relay = await startRelay(stack, { LOG_LEVEL: 'debug' });
  stops.push(() => relay.proc.stop());
  relayOutput = () => relay.proc.output();
}, 180_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await redis?.quit();
  await stack?.stop();
});

const submit = (body: Record<string, unknown>, waitMs?: number) =>
  http<{ task_id: string; status: string; result?: unknown; error?: string }>(
    `${stack.routerUrl}/v1/tasks${waitMs ? `?wait_ms=${waitMs}` : ''}`,
    { body },
  );
const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

const finals = (topic: string) => finalCounts(redis, stack.prefix, topic);

describe('an HTTP endpoint agent', () => {
  it('is registered by the relay and runs tasks through the router', async () => {
    await declareEndpoint(stack, 'http-echo', {
      protocol: 'http',
      url: `${endpointUrl}/echo`,
      capabilities: ['http.echo'],
      max_concurrency: 4,
    });
    await waitFor(async () => (await agentStatus(stack, 'http-echo')) === 'HEALTHY', {
      timeoutMs: 20_000,
    });
    await untilRouted(stack, 'http.echo');
    const waited = await submit({ capability: 'http.echo', payload: { n: 1 } }, 10_000);
    expect(waited.status).toBe(200);
    expect(waited.body.status).toBe('completed');
    expect(waited.body.result).toEqual({ echo: { n: 1 }, idempotency_key: waited.body.task_id });

    const pushed = await submit({ capability: 'http.echo', payload: 'two' });
    expect(pushed.status).toBe(202);
    await waitFor(async () => (await view(pushed.body.task_id)).status === 'completed');
    expect((await view(pushed.body.task_id)).result).toMatchObject({ echo: 'two' });
  });

  it('applies a changed declaration in place: a running call finishes on its first attempt', async () => {
    const sub = await submit({ capability: 'http.echo', payload: { delay_ms: 1500 } });
    await waitFor(async () => (await view(sub.body.task_id)).status === 'received');
    await declareEndpoint(stack, 'http-echo', {
      protocol: 'http',
      url: `${endpointUrl}/echo`,
      capabilities: ['http.echo'],
      max_concurrency: 6,
    });
    await waitFor(
      async () =>
        (await http<{ max_concurrency?: number }>(`${stack.registryUrl}/v1/agents/http-echo`)).body
          .max_concurrency === 6,
    );
    await waitFor(async () => (await view(sub.body.task_id)).status === 'completed');
    expect((await view(sub.body.task_id)).attempts).toBe(1);
  });

  it('aborts the call on cancel: the endpoint sees its client go', async () => {
    const sub = await submit({ capability: 'http.echo', payload: { delay_ms: 20_000 } });
    await waitFor(async () => (await view(sub.body.task_id)).status === 'received');
    const res = await http(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}/cancel`, {
      method: 'POST',
      body: {},
    });
    expect(res.status).toBe(202);
    await waitFor(async () => cancelled.includes(sub.body.task_id), { timeoutMs: 5000 });
    expect((await view(sub.body.task_id)).status).toBe('cancelled');
  });

  it('fails a task for good on a 4xx, with the status as its code', async () => {
    const sub = await submit({ capability: 'http.echo', payload: { status: 422 } });
    await waitFor(async () => (await view(sub.body.task_id)).status === 'dead');
    const v = await view(sub.body.task_id);
    expect(v.attempts).toBe(1);
    expect(JSON.stringify(v.timeline)).toContain('HTTP_422');
  });
});

describe('endpoint secrets', () => {
  it('are never shown by the API, nor written in the relay’s debug log', async () => {
    const secret = 'sk-relay-secret-4e1f9b';
    const header = 'hv-relay-secret-77c2aa';
    await declareEndpoint(stack, 'http-secret', {
      protocol: 'http',
      url: `${endpointUrl}/secret`,
      capabilities: ['http.secret'],
      bearer_secret: secret,
      headers: { 'X-Api-Key': header },
    });
    await waitFor(async () => (await agentStatus(stack, 'http-secret')) === 'HEALTHY', {
      timeoutMs: 20_000,
    });
    const res = await submit({ capability: 'http.secret', payload: { s: 1 } }, 10_000);
    expect(res.body.status).toBe('completed');
    const shown = JSON.stringify([
      (await http(`${stack.registryUrl}/v1/endpoints/http-secret`)).body,
      (await http(`${stack.registryUrl}/v1/endpoints`)).body,
    ]);
    expect(shown).toContain('X-Api-Key');
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain(header);
    const log = relayOutput();
    expect(log).toContain('http-secret');
    expect(log).not.toContain(secret);
    expect(log).not.toContain(header);
  });
});

describe('two replicas of an endpoint agent', () => {
  it('turns the killed one SUSPECT in under a second; its tasks complete on the other, one callback each', async () => {
    const a = await startEndpointProcess('http');
    const b = await startEndpointProcess('http');
    stops.push(
      () => a.proc.stop(),
      () => b.proc.stop(),
    );
    for (const [id, url] of [
      ['rep-a', a.url],
      ['rep-b', b.url],
    ] as const)
      await declareEndpoint(stack, id, {
        protocol: 'http',
        url,
        capabilities: ['rep.echo'],
        // 16 tasks, 8 slots: the survivor is saturated, and the killed one's tasks wait for it
        // rather than go back to the unreachable replica.
        max_concurrency: 4,
      });
    await untilHealthy(stack, ['rep-a', 'rep-b']);
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) {
      const sub = await submit({
        capability: 'rep.echo',
        payload: { i, delay_ms: 300 },
        callback_topic: 'rep',
        on_no_agent: 'queue',
      });
      expect(sub.status).toBe(202);
      ids.push(sub.body.task_id);
    }
    const killedAt = performance.now();
    a.proc.kill('SIGKILL');
    await waitFor(async () => (await agentStatus(stack, 'rep-a')) === 'SUSPECT', {
      timeoutMs: 5000,
      intervalMs: 20,
    });
    const suspectMs = performance.now() - killedAt;
    console.log(`endpoint replica SIGKILLed: SUSPECT after ${Math.round(suspectMs)} ms`);
    expect(suspectMs).toBeLessThan(1000);
    await waitFor(async () => (await finals('rep')).size === ids.length, { timeoutMs: 30_000 });
    const counts = await finals('rep');
    for (const id of ids) expect(counts.get(id)).toBe(1);
    for (const id of ids) expect((await view(id)).status).toBe('completed');
  }, 90_000);
});

describe('two relays', () => {
  it('loses nothing when one is SIGKILLed under load: its agents move, one callback per task', async () => {
    const second = await startRelay(stack);
    const doomed = await startRelay(stack);
    stops.push(() => second.proc.stop());
    const agents = Array.from({ length: 6 }, (_, i) => `fleet-${i}`);
    for (const id of agents)
      await declareEndpoint(stack, id, {
        protocol: 'http',
        url: `${endpointUrl}/${id}`,
        capabilities: ['fleet.echo'],
        max_concurrency: 4,
      });
    await untilHealthy(stack, agents);
    const ids: string[] = [];
    const completedAt: number[] = [];
    let killedAt = 0;
    const started = performance.now();
    for (let i = 0; i < 120; i++) {
      const sub = await submit({
        capability: 'fleet.echo',
        payload: { i, delay_ms: 20 },
        callback_topic: 'fleet',
        on_no_agent: 'queue',
      });
      expect(sub.status).toBe(202);
      ids.push(sub.body.task_id);
      if (i === 40) {
        doomed.proc.kill('SIGKILL');
        killedAt = performance.now() - started;
      }
      await new Promise((r) => setTimeout(r, 15));
    }
    await waitFor(async () => (await finals('fleet')).size === ids.length, {
      timeoutMs: 60_000,
      intervalMs: 200,
    });
    const counts = await finals('fleet');
    let duplicates = 0;
    for (const id of ids) {
      expect(counts.get(id)).toBeGreaterThanOrEqual(1);
      duplicates += (counts.get(id) ?? 0) - 1;
    }
    for (const [, fields] of await redis.xrange(stack.keys.callback('fleet'), '-', '+')) {
      const item = decodeCallback(fields);
      if (item.status === 'completed') completedAt.push(Number(item.completed_at));
    }
    completedAt.sort((x, y) => x - y);
    let stall = 0;
    for (let i = 1; i < completedAt.length; i++)
      stall = Math.max(stall, (completedAt[i] as number) - (completedAt[i - 1] as number));
    console.log(
      `relay SIGKILLed at ${Math.round(killedAt)} ms: accepted ${ids.length}, completed ${counts.size}, lost ${ids.length - counts.size}, duplicate callbacks ${duplicates}, longest stall ${stall} ms`,
    );
    expect(duplicates).toBe(0);
    for (const id of ids) expect((await view(id)).status).toBe('completed');
  }, 120_000);
});
