/**
 * Webhook callbacks on two routers, keys required (loopback receivers allowed by
 * REACH_OUTBOUND_LOOPBACK=on), a compressed retry schedule (three retries 200 ms apart): a task
 * with callback_url is POSTed to a local receiver that verifies the Standard Webhooks signature
 * with the standardwebhooks package, and its callback_topic gets the result too; a receiver that
 * fails three times then accepts gets four tries with one webhook-id and accepts once; a
 * `stream: true` task's progress and chunks arrive numbered; a delivery that gives up is listed
 * by GET /v1/webhooks/failures (not to another tenant) and re-sent; a bad callback_url, or a
 * tenant without a secret, is refused with its code; a router SIGKILLed mid-delivery loses none.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Webhook } from 'standardwebhooks';
import { onFreePort, waitFor, type ServiceProcess } from '@agent-reach/testkit';
import { ReachAgent } from '@agent-reach/worker-sdk';
import { connectRedis, seedNodes } from '../support/redis.ts';
import {
  FAST_LEASES,
  http,
  lastLines,
  startRouter,
  startStack,
  type Stack,
} from '../support/stack.ts';

const ADMIN = `admin-webhooks-${'k'.repeat(40)}`;
const CAPABILITY = 'wh-echo';

/** One request the receiver got. */
interface Hit {
  path: string;
  id: string;
  body: { type: string; data: Record<string, unknown> & { task_id: string; seq: number } };
  verified: boolean;
  answered: number;
  raw: string;
  headers: Record<string, string>;
}

let stack: Stack;
let router2: ServiceProcess | undefined;
let router2Url = '';
let agent: ReachAgent | undefined;
let receiver: Server;
let base = '';
const key: Record<string, string> = {};
const secret: Record<string, string> = {};
const hits: Hit[] = [];
/** Per path: how to answer (a status, or `hold` to answer only when released). */
const answer = new Map<string, number | 'hold'>();
const held: { res: ServerResponse; hit: Hit; closed: boolean }[] = [];
/** Requests whose connection closed before they were answered (their router died). */
let cutOff = 0;
const failFirst = new Map<string, number>();

function handle(req: IncomingMessage, res: ServerResponse, text: string): void {
  const path = req.url ?? '';
  const headers = {
    'webhook-id': String(req.headers['webhook-id'] ?? ''),
    'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
    'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
  };
  let verified: boolean;
  try {
    new Webhook(secret.acme as string).verify(text, headers);
    verified = true;
  } catch {
    verified = false;
  }
  const hit: Hit = {
    path,
    id: headers['webhook-id'],
    body: JSON.parse(text) as Hit['body'],
    verified,
    answered: 0,
    raw: text,
    headers,
  };
  hits.push(hit);
  const left = failFirst.get(path) ?? 0;
  const how = left > 0 ? 500 : (answer.get(path) ?? 200);
  if (left > 0) failFirst.set(path, left - 1);
  if (how === 'hold') {
    const entry = { res, hit, closed: false };
    req.socket.on('close', () => {
      if (!res.writableEnded) {
        entry.closed = true;
        cutOff += 1;
      }
    });
    held.push(entry);
    return;
  }
  hit.answered = how;
  res.writeHead(how).end();
}

const submit = (body: Record<string, unknown>, k = key.acme as string, url = stack.routerUrl) =>
  http<{ task_id: string; error?: string }>(`${url}/v1/tasks`, {
    body: { capability: CAPABILITY, ...body },
    headers: { authorization: `Bearer ${k}` },
  });

