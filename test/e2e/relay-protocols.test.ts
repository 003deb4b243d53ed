/**
 * A2A and MCP endpoint agents (docs/ENDPOINTS.md): a stock A2A server and an MCP server, declared
 * by URL only, get their capabilities from the server itself (the AgentCard's skills, the MCP
 * tools with their input schemas); tasks complete through the router, with the servers' status
 * updates, artifact chunks and progress notifications as the task's progress and chunks; a cancel
 * reaches the server; and an A2A client calling the router's own A2A gateway reaches the A2A
 * endpoint agent through the queue (A2A → queue → A2A). Of two replicas of either kind, the one
 * SIGKILLed turns SUSPECT in under a second and its tasks complete on the other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startA2AServer, startMcpServer } from '@agent-reach/relay/demo';
import { waitFor } from '@agent-reach/testkit';
import {
  agentStatus,
  declareEndpoint,
  finalCounts,
  startEndpointProcess,
  startRelay,
  untilHealthy,
} from '../support/endpoints.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
const stops: (() => Promise<unknown>)[] = [];
const cancelled: string[] = [];

type TaskView = { status: string; result?: unknown; agent_id?: string };
type AgentView = { status: string; capabilities: string[] };

beforeAll(async () => {
  stack = await startStack({ env: FAST_LEASES });
  const a2a = await startA2AServer({ onCancel: (id) => cancelled.push(id) });
  const mcp = await startMcpServer({ onCancel: (id) => cancelled.push(id) });
  stops.push(
    () => a2a.close(),
    () => mcp.close(),
  );
  const relay = await startRelay(stack);
  stops.push(() => relay.proc.stop());
  await declareEndpoint(stack, 'a2a-1', { protocol: 'a2a', url: a2a.url });
  await declareEndpoint(stack, 'mcp-1', {
    protocol: 'mcp',
    url: mcp.url,
    capability_prefix: 'tools.',
  });
  await waitFor(
    async () =>
      (await agentStatus(stack, 'a2a-1')) === 'HEALTHY' &&
      (await agentStatus(stack, 'mcp-1')) === 'HEALTHY',
    { timeoutMs: 30_000 },
  );
}, 180_000);

afterAll(async () => {
  for (const stop of stops.reverse()) await stop().catch(() => undefined);
  await stack?.stop();
});

const submit = (body: Record<string, unknown>, waitMs?: number) =>
  http<{ task_id: string; status: string; result?: unknown }>(
    `${stack.routerUrl}/v1/tasks${waitMs ? `?wait_ms=${waitMs}` : ''}`,
    { body },
  );
const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

/** The event names of a finished task's events stream (`stage`, `progress`, `chunk`). */
async function eventsOf(taskId: string): Promise<{ event: string; data: unknown }[]> {
  const res = await fetch(`${stack.routerUrl}/v1/tasks/${taskId}/events`);
  const text = await res.text();
  const out: { event: string; data: unknown }[] = [];
  for (const block of text.split('\n\n')) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event && data) out.push({ event, data: JSON.parse(data) as unknown });
  }
  return out;
}

