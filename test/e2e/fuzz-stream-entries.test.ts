/**
 * Hostile entries, generated with fast-check, in every stream a process reads that
 * malformed-entries.test.ts does not cover: an agent's control stream, the router's result-wait
 * topic, the routers' A2A push topic, a caller's callback topic, a task's events stream and the
 * fleet events stream — with members of the due set and messages on the snapshot and API-key
 * channels beside them. After each batch, everything that reads them must still work: a waited
 * submission completes (agent, control stream, wait topic), the callback topic, the task's event
 * stream, the A2A stream of the task and the console's event stream answer without a server
 * error, both services' `/livez` answer; at the end an A2A push notification is still delivered
 * and no process exited. Batches: `REACH_FUZZ_RPC_COUNT` ÷ 2 (100 in `npm test`, 1,000 in
 * `npm run fuzz`).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import fc from 'fast-check';
import pino from 'pino';
import { Redis } from 'ioredis';
import { type ReachKeys } from '@agent-reach/protocol';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startCardServer, type CardServer } from '../support/fuzz/card-server.ts';
import {
  channelMessageArb,
  dueMemberArb,
  entryArb,
  streamOf,
  type EntrySource,
  type EntryTargets,
} from '../support/fuzz/entries.ts';
import { Figures } from '../support/fuzz/figures.ts';
import type { FuzzRequest } from '../support/fuzz/requests.ts';
import { Sender } from '../support/fuzz/send.ts';
import { FUZZ_RPC_COUNT, FUZZ_SEED, saveFigures } from '../support/fuzz/settings.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const CAPABILITY = 'ent-echo';
const TOPIC = 'ent-topic';
const BATCHES = Math.max(10, Math.round(FUZZ_RPC_COUNT / 2));

let stack: Stack;
let redis: Redis;
let keys: ReachKeys;
let agent: ReachAgent;
let hooks: CardServer;
let sender: Sender;
const exits: string[] = [];

beforeAll(async () => {
  stack = await startStack();
  for (const [name, svc] of [
    ['router', stack.router],
    ['registry-sync', stack.registry],
  ] as const)
    void svc.exited.then((code) => exits.push(`${name} exited with ${code}`));
  redis = new Redis(stack.redisUrl);
  keys = stack.keys;
  hooks = await startCardServer({ capability: 'ent-decoy' });
  sender = new Sender(stack.routerUrl, 4);
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId: CAPABILITY,
    capabilities: [CAPABILITY],
    maxConcurrency: 8,
    handler: async (task) => task.payload,
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();
});

afterAll(async () => {
  sender?.close();
  await agent?.close();
  await hooks?.close();
  await redis?.quit();
  await stack?.stop();
});

/** Submits a task and waits for its result on the router's wait topic. */
async function submitWaited(id: string) {
  return http<{ status?: string; task_id?: string }>(`${stack.routerUrl}/v1/tasks?wait_ms=5000`, {
    body: { task_id: id, capability: CAPABILITY, payload: { id } },
  });
}

/** Posts one A2A JSON-RPC call at the capability's endpoint. */
async function a2a(method: string, params: unknown) {
  return http<{ result?: unknown; error?: unknown }>(`${stack.routerUrl}/a2a/${CAPABILITY}`, {
    body: { jsonrpc: '2.0', id: 1, method, params },
  });
}

/** The reads that must keep working, as fuzz requests (their outcomes judged as the fuzz's). */
function checks(taskId: string): [string, FuzzRequest][] {
  const sse = { accept: 'text/event-stream' };
  return [
    [
      'router GET /v1/callbacks/{topic}',
      { category: 'check', method: 'GET', target: `/v1/callbacks/${TOPIC}?limit=100`, headers: {} },
    ],
    [
      'router GET /v1/tasks/{task_id}/events',
      {
        category: 'check',
        method: 'GET',
        target: `/v1/tasks/${taskId}/events`,
        headers: sse,
        firstEvent: true,
      },
    ],
    [
      'router GET /v1/console/events',
      {
        category: 'check',
        method: 'GET',
        target: '/v1/console/events?backlog=500',
        headers: sse,
        firstEvent: true,
      },
    ],
    [
      'router a2a SubscribeToTask',
      {
        category: 'check',
        method: 'POST',
        target: `/a2a/${CAPABILITY}`,
        headers: { 'content-type': 'application/json' },
        body: Buffer.from(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'SubscribeToTask',
            params: { id: taskId },
          }),
        ),
        jsonrpc: true,
        expectRpc: ['result'],
      },
    ],
  ];
}

