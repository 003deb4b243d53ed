/**
 * A2A calls that name a task by something that is not a task id — `""`, `a{b}`, `x y`, 200
 * characters, a number — sent with a caller key limited to 5 requests a second, as any caller
 * could: each is answered invalid params (-32602), a well-formed id nobody submitted is answered
 * task-not-found (-32001), and the router goes on serving (these calls used to end the process a
 * few seconds after their answer): it stays up, answers /livez, a task sent through A2A
 * afterwards completes, and no promise they started rejected with nobody waiting for it.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pino from 'pino';
import { waitFor } from '@agent-reach/testkit';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { seedNodes } from '../support/redis.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = `admin-a2a-ids-${'k'.repeat(40)}`;
const CAPABILITY = 'a2a-ids-echo';
/** The methods that read a task by its id, with the protocol version each name belongs to. */
const BY_ID = [
  { method: 'GetTask', version: '1.0' },
  { method: 'SubscribeToTask', version: '1.0' },
  { method: 'CancelTask', version: '1.0' },
  { method: 'tasks/get', version: '0.3' },
  { method: 'tasks/resubscribe', version: '0.3' },
  { method: 'tasks/cancel', version: '0.3' },
];
const PUSH_BY_TASK = [
  { method: 'GetTaskPushNotificationConfig', version: '1.0', params: { id: 'c1' } },
  { method: 'ListTaskPushNotificationConfigs', version: '1.0', params: {} },
  { method: 'DeleteTaskPushNotificationConfig', version: '1.0', params: { id: 'c1' } },
];
const BAD_IDS: unknown[] = ['', 'a{b}', 'x y', 'y'.repeat(200), 'acme/', 'a/b/c'];

let stack: Stack;
let agent: ReachAgent | undefined;
let callerKey: string;
let exits: string[];

beforeAll(async () => {
  stack = await startStack({ env: { REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN } });
  exits = [];
  void stack.router.exited.then((code) => exits.push(`router exited with ${code}`));
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    ...(stack.redisClusterNodes
      ? { redisConnection: { clusterNodes: seedNodes(stack.redisClusterNodes) } }
      : {}),
    apiKey: ADMIN,
    agentId: 'a2a-ids-echo-1',
    capabilities: [CAPABILITY],
    maxConcurrency: 2,
    handler: async (t) => t.payload,
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();
  const made = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body: { tenant: 'default', role: 'caller', rate_per_s: 5 },
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(made.status).toBe(201);
  callerKey = made.body.key;
  await waitFor(async () => {
    const res = await fetch(`${stack.routerUrl}/a2a/${CAPABILITY}/.well-known/agent-card.json`, {
      headers: { authorization: `Bearer ${callerKey}` },
    });
    await res.text();
    return res.status === 200;
  });
}, 60_000);

afterAll(async () => {
  await agent?.close();
  await stack?.stop();
});

interface RpcReply {
  error?: { code: number; message: string };
  result?: { task?: { id?: string; status?: { state?: string } } };
}

/** One JSON-RPC call with the caller key, sent again after a 429 (the key's 5 requests/s). */
async function rpc(method: string, version: string, params: unknown): Promise<RpcReply> {
  for (;;) {
    const res = await fetch(`${stack.routerUrl}/a2a/${CAPABILITY}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${callerKey}`,
        'content-type': 'application/json',
        'a2a-version': version,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    const text = await res.text();
    if (res.status === 429) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    expect(res.status, `${method}: ${text}`).toBeLessThan(500);
    // A streaming method's error comes as the first event of its stream.
    const json = text.startsWith('data:') ? text.slice(5).split('\n')[0]! : text;
    return JSON.parse(json) as RpcReply;
  }
}

it('answers a malformed task id with invalid params and an unknown one with task-not-found', async () => {
  for (const { method, version } of BY_ID) {
    for (const id of BAD_IDS) {
      const reply = await rpc(method, version, { id });
      expect(reply.error?.code, `${method} ${JSON.stringify(id)}`).toBe(-32602);
    }
    const unknown = await rpc(method, version, { id: 'never-submitted-1' });
    expect(unknown.error?.code, `${method} of an unknown task`).toBe(-32001);
  }
  for (const { method, version, params } of PUSH_BY_TASK) {
    for (const taskId of BAD_IDS) {
      const reply = await rpc(method, version, { ...params, taskId });
      expect(reply.error?.code, `${method} ${JSON.stringify(taskId)}`).toBe(-32602);
    }
  }
}, 120_000);

/** `reach_unhandled_rejections_total` of the router process (docs/OPERATIONS.md, "Crashes"). */
async function unhandledRejections(): Promise<number> {
  const res = await fetch(`${stack.routerUrl}/metrics`, {
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const found = /^reach_unhandled_rejections_total\{[^}]*\} (\d+)$/m.exec(text);
  expect(found, 'reach_unhandled_rejections_total in /metrics').not.toBeNull();
  return Number(found?.[1]);
}

it('goes on serving after them: the process stays up, an A2A task completes, nothing rejected unheard', async () => {
  // The crash came from a read those calls started and nobody awaited, rejecting after the
  // answer; the process guard now counts such a rejection instead of exiting. The task sent
  // below goes through the same connection after every read they started, so by its answer
  // each of those has settled, and any that rejected unheard is counted.
  expect(exits).toEqual([]);
  expect((await fetch(`${stack.routerUrl}/livez`)).status).toBe(200);
  const sent = await rpc('SendMessage', '1.0', {
    message: {
      messageId: 'after-bad-ids-1',
      role: 'ROLE_USER',
      parts: [{ text: 'still here' }],
    },
  });
  expect(sent.error, JSON.stringify(sent)).toBeUndefined();
  expect(sent.result?.task?.status?.state, JSON.stringify(sent)).toBe('TASK_STATE_COMPLETED');
  expect(await unhandledRejections()).toBe(0);
  expect(exits).toEqual([]);
}, 60_000);