const accepted = (path: string) => hits.filter((h) => h.path === path && h.answered === 200);

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (text += c));
    req.on('end', () => handle(req, res, text));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  stack = await startStack({
    env: {
      ...FAST_LEASES,
      REACH_AUTH: 'required',
      REACH_ADMIN_KEY: ADMIN,
      REACH_OUTBOUND_LOOPBACK: 'on',
      REACH_WEBHOOK_RETRY_SCHEDULE: '200ms,200ms,200ms',
      REACH_WEBHOOK_TIMEOUT_MS: '1000',
    },
  });
  const more = await onFreePort('router-2', (p) => startRouter(stack.env, p));
  router2 = more.started;
  router2Url = `http://127.0.0.1:${more.port}`;
  for (const tenant of ['acme', 'globex', 'nosecret']) {
    const made = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
      body: { tenant, role: 'caller' },
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(made.status).toBe(201);
    key[tenant] = made.body.key;
  }
  for (const tenant of ['acme', 'globex']) {
    const made = await http<{ secret: string; previous_valid_until: number }>(
      `${stack.routerUrl}/v1/tenants/${tenant}/webhook-secret`,
      { body: {}, headers: { authorization: `Bearer ${ADMIN}` } },
    );
    expect(made.status).toBe(200);
    expect(made.body.secret).toMatch(/^whsec_/);
    expect(made.body.previous_valid_until).toBe(0);
    secret[tenant] = made.body.secret;
  }
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    ...(stack.redisClusterNodes
      ? { redisConnection: { clusterNodes: seedNodes(stack.redisClusterNodes) } }
      : {}),
    apiKey: ADMIN,
    agentId: 'wh-echo-1',
    shared: true,
    capabilities: [CAPABILITY],
    maxConcurrency: 16,
    handler: async (t) => {
      const payload = t.payload as { parts?: number };
      for (let i = 0; i < (payload.parts ?? 0); i++) {
        t.progress({ done: i });
        t.stream(`part-${i} `);
      }
      return t.payload;
    },
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();
  let last = '';
  await waitFor(
    async () => {
      const res = await submit({ payload: { warm: true } });
      last = JSON.stringify(res.body);
      return res.status === 202;
    },
    { timeoutMs: 30_000, intervalMs: 200, message: 'the routers see the agent' },
  ).catch((err: unknown) => {
    throw new Error(`${String(err)}: ${last}`);
  });
}, 180_000);

