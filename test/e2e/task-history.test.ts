/**
 * History past retention: with a short REACH_TASK_RETENTION_S, a final task's record goes to
 * InfluxDB (task_archive) through its shard's Redis outbox, and GET /v1/tasks/:id reads it back
 * once the Redis record expired — the same view, marked `archived: true`, with payload and
 * result when the capability allows, cut and marked past the limit. Another tenant gets 404.
 * With InfluxDB away (its address served by a proxy here, closed and opened again) the outbox
 * holds the tasks and their records do not expire; once it is back, nothing is lost.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonRetryableError, type ReachAgent } from '@agent-reach/worker-sdk';
import { waitFor, testServices } from '@agent-reach/testkit';
import { http, startStack, type Stack } from '../support/stack.ts';
import { startAgent } from '../support/agents.ts';
import { connectRedis, type TestRedis } from '../support/redis.ts';

const ADMIN = 'e2e-admin-key-of-the-history-test-0123456789';
const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const echo = `hist-echo-${suffix}`;
const secret = `hist-secret-${suffix}`;
const LIMIT = 1024;

type View = Record<string, unknown> & { task_id: string; status: string; archived?: boolean };

/** A TCP proxy in front of the real InfluxDB that the test closes (InfluxDB away) and opens again. */
class InfluxDoor {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;
  constructor(private readonly target: URL) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(Number(this.target.port || 80), this.target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    const address = server.address();
    if (address && typeof address === 'object') this.port = address.port;
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

let stack: Stack;
let redis: TestRedis;
let door: InfluxDoor;
let agent: ReachAgent;
const key: Record<string, string> = {};

const as = (who: string) => ({ authorization: `Bearer ${key[who] ?? ADMIN}` });
const view = (who: string, id: string) =>
  http<View>(`${stack.routerUrl}/v1/tasks/${encodeURIComponent(id)}`, { headers: as(who) });

async function submit(
  capability: string,
  payload: unknown,
  extra: Record<string, unknown> = {},
): Promise<string> {
  const res = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
    body: { capability, payload, ...extra },
    headers: as('acme'),
  });
  expect(res.status).toBe(202);
  return res.body.task_id;
}

/** The task's live view once it completed (before its record expires). */
const completed = (id: string) =>
  waitFor(
    async () => {
      const r = await view('acme', id);
      return r.body.status === 'completed' && !r.body.archived ? r.body : undefined;
    },
    { timeoutMs: 20_000, message: `task ${id} did not complete` },
  );

/** The task's archived view, once its Redis record expired. */
const archived = (id: string, timeoutMs = 30_000) =>
  waitFor(
    async () => {
      const r = await view('acme', id);
      return r.status === 200 && r.body.archived ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 200, message: `task ${id} was not read back from the archive` },
  );

async function outboxDepth(): Promise<number> {
  let depth = 0;
  for (let shard = 0; shard < stack.keys.taskShards(); shard++)
    depth += await redis.xlen(stack.keys.archiveOutbox(shard));
  return depth;
}

beforeAll(async () => {
  door = new InfluxDoor(new URL(testServices().influxUrl));
  await door.open();
  stack = await startStack({
    influx: 'v1',
    env: {
      REACH_AUTH: 'required',
      REACH_ADMIN_KEY: ADMIN,
      INFLUX_URL: `http://127.0.0.1:${door.port}`,
      REACH_TASK_RETENTION_S: '2',
      REACH_DLQ_RETENTION_S: '2',
      REACH_ARCHIVE_MS: '200',
      REACH_ARCHIVE_MAX_VALUE_BYTES: String(LIMIT),
      REACH_ARCHIVE_PAYLOADS_BY_CAPABILITY: JSON.stringify({ [secret]: false }),
    },
  });
  redis = connectRedis(stack);
  const makeKey = async (body: Record<string, unknown>) => {
    const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
      body,
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(res.status).toBe(201);
    return res.body.key;
  };
  key.acme = await makeKey({ tenant: 'acme', role: 'caller' });
  key.globex = await makeKey({ tenant: 'globex', role: 'caller' });
  const agentKey = await makeKey({ tenant: 'acme', role: 'agent' });
  agent = await startAgent(
    stack,
    `hist-agent-${suffix}`,
    [echo, secret],
    async (task) => {
      if ((task.payload as { fail?: boolean } | null)?.fail)
        throw new NonRetryableError('asked to fail');
      return { echoed: task.payload };
    },
    { apiKey: agentKey, maxConcurrency: 8 },
  );
}, 120_000);

afterAll(async () => {
  await agent?.close();
  redis?.disconnect();
  await stack?.stop();
  await door?.close();
});