describe('an A2A endpoint agent', () => {
  it('serves the skills of its AgentCard', async () => {
    const agent = (await http<AgentView>(`${stack.registryUrl}/v1/agents/a2a-1`)).body;
    expect(agent.capabilities).toEqual(['summarize']);
    const card = await http(`${stack.registryUrl}/v1/agents/a2a-1/card`);
    expect(card.status).toBe(200);
  });

  it('runs a task: status updates become progress, artifact chunks become chunks', async () => {
    const text = 'one two three four five six seven eight nine ten eleven twelve thirteen';
    const res = await submit({ capability: 'summarize', payload: { text } }, 15_000);
    expect(res.body.status).toBe('completed');
    expect(res.body.result).toEqual({
      text: 'one two three four five six seven eight nine ten eleven twelve …',
    });
    const events = await eventsOf(res.body.task_id);
    expect(events.filter((e) => e.event === 'progress').length).toBeGreaterThanOrEqual(1);
    expect(events.filter((e) => e.event === 'chunk').length).toBe(2);
  });

  it('sends CancelTask when the task is cancelled', async () => {
    const sub = await submit({ capability: 'summarize', payload: { text: 'x', delay_ms: 20_000 } });
    await waitFor(async () => (await view(sub.body.task_id)).status === 'received');
    // Under way on the A2A server: its status update is out before the wait.
    await new Promise((r) => setTimeout(r, 300));
    const res = await http(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}/cancel`, {
      method: 'POST',
      body: {},
    });
    expect(res.status).toBe(202);
    await waitFor(async () => cancelled.includes(sub.body.task_id), { timeoutMs: 5000 });
  });

  it('is reached through the router’s A2A gateway: A2A → queue → A2A', async () => {
    const res = await http<{
      result?: { task?: { status: { state: string }; artifacts: unknown[] } };
    }>(`${stack.routerUrl}/a2a/summarize`, {
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'SendMessage',
        params: {
          message: {
            messageId: 'gateway-1',
            role: 'ROLE_USER',
            parts: [{ data: { text: 'alpha beta gamma' } }],
          },
          configuration: { blocking: true },
        },
      },
    });
    expect(res.status).toBe(200);
    const task = res.body.result?.task;
    expect(task?.status.state).toBe('TASK_STATE_COMPLETED');
    expect(JSON.stringify(task?.artifacts)).toContain('alpha beta gamma');
    expect((await view('gateway-1')).agent_id).toBe('a2a-1');
  });
});

describe('an MCP endpoint agent', () => {
  it('serves its tools under the prefix, with their input schemas', async () => {
    const agent = (await http<AgentView>(`${stack.registryUrl}/v1/agents/mcp-1`)).body;
    expect(agent.capabilities).toEqual(['tools.word_count']);
    // The router's own MCP server offers the capability as a tool with the server's schema.
    const client = new Client({ name: 'e2e-relay', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.routerUrl}/mcp`)));
    try {
      const { tools } = await client.listTools();
      const tool = tools.find((t) => t.name.includes('tools.word_count'));
      expect(JSON.stringify(tool?.inputSchema)).toContain('progress_steps');
    } finally {
      await client.close();
    }
  });

  it('runs a tool call: progress notifications become progress', async () => {
    const res = await submit(
      {
        capability: 'tools.word_count',
        payload: { text: 'to be or not to be', progress_steps: 3, delay_ms: 60 },
      },
      15_000,
    );
    expect(res.body.status).toBe('completed');
    expect(res.body.result).toMatchObject({ words: 6 });
    const events = await eventsOf(res.body.task_id);
    expect(events.filter((e) => e.event === 'progress').length).toBe(3);
  });

  it('sends notifications/cancelled when the task is cancelled', async () => {
    const sub = await submit({
      capability: 'tools.word_count',
      payload: { text: 'x', delay_ms: 20_000 },
    });
    await waitFor(async () => (await view(sub.body.task_id)).status === 'received');
    await new Promise((r) => setTimeout(r, 300));
    const before = cancelled.length;
    const res = await http(`${stack.routerUrl}/v1/tasks/${sub.body.task_id}/cancel`, {
      method: 'POST',
      body: {},
    });
    expect(res.status).toBe(202);
    await waitFor(async () => cancelled.length > before, { timeoutMs: 5000 });
  });
});

describe('two replicas of an A2A or MCP endpoint agent', () => {
  const cases = [
    {
      kind: 'a2a',
      prefix: 'ra.',
      capability: 'ra.summarize',
      payload: { text: 'a b c', delay_ms: 200 },
    },
    {
      kind: 'mcp',
      prefix: 'rm.',
      capability: 'rm.word_count',
      payload: { text: 'a b c', delay_ms: 200 },
    },
  ] as const;
  for (const c of cases) {
    it(`${c.kind}: the killed one is SUSPECT in under a second; its tasks complete on the other, one callback each`, async () => {
      const redis: TestRedis = connectRedis(stack);
      stops.push(() => redis.quit());
      const a = await startEndpointProcess(c.kind);
      const b = await startEndpointProcess(c.kind);
      stops.push(
        () => a.proc.stop(),
        () => b.proc.stop(),
      );
      const ids = [`${c.kind}-rep-a`, `${c.kind}-rep-b`];
      await declareEndpoint(stack, ids[0] as string, {
        protocol: c.kind,
        url: a.url,
        capability_prefix: c.prefix,
        max_concurrency: 16,
      });
      await declareEndpoint(stack, ids[1] as string, {
        protocol: c.kind,
        url: b.url,
        capability_prefix: c.prefix,
        max_concurrency: 16,
      });
      await untilHealthy(stack, ids, 30_000);
      const topic = `rep-${c.kind}`;
      const tasks: string[] = [];
      for (let i = 0; i < 12; i++) {
        const sub = await submit({
          capability: c.capability,
          payload: c.payload,
          callback_topic: topic,
        });
        expect(sub.status).toBe(202);
        tasks.push(sub.body.task_id);
      }
      const killedAt = performance.now();
      a.proc.kill('SIGKILL');
      await waitFor(async () => (await agentStatus(stack, ids[0] as string)) === 'SUSPECT', {
        timeoutMs: 5000,
        intervalMs: 20,
      });
      const suspectMs = performance.now() - killedAt;
      console.log(
        `${c.kind} endpoint replica SIGKILLed: SUSPECT after ${Math.round(suspectMs)} ms`,
      );
      expect(suspectMs).toBeLessThan(1000);
      const finals = () => finalCounts(redis, stack.prefix, topic);
      await waitFor(async () => (await finals()).size === tasks.length, { timeoutMs: 30_000 });
      const counts = await finals();
      for (const id of tasks) {
        expect(counts.get(id)).toBe(1);
        expect((await view(id)).status).toBe('completed');
      }
    }, 90_000);
  }
});