afterAll(async () => {
  for (const h of held) if (!h.res.writableEnded) h.res.destroy();
  await agent?.close();
  await router2?.stop().catch(() => undefined);
  await stack?.stop();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

/**
 * What a stream task's deliveries were, the refused acks registry-sync counted and the services'
 * last lines: a failure message for the progress count.
 */
async function streamSaid(got: readonly Hit[]): Promise<string> {
  const redis = connectRedis(stack);
  try {
    const stats = await redis.hgetall(stack.keys.stats());
    const refused = Object.entries(stats).filter(([k]) => k.startsWith('acks_refused:'));
    return [
      `deliveries (seq type body): ${got.map((h) => `${h.body.data.seq} ${h.body.type} ${JSON.stringify(h.body.data)}`).join('; ')}`,
      `refused acks: ${JSON.stringify(refused)}`,
      `registry-sync:\n${lastLines(stack.registry.output(), 10)}`,
      `router:\n${lastLines(stack.router.output(), 10)}`,
    ].join('\n');
  } finally {
    redis.disconnect();
  }
}

describe('webhook callbacks', () => {
  it('POSTs the final result, signed; the callback topic gets it too', async () => {
    const res = await submit({
      payload: { n: 1 },
      callback_url: `${base}/ok`,
      callback_topic: 'wh-topic',
    });
    expect(res.status).toBe(202);
    await waitFor(() => accepted('/ok').length === 1, { timeoutMs: 20_000, intervalMs: 50 });
    const hit = accepted('/ok')[0] as Hit;
    expect(hit.verified).toBe(true);
    expect(hit.id).toMatch(/^msg_\d+-\d+$/);
    expect(hit.body.type).toBe('task.completed');
    expect(hit.body.data).toMatchObject({
      task_id: res.body.task_id,
      status: 'completed',
      result: { n: 1 },
      seq: 1,
    });
    const topic = await http<{ items: { task_id: string; result: unknown }[] }>(
      `${stack.routerUrl}/v1/callbacks/wh-topic?wait_ms=5000`,
      { headers: { authorization: `Bearer ${key.acme}` } },
    );
    expect(topic.body.items).toEqual([
      expect.objectContaining({ task_id: res.body.task_id, result: { n: 1 } }),
    ]);
  });

  it('answers a waited submission with the result and POSTs it too', async () => {
    const res = await http<{ status: string; result: unknown }>(
      `${stack.routerUrl}/v1/tasks?wait_ms=10000`,
      {
        body: { capability: CAPABILITY, payload: { n: 5 }, callback_url: `${base}/waited` },
        headers: { authorization: `Bearer ${key.acme}` },
      },
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'completed', result: { n: 5 } });
    await waitFor(() => accepted('/waited').length === 1, { timeoutMs: 20_000, intervalMs: 50 });
  });

  it('tries a failing receiver again with the same webhook-id; accepted once', async () => {
    failFirst.set('/flaky', 3);
    const res = await submit({ payload: { n: 2 }, callback_url: `${base}/flaky` });
    expect(res.status).toBe(202);
    await waitFor(() => accepted('/flaky').length === 1, { timeoutMs: 20_000, intervalMs: 50 });
    // Nothing more comes once accepted.
    await new Promise((r) => setTimeout(r, 1000));
    const tries = hits.filter((h) => h.path === '/flaky');
    expect(tries).toHaveLength(4);
    expect(new Set(tries.map((h) => h.id)).size).toBe(1);
    expect(tries.every((h) => h.verified)).toBe(true);
    expect(accepted('/flaky')).toHaveLength(1);
  });

  it('sends a stream: true task’s progress and chunks, numbered', async () => {
    const res = await submit({
      payload: { parts: 3 },
      stream: true,
      callback_url: `${base}/stream`,
    });
    expect(res.status).toBe(202);
    // Items are delivered side by side, in no promised order (receivers order them by seq): wait
    // for the completion, the last item recorded, and every item numbered before it.
    await waitFor(
      () => {
        const got = accepted('/stream');
        const last = got.find((h) => h.body.type === 'task.completed')?.body.data.seq;
        return last !== undefined && new Set(got.map((h) => h.body.data.seq)).size >= last;
      },
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const got = accepted('/stream');
    const types = got.map((h) => h.body.type);
    const progress = types.filter((t) => t === 'task.progress');
    if (progress.length !== 3) throw new Error(await streamSaid(got));
    expect(progress).toHaveLength(3);
    expect(types.filter((t) => t === 'task.chunk').length).toBeGreaterThanOrEqual(1);
    const seqs = got.map((h) => h.body.data.seq).sort((a, b) => a - b);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(new Set(got.map((h) => h.id)).size).toBe(got.length);
    expect(got.every((h) => h.verified && h.body.data.task_id === res.body.task_id)).toBe(true);
  });

  it('lists a delivery that gave up, to its tenant only, and re-sends it', async () => {
    answer.set('/down', 503);
    const res = await submit({ payload: { n: 3 }, callback_url: `${base}/down` });
    expect(res.status).toBe(202);
    const list = (k: string) =>
      http<{ items: { id: string; task_id: string; tries: number; last_status: number }[] }>(
        `${stack.routerUrl}/v1/webhooks/failures`,
        { headers: { authorization: `Bearer ${k}` } },
      );
    await waitFor(async () => (await list(key.acme as string)).body.items.length === 1, {
      timeoutMs: 20_000,
      intervalMs: 100,
    });
    const [failure] = (await list(key.acme as string)).body.items;
    expect(failure).toMatchObject({ task_id: res.body.task_id, tries: 4, last_status: 503 });
    expect((await list(key.globex as string)).body.items).toEqual([]);
    const admin = await list(ADMIN);
    expect(admin.body.items.map((i) => i.task_id)).toContain(`acme/${res.body.task_id}`);
    const resend = (k: string) =>
      http(`${router2Url}/v1/webhooks/failures/${failure?.id}/resend`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k}` },
      });
    expect((await resend(key.globex as string)).status).toBe(404);
    answer.set('/down', 200);
    const again = await resend(key.acme as string);
    expect(again.status).toBe(202);
    await waitFor(() => accepted('/down').length === 1, { timeoutMs: 20_000, intervalMs: 50 });
    expect(accepted('/down')[0]?.id).toBe(failure?.id);
    expect((await list(key.acme as string)).body.items).toEqual([]);
    expect((await resend(key.acme as string)).status).toBe(404);
  });

  it('signs with the previous secret too through a rotation’s grace', async () => {
    const rotated = await http<{ secret: string; previous_valid_until: number }>(
      `${stack.routerUrl}/v1/tenants/acme/webhook-secret`,
      { body: {}, headers: { authorization: `Bearer ${ADMIN}` } },
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.previous_valid_until).toBeGreaterThan(Date.now() + 3_600_000);
    // The routers read a tenant's secrets at most a second old.
    await new Promise((r) => setTimeout(r, 1100));
    const res = await submit({ payload: { n: 4 }, callback_url: `${base}/rotated` });
    expect(res.status).toBe(202);
    await waitFor(() => accepted('/rotated').length === 1, { timeoutMs: 20_000, intervalMs: 50 });
    const hit = accepted('/rotated')[0] as Hit;
    expect(hit.headers['webhook-signature']?.split(' ')).toHaveLength(2);
    // A receiver on the previous secret and one on the new secret both verify it.
    expect(hit.verified).toBe(true);
    expect(new Webhook(rotated.body.secret).verify(hit.raw, hit.headers)).toMatchObject({
      type: 'task.completed',
    });
  });

  it('sends the tasks a schedule fires to its task’s callback_url', async () => {
    const made = await http<{ schedule_id: string }>(`${stack.routerUrl}/v1/schedules`, {
      body: {
        every_ms: 1000,
        task: { capability: CAPABILITY, payload: { tick: true }, callback_url: `${base}/ticks` },
      },
      headers: { authorization: `Bearer ${key.acme}` },
    });
    expect(made.status).toBe(201);
    const id = made.body.schedule_id;
    await waitFor(() => accepted('/ticks').length >= 2, { timeoutMs: 30_000, intervalMs: 100 });
    const removed = await http(`${stack.routerUrl}/v1/schedules/${id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${key.acme}` },
    });
    expect(removed.status).toBe(204);
    const ticks = accepted('/ticks');
    expect(ticks.every((h) => h.verified && h.body.data.task_id.startsWith(`${id}:`))).toBe(true);
    expect(ticks.map((h) => h.body.data.seq)).toEqual(ticks.map(() => 1));
  });

  it('refuses a bad callback_url, and a tenant without a secret, with their codes', async () => {
    const far = await submit({ payload: {}, callback_url: 'https://evil.example.net/hook' });
    expect(far.status).toBe(403);
    expect(far.body.error).toBe('CALLBACK_URL_NOT_ALLOWED');
    const ftp = await submit({ payload: {}, callback_url: 'ftp://127.0.0.1/x' });
    expect(ftp.body.error).toBe('CALLBACK_URL_NOT_ALLOWED');
    const none = await submit({ payload: {}, callback_url: `${base}/ok` }, key.nosecret);
    expect(none.status).toBe(409);
    expect(none.body.error).toBe('WEBHOOK_SECRET_MISSING');
    const batch = await http<{ results: { http_status: number; error?: string }[] }>(
      `${stack.routerUrl}/v1/tasks/batch`,
      {
        body: {
          tasks: [{ capability: CAPABILITY, payload: {}, callback_url: 'http://x.invalid/' }],
        },
        headers: { authorization: `Bearer ${key.acme}` },
      },
    );
    expect(batch.body.results[0]).toMatchObject({
      http_status: 403,
      error: 'CALLBACK_URL_NOT_ALLOWED',
    });
  });

  it('loses no delivery when a router is SIGKILLed mid-delivery', async () => {
    answer.set('/hold', 'hold');
    // More than one router tries at once (64): the router whose forwarder makes the deliveries
    // starts its tries first, the other takes the rest, so both hold some when one is killed.
    const n = 80;
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await submit({ payload: { i }, callback_url: `${base}/hold` });
      expect(res.status).toBe(202);
      ids.push(res.body.task_id);
    }
    // Every delivery is under way, each held by the router that tries it.
    await waitFor(() => held.length >= n, { timeoutMs: 30_000, intervalMs: 50 });
    router2?.kill('SIGKILL');
    await router2?.exited;
    answer.set('/hold', 200);
    for (const h of held)
      if (!h.closed && !h.res.writableEnded) {
        h.res.writeHead(200).end();
        h.hit.answered = 200;
      }
    // The killed router's tries are cut off: the other takes them over once their lease runs out.
    await waitFor(
      () => {
        const done = new Set(accepted('/hold').map((h) => h.body.data.task_id));
        return ids.every((id) => done.has(id));
      },
      { timeoutMs: 30_000, intervalMs: 100, message: 'every task delivered' },
    );
    expect(cutOff).toBeGreaterThan(0);
    expect(stack.errorLines()).toEqual([]);
  }, 90_000);
});