describe('a task past its Redis retention', () => {
  it('is read back from the archive with the same view, marked archived', async () => {
    const id = await submit(echo, { text: 'hi' });
    const live = await completed(id);
    const old = await archived(id);
    const { archived: mark, payload, ...rest } = old;
    expect(mark).toBe(true);
    expect(rest).toEqual(live);
    expect(payload).toEqual({ text: 'hi' });
    expect(old.result).toEqual({ echoed: { text: 'hi' } });
    expect(old).not.toHaveProperty('payload_cut');
    // The record is gone from Redis: this came from InfluxDB.
    expect(await redis.exists(stack.keys.task(`acme/${id}`))).toBe(0);
    // Its timeline comes from InfluxDB's stage points, read over the archived task's own life.
    const timeline = await waitFor(
      async () => {
        const r = await http<{ source: string; stages: { stage: string }[] }>(
          `${stack.routerUrl}/v1/tasks/${id}/timeline`,
          { headers: as('acme') },
        );
        return r.body.stages?.some((st) => st.stage === 'completed') ? r.body : undefined;
      },
      { message: 'the archived task has no timeline' },
    );
    expect(timeline.source).toBe('influxdb');
    expect(timeline.stages.map((st) => st.stage)).toEqual(['sent', 'received', 'completed']);
  });

  it('cuts a long payload and result at the limit and marks them', async () => {
    const text = 'é'.repeat(2000);
    const id = await submit(echo, { text });
    await completed(id);
    const old = await archived(id);
    expect(old.payload_cut).toBe(true);
    expect(old.result_cut).toBe(true);
    expect(typeof old.payload).toBe('string');
    expect(Buffer.byteLength(old.payload as string)).toBeLessThanOrEqual(LIMIT);
    expect(JSON.stringify({ text }).startsWith(old.payload as string)).toBe(true);
    expect(JSON.stringify({ echoed: { text } }).startsWith(old.result as string)).toBe(true);
  });

  it('leaves payload and result out when the capability turned archiving them off', async () => {
    const id = await submit(secret, { card: '4111 1111 1111 1111' });
    const live = await completed(id);
    expect(live.result).toEqual({ echoed: { card: '4111 1111 1111 1111' } });
    const old = await archived(id);
    expect(old).not.toHaveProperty('payload');
    expect(old).not.toHaveProperty('result');
    expect(old).toMatchObject({ status: 'completed', capability: secret, archived: true });
  });

  it('is archived however it ended: dead and cancelled too', async () => {
    const dead = await submit(echo, { fail: true });
    const queued = await submit(`hist-none-${suffix}`, { n: 2 }, { on_no_agent: 'queue' });
    const cancel = await http(`${stack.routerUrl}/v1/tasks/${queued}/cancel`, {
      method: 'POST',
      body: {},
      headers: as('acme'),
    });
    expect(cancel.status).toBe(202);
    expect(await archived(dead)).toMatchObject({
      status: 'dead',
      error: 'asked to fail',
      payload: { fail: true },
    });
    expect(await archived(queued)).toMatchObject({ status: 'cancelled', payload: { n: 2 } });
  });

  it('is another tenant’s 404, and an operator’s under <tenant>/<id>', async () => {
    const id = await submit(echo, { n: 1 });
    await completed(id);
    await archived(id);
    expect((await view('globex', id)).status).toBe(404);
    expect((await view('globex', `acme/${id}`)).status).toBe(404);
    const byOperator = await view('admin', `acme/${id}`);
    expect(byOperator.status).toBe(200);
    expect(byOperator.body).toMatchObject({ task_id: `acme/${id}`, archived: true });
  });

  it('loses nothing while InfluxDB is away: the outbox holds the tasks, unexpired, until it is back', async () => {
    await door.close();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push(await submit(echo, { i }));
    for (const id of ids) await completed(id);
    const endedAt = Date.now();
    // Past the 2 s retention, InfluxDB still away: every record is still in Redis, unexpired.
    await waitFor(async () => Date.now() - endedAt > 4000 && (await outboxDepth()) >= 20, {
      timeoutMs: 20_000,
      message: 'the outbox did not hold the tasks',
    });
    for (const id of ids) {
      expect(await redis.ttl(stack.keys.task(`acme/${id}`))).toBe(-1);
      expect((await view('acme', id)).body).toMatchObject({ status: 'completed' });
    }
    await door.open();
    for (const id of ids) {
      const old = await archived(id, 60_000);
      expect(old).toMatchObject({ status: 'completed', payload: { i: ids.indexOf(id) } });
    }
    await waitFor(async () => (await outboxDepth()) === 0, { message: 'the outbox did not drain' });
    expect(stack.errorLines()).toEqual([]);
  }, 120_000);
});
