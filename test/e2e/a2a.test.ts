/**
 * The A2A gateway on the router, driven by the A2A SDK's own client: the fleet's card lists the
 * live capability and its own card points at /a2a/<capability>; a blocking SendMessage returns
 * the completed task with the echo as its result artifact; SendStreamingMessage streams the
 * agent's chunks and ends completed; CancelTask cancels a running task; GetTask reads a task's
 * state and artifacts; the A2A 0.3 method names answer too. API keys are required: a call
 * without a key is 401, and another tenant's key sees neither the capability nor the task. A task
 * sent with a push-notification config is pushed, completed with its result, to a webhook the
 * test serves on loopback (allowed with keys required by REACH_OUTBOUND_LOOPBACK=on), with the
 * config's token; configs are read, listed and deleted; a webhook on a host that is neither
 * loopback nor allowed is refused.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { TaskState, type Part, type StreamResponse, type Task } from '@a2a-js/sdk';
import {
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  type Client,
} from '@a2a-js/sdk/client';
import { waitFor } from '@agent-reach/testkit';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { seedNodes } from '../support/redis.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-a2a-${'k'.repeat(40)}`;
const CAPABILITY = 'a2a-echo';

let stack: Stack;
let agent: ReachAgent | undefined;
/** A caller key of another tenant than the admin key's. */
let otherKey: string;

beforeAll(async () => {
  // Keys required, as off loopback: the cards say so and a call without a key is 401. The test's
  // webhook is on loopback: the operator's opt-in allows it.
  stack = await startStack({
    env: { REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN, REACH_OUTBOUND_LOOPBACK: 'on' },
  });
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    ...(stack.redisClusterNodes
      ? { redisConnection: { clusterNodes: seedNodes(stack.redisClusterNodes) } }
      : {}),
    apiKey: ADMIN,
    agentId: 'a2a-echo-1',
    capabilities: [CAPABILITY],
    maxConcurrency: 4,
    handler: async (t) => {
      const payload = t.payload as { stream?: string; hold?: boolean };
      if (payload.hold) {
        // Runs until cancelled.
        await new Promise<void>((resolve) => t.signal.addEventListener('abort', () => resolve()));
        return null;
      }
      if (typeof payload.stream === 'string')
        for (const word of payload.stream.split(' ')) t.stream(`${word} `);
      return t.payload;
    },
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();
  const made = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body: { tenant: 'a2a-other', role: 'caller' },
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(made.status).toBe(201);
  otherKey = made.body.key;
  // The router sees the agent once a snapshot lists it.
  await waitFor(async () => {
    const res = await fetch(`${stack.routerUrl}/a2a/${CAPABILITY}/.well-known/agent-card.json`);
    await res.text();
    return res.status === 200;
  });
});

afterAll(async () => {
  await agent?.close();
  await stack?.stop();
});

/** A fetch that sends `key` as the bearer token. */
const keyed =
  (key: string): typeof fetch =>
  (input, init) =>
    fetch(input, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), authorization: `Bearer ${key}` },
    });

const data = (value: unknown): Part => ({
  content: { $case: 'data', value },
  metadata: undefined,
  filename: '',
  mediaType: 'application/json',
});

let counter = 0;
/** A user message of the given parts, with a fresh id. */
function message(parts: Part[]) {
  counter += 1;
  return {
    messageId: `a2a-msg-${Date.now()}-${counter}`,
    contextId: '',
    taskId: '',
    role: 1,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

/** A push-notification config of `url` with `token` (its id and task set by the router). */
const pushConfig = (url: string, token: string, taskId = '') => ({
  tenant: '',
  id: '',
  taskId,
  url,
  token,
  authentication: undefined,
});

function sendRequest(
  parts: Part[],
  returnImmediately = false,
  push?: ReturnType<typeof pushConfig>,
) {
  return {
    tenant: '',
    message: message(parts),
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: push,
      returnImmediately,
    },
    metadata: undefined,
  };
}

const asTask = (result: unknown): Task => {
  expect(result).toHaveProperty('status');
  return result as Task;
};

const resultOf = (task: Task): unknown => {
  const part = task.artifacts.find((a) => a.artifactId === 'result')?.parts[0];
  return part?.content?.$case === 'data' ? part.content.value : part?.content?.value;
};

/** The SDK's client of an endpoint, from its card, sending `key` (the admin key by default). */
async function client(base: string, key = ADMIN): Promise<Client> {
  const fetchImpl = keyed(key);
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ fetchImpl })],
    cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
  });
  return factory.createFromUrl(base);
}