it(`hostile entries in ${BATCHES} batches: every reader keeps working, no process exits`, async () => {
  // Finished tasks to name, a wait served (its topic now exists), an A2A task with a push
  // config, and an item on a caller's topic.
  const taskIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await submitWaited(`ent-seed-${i}`);
    expect(res.body.status, JSON.stringify(res.body)).toBe('completed');
    taskIds.push(`ent-seed-${i}`);
  }
  const topical = await http(`${stack.routerUrl}/v1/tasks`, {
    body: { task_id: 'ent-topical', capability: CAPABILITY, payload: 1, callback_topic: TOPIC },
  });
  expect(topical.status).toBe(202);
  const waitKeys = await redis.keys(`${stack.prefix}:{cb:_wait.*}`);
  const waitKey = waitKeys.find((k) => !k.includes('a2a-push'));
  expect(waitKey, 'the router wait topic').toBeDefined();
  const targets: EntryTargets = {
    keys,
    agentId: CAPABILITY,
    waitTopic: (waitKey as string).slice(`${stack.prefix}:{cb:`.length, -1),
    pushTopic: '_wait.a2a-push',
    callbackTopic: TOPIC,
    taskIds,
  };
  const figures = new Figures();
  const sent: Record<EntrySource | 'due' | 'channel', number> = {
    control: 0,
    'wait-topic': 0,
    'push-topic': 0,
    'callback-topic': 0,
    'task-events': 0,
    'fleet-events': 0,
    due: 0,
    channel: 0,
  };
  let n = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(entryArb(targets), { minLength: 1, maxLength: 8 }),
      fc.array(dueMemberArb, { maxLength: 2 }),
      fc.array(channelMessageArb, { maxLength: 2 }),
      async (entries, due, messages) => {
        for (const { source, fields } of entries) {
          await redis.xadd(streamOf(source, targets), '*', ...fields);
          sent[source] += 1;
        }
        for (const member of due) await redis.zadd(keys.due(), Date.now(), member);
        for (const m of messages)
          await redis.publish(n % 2 === 0 ? keys.snapshotChannel() : keys.apiKeysChannel(), m);
        sent.due += due.length;
        sent.channel += messages.length;
        const waited = await submitWaited(`ent-after-${n++}`);
        expect(waited.body.status, JSON.stringify(waited.body)).toBe('completed');
        for (const [key, req] of checks(taskIds[n % taskIds.length] as string)) {
          const failure = figures.record(key, req, await sender.send(req));
          expect(failure).toBeUndefined();
        }
        for (const [name, url] of [
          ['router', stack.routerUrl],
          ['registry-sync', stack.registryUrl],
        ] as const) {
          const { status } = await http(`${url}/livez`);
          figures.recordLivez(name, status === 200 ? undefined : `/livez answered ${status}`);
        }
        expect(figures.failures).toEqual([]);
        expect(exits).toEqual([]);
      },
    ),
    { numRuns: BATCHES, seed: FUZZ_SEED, endOnFailure: true },
  );

  // The push forwarder still delivers: a task sent to return at once, with a webhook.
  const before = hooks.pushes();
  const pushed = await a2a('SendMessage', {
    message: { messageId: 'ent-push-after', role: 'ROLE_USER', parts: [{ text: 'after' }] },
    configuration: {
      returnImmediately: true,
      taskPushNotificationConfig: { url: `${hooks.url}/hook`, token: 't' },
    },
  });
  expect(pushed.body.error).toBeUndefined();
  await waitFor(() => hooks.pushes() > before, {
    timeoutMs: 20_000,
    message: 'a push after the hostile entries',
  });
  expect(exits).toEqual([]);
  for (const url of [stack.routerUrl, stack.registryUrl])
    expect((await http(`${url}/livez`)).status).toBe(200);

  figures.durationMs = performance.now() - figures.startedAt;
  const text = [
    figures.format(`fuzz, hostile stream entries (seed ${FUZZ_SEED}, ${BATCHES} batches)`),
    `entries written: ${Object.entries(sent)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}; service exits: ${exits.length}`,
  ].join('\n');
  console.log(text);
  saveFigures('fuzz-stream-entries', text);
}, 180_000);
