/**
 * The MCP server driven by the MCP SDK's own client, against a running stack with API keys
 * required: over Streamable HTTP at the router's /mcp, and over stdio through `npx reach mcp`
 * from the repo root. Tools list the capability tool with its registered input schema; tasks run,
 * are read, cancelled and their timeline read as a resource.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ReachAgent } from '@agent-reach/worker-sdk';
import { startAgent } from '../support/agents.ts';
import { startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-mcp-${'k'.repeat(40)}`;
const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
// A colon is a capability character but not a tool-name one: the tool name sanitizes it.
const echo = `mcp:echo-${suffix}`;
const echoTool = `run_mcp_echo-${suffix}`;
const slow = `mcp-slow-${suffix}`;
const agentId = `mcp-agent-${suffix}`;
const ECHO_SCHEMA = {
  type: 'object',
  properties: { text: { type: 'string', description: 'What to echo' } },
  required: ['text'],
};
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

let stack: Stack;
let agent: ReachAgent;
const clients: Client[] = [];

/** The JSON a tool answered, and whether it was an error. */
async function call(client: Client, name: string, args: Record<string, unknown>) {
  const res = await client.callTool({ name, arguments: args });
  return { body: res.structuredContent as Record<string, unknown>, isError: res.isError === true };
}

async function httpClient(key = ADMIN): Promise<Client> {
  const client = new Client({ name: 'e2e-http', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${stack.routerUrl}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  clients.push(client);
  return client;
}

beforeAll(async () => {
  stack = await startStack({ env: { REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN } });
  agent = await startAgent(
    stack,
    agentId,
    [echo, slow],
    async (task) => {
      if (task.capability === echo) return task.payload;
      // Runs until cancelled.
      await new Promise((resolve) => task.signal.addEventListener('abort', resolve));
      return null;
    },
    { apiKey: ADMIN, inputSchemas: { [echo]: ECHO_SCHEMA } },
  );
});

afterAll(async () => {
  for (const client of clients) await client.close();
  await agent?.close();
  await stack?.stop();
});

describe('MCP over Streamable HTTP (/mcp)', () => {
  it('refuses a request without a key (401 UNAUTHORIZED), and GET (405)', async () => {
    const res = await fetch(`${stack.routerUrl}/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'UNAUTHORIZED' });
    // Stateless: no server-sent stream to open.
    const get = await fetch(`${stack.routerUrl}/mcp`, {
      headers: { authorization: `Bearer ${ADMIN}`, accept: 'text/event-stream' },
    });
    expect(get.status).toBe(405);
    expect(await get.json()).toMatchObject({ error: 'METHOD_NOT_ALLOWED' });
  });

  it('lists the tools, the capability tool with its registered input schema', async () => {
    const client = await httpClient();
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['submit_task', 'get_task', 'cancel_task', 'list_agents', echoTool]),
    );
    expect(tools.find((t) => t.name === echoTool)?.inputSchema).toEqual(ECHO_SCHEMA);
    // A capability registered without a schema takes any object.
    expect(tools.find((t) => t.name === `run_${slow}`)?.inputSchema).toMatchObject({
      type: 'object',
    });
  });

  it('runs a capability tool, submits with wait, gets the task and reads its timeline', async () => {
    const client = await httpClient();
    const run = await call(client, echoTool, { text: 'hello' });
    expect(run).toMatchObject({
      isError: false,
      body: { status: 'completed', result: { text: 'hello' } },
    });

    const submitted = await call(client, 'submit_task', {
      capability: echo,
      payload: { text: 'waited' },
      wait_ms: 20_000,
    });
    expect(submitted.body).toMatchObject({ status: 'completed', result: { text: 'waited' } });
    const taskId = submitted.body.task_id as string;

    const got = await call(client, 'get_task', { task_id: taskId });
    expect(got.body).toMatchObject({ task_id: taskId, status: 'completed' });

    const { contents } = await client.readResource({ uri: `reach://tasks/${taskId}/timeline` });
    const first = contents[0];
    const text = first !== undefined && 'text' in first ? first.text : '';
    const timeline = JSON.parse(text) as { stages: { stage: string }[] };
    expect(timeline.stages.map((s) => s.stage)).toEqual(
      expect.arrayContaining(['accepted', 'sent', 'completed']),
    );

    const agents = await call(client, 'list_agents', { capability: echo });
    expect((agents.body.agents as { agent_id: string }[]).map((a) => a.agent_id)).toEqual([
      agentId,
    ]);
  });

  it('cancels a running task; an unknown task is an error result with its code', async () => {
    const client = await httpClient();
    const submitted = await call(client, 'submit_task', { capability: slow, payload: {} });
    const taskId = submitted.body.task_id as string;
    const cancelled = await call(client, 'cancel_task', { task_id: taskId });
    expect(cancelled.body).toMatchObject({ task_id: taskId, status: 'cancelled' });
    const unknown = await call(client, 'get_task', { task_id: `nope-${suffix}` });
    expect(unknown).toMatchObject({ isError: true, body: { error: 'TASK_NOT_FOUND' } });
  });

  it("shows another tenant's key neither the capability tool nor the task", async () => {
    const made = await fetch(`${stack.routerUrl}/v1/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({ tenant: `other-${suffix}`, role: 'caller' }),
    });
    expect(made.status).toBe(201);
    const { key } = (await made.json()) as { key: string };
    const mine = await call(await httpClient(), 'submit_task', { capability: echo, payload: {} });
    const other = await httpClient(key);
    const { tools } = await other.listTools();
    expect(tools.map((t) => t.name)).not.toContain(echoTool);
    const got = await call(other, 'get_task', { task_id: mine.body.task_id });
    expect(got).toMatchObject({ isError: true, body: { error: 'TASK_NOT_FOUND' } });
  });
});

describe('MCP over stdio (npx reach mcp)', () => {
  it('answers tools/list and runs a task through the router', async () => {
    const client = new Client({ name: 'e2e-stdio', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: 'npx',
        args: ['--no-install', 'reach', 'mcp'],
        cwd: repoRoot,
        env: {
          ...(process.env as Record<string, string>),
          REACH_ROUTER_URL: stack.routerUrl,
          REACH_KEY: ADMIN,
        },
        stderr: 'pipe',
      }),
    );
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.find((t) => t.name === echoTool)?.inputSchema).toEqual(ECHO_SCHEMA);
    const run = await call(client, echoTool, { text: 'over stdio' });
    expect(run.body).toMatchObject({ status: 'completed', result: { text: 'over stdio' } });
  });
});

describe('input_schemas at registration', () => {
  it('refuses a schema that is not an object schema (400 INVALID_INPUT_SCHEMA)', async () => {
    const res = await fetch(`${stack.registryUrl}/v1/agents/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN}` },
      body: JSON.stringify({
        agent_id: `mcp-bad-${suffix}`,
        capabilities: [echo],
        max_concurrency: 1,
        input_schemas: { [echo]: { type: 'string' } },
      }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: 'INVALID_INPUT_SCHEMA' });
  });
});