describe('A2A gateway', () => {
  it('discovers the fleet card and a capability card; an unknown capability is 404', async () => {
    const resolver = new DefaultAgentCardResolver();
    const fleet = await resolver.resolve(`${stack.routerUrl}/`);
    expect(fleet.skills.map((s) => s.id)).toContain(CAPABILITY);
    expect(fleet.supportedInterfaces[0]?.url).toBe(`${stack.routerUrl}/a2a`);
    const own = await resolver.resolve(`${stack.routerUrl}/a2a/${CAPABILITY}/`);
    expect(own.skills.map((s) => s.id)).toEqual([CAPABILITY]);
    expect(own.supportedInterfaces[0]).toMatchObject({
      url: `${stack.routerUrl}/a2a/${CAPABILITY}`,
      protocolBinding: 'JSONRPC',
      protocolVersion: '1.0',
    });
    expect(own.capabilities?.streaming).toBe(true);
    const unknown = await http(`${stack.routerUrl}/a2a/no-such-cap/.well-known/agent-card.json`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('CAPABILITY_NOT_FOUND');
  });

  it('a blocking SendMessage returns the completed task with the echo; GetTask reads it again', async () => {
    const a2a = await client(`${stack.routerUrl}/a2a/${CAPABILITY}/`);
    const task = asTask(await a2a.sendMessage(sendRequest([data({ hello: 'world' })])));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resultOf(task)).toEqual({ hello: 'world' });
    const again = await a2a.getTask({ tenant: '', id: task.id });
    expect(again.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(resultOf(again)).toEqual({ hello: 'world' });
    // Text parts are the payload {text}.
    const text = asTask(
      await a2a.sendMessage({
        ...sendRequest([]),
        message: message([
          {
            content: { $case: 'text', value: 'hi' },
            metadata: undefined,
            filename: '',
            mediaType: '',
          },
        ]),
      }),
    );
    expect(resultOf(text)).toEqual({ text: 'hi' });
  });

  it('SendStreamingMessage streams the chunks and ends completed', async () => {
    const a2a = await client(`${stack.routerUrl}/a2a/${CAPABILITY}/`);
    const events: StreamResponse[] = [];
    for await (const e of a2a.sendMessageStream(sendRequest([data({ stream: 'one two three' })])))
      events.push(e);
    expect(events[0]?.payload?.$case).toBe('task');
    const chunks = events.flatMap((e) =>
      e.payload?.$case === 'artifactUpdate' && e.payload.value.artifact?.artifactId === 'output'
        ? e.payload.value.artifact.parts.map((p) => p.content?.value as string)
        : [],
    );
    expect(chunks.join('')).toBe('one two three ');
    const last = events[events.length - 1]?.payload;
    expect(last?.$case).toBe('statusUpdate');
    if (last?.$case === 'statusUpdate')
      expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it('CancelTask cancels a running task; GetTask then says canceled', async () => {
    const a2a = await client(`${stack.routerUrl}/a2a/${CAPABILITY}/`);
    const task = asTask(await a2a.sendMessage(sendRequest([data({ hold: true })], true)));
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(
      task.status?.state,
    );
    await waitFor(async () => {
      const t = await a2a.getTask({ tenant: '', id: task.id });
      return (t.metadata?.agent_reach as { status?: string } | undefined)?.status === 'received';
    });
    const cancelled = await a2a.cancelTask({ tenant: '', id: task.id, metadata: undefined });
    expect(cancelled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const read = await a2a.getTask({ tenant: '', id: task.id });
    expect(read.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(a2a.getTask({ tenant: '', id: 'no-such-task' })).rejects.toThrow();
  });

  it('answers the A2A 0.3 method names', async () => {
    const reply = await http<{ result?: { kind?: string; status?: { state?: string } } }>(
      `${stack.routerUrl}/a2a/${CAPABILITY}`,
      {
        body: {
          jsonrpc: '2.0',
          id: 1,
          method: 'message/send',
          params: {
            message: {
              kind: 'message',
              role: 'user',
              messageId: `legacy-${Date.now()}`,
              parts: [{ kind: 'text', text: 'hello' }],
            },
            configuration: { blocking: true },
          },
        },
        headers: { authorization: `Bearer ${ADMIN}` },
      },
    );
    expect(reply.status).toBe(200);
    expect(reply.body.result?.status?.state).toBe('completed');
  });

  it('a call without a key is 401; the cards require the key; another tenant cannot see the task', async () => {
    const bare = await http(`${stack.routerUrl}/a2a/${CAPABILITY}`, {
      body: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'x' } },
    });
    expect(bare.status).toBe(401);
    expect(bare.body.error).toBe('UNAUTHORIZED');
    const a2a = await client(`${stack.routerUrl}/a2a/${CAPABILITY}/`);
    const card = await a2a.getAgentCard();
    expect(card.securityRequirements.length).toBeGreaterThan(0);
    const task = asTask(await a2a.sendMessage(sendRequest([data({ mine: true })])));
    expect(resultOf(task)).toEqual({ mine: true });
    // The other tenant's card lists no capability (the agent serves the admin key's tenant).
    const other = await client(`${stack.routerUrl}/`, otherKey);
    expect((await other.getAgentCard()).skills).toEqual([]);
    await expect(other.getTask({ tenant: '', id: task.id })).rejects.toThrow(
      /is unknown or has expired/,
    );
  });

  it('pushes the completed task to the webhook of its push config, with the token; configs are read, listed, deleted; other hosts are refused', async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const hook: Server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`;
      const a2a = await client(`${stack.routerUrl}/a2a/${CAPABILITY}/`);
      expect((await a2a.getAgentCard()).capabilities?.pushNotifications).toBe(true);
      const sent = asTask(
        await a2a.sendMessage(
          sendRequest([data({ pushed: 1 })], true, pushConfig(url, 'token-of-the-test')),
        ),
      );
      const push = await waitFor(async () => received.find((r) => r.body.includes(sent.id)));
      expect(push.headers['x-a2a-notification-token']).toBe('token-of-the-test');
      expect(push.headers['content-type']).toBe('application/a2a+json');
      const body = JSON.parse(push.body) as {
        task: { id: string; status: { state: string }; artifacts: { parts: unknown[] }[] };
      };
      expect(body.task.id).toBe(sent.id);
      expect(body.task.status.state).toBe('TASK_STATE_COMPLETED');
      expect(body.task.artifacts[0]?.parts[0]).toMatchObject({ data: { pushed: 1 } });

      // The config the send carried, and one made afterwards: read, listed, deleted.
      const listed = await a2a.listTaskPushNotificationConfig({
        tenant: '',
        taskId: sent.id,
        pageSize: 0,
        pageToken: '',
      });
      expect(listed.configs.map((c) => c.url)).toEqual([url]);
      const made = await a2a.createTaskPushNotificationConfig(
        pushConfig(`${url}?second`, 'second', sent.id),
      );
      expect(made.id).not.toBe('');
      expect(made.taskId).toBe(sent.id);
      const read = await a2a.getTaskPushNotificationConfig({
        tenant: '',
        taskId: sent.id,
        id: made.id,
      });
      expect(read.token).toBe('second');
      await a2a.deleteTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: made.id });
      await expect(
        a2a.getTaskPushNotificationConfig({ tenant: '', taskId: sent.id, id: made.id }),
      ).rejects.toThrow();
      // Another tenant finds no task to configure.
      const other = await client(`${stack.routerUrl}/`, otherKey);
      await expect(
        other.createTaskPushNotificationConfig(pushConfig(url, 'x', sent.id)),
      ).rejects.toThrow(/is unknown or has expired/);

      // The 1.0 JSON form as docs/A2A.md sends it by curl.
      const raw = await http<{ result?: { id?: string; url?: string } }>(
        `${stack.routerUrl}/a2a/${CAPABILITY}`,
        {
          body: {
            jsonrpc: '2.0',
            id: 4,
            method: 'CreateTaskPushNotificationConfig',
            params: { taskId: sent.id, url, token: 'raw' },
          },
          headers: { authorization: `Bearer ${ADMIN}` },
        },
      );
      expect(raw.body.result?.url).toBe(url);
      await a2a.deleteTaskPushNotificationConfig({
        tenant: '',
        taskId: sent.id,
        id: raw.body.result?.id ?? '',
      });

      // The A2A 0.3 names: set, list, delete.
      const legacy = (method: string, params: unknown) =>
        http<{ result?: unknown; error?: unknown }>(`${stack.routerUrl}/a2a/${CAPABILITY}`, {
          body: { jsonrpc: '2.0', id: 1, method, params },
          headers: { authorization: `Bearer ${ADMIN}` },
        });
      const set = await legacy('tasks/pushNotificationConfig/set', {
        taskId: sent.id,
        pushNotificationConfig: { id: 'legacy', url, token: 'legacy-token' },
      });
      expect(set.body.result).toMatchObject({
        taskId: sent.id,
        pushNotificationConfig: { id: 'legacy', url },
      });
      const legacyList = await legacy('tasks/pushNotificationConfig/list', { id: sent.id });
      expect(legacyList.body.result).toHaveLength(2);
      const deleted = await legacy('tasks/pushNotificationConfig/delete', {
        id: sent.id,
        pushNotificationConfigId: 'legacy',
      });
      expect(deleted.body.error).toBeUndefined();

      // A host that is neither loopback nor in REACH_A2A_PUSH_HOSTS is refused, before sending.
      await expect(
        a2a.createTaskPushNotificationConfig(
          pushConfig('http://hooks.example.com/hook', 'x', sent.id),
        ),
      ).rejects.toThrow(/PUSH_URL_NOT_ALLOWED/);
      await expect(
        a2a.sendMessage(
          sendRequest([data({ never: 1 })], true, pushConfig('http://10.0.0.1/hook', 'x')),
        ),
      ).rejects.toThrow(/PUSH_URL_NOT_ALLOWED/);
    } finally {
      await new Promise((resolve) => hook.close(resolve));
    }
  });
});
