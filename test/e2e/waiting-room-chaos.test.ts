/**
 * Chaos with the waiting room in use: 1,500 tasks of two tenants to a capability whose 8 slots
 * (2 agents × 4) are full, so that most of them wait in the room, while one of the two routers and
 * then registry-sync are SIGKILLed mid-drain and started again. Every task must end completed,
 * exactly once on its tenant's callback topic: none missing, none twice, none dead.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import pino from 'pino';
import type { CallbackItem, CallbacksReply } from '@agent-reach/protocol';
import { ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { onFreePort, startNodeService, waitFor, type ServiceProcess } from '@agent-reach/testkit';
import { entryOf } from '@agent-reach/launcher';
import { connectRedis, seedNodes } from '../support/redis.ts';
import { FAST_LEASES, http, startRouter, startStack, type Stack } from '../support/stack.ts';

const ADMIN = 'e2e-admin-key-of-the-room-chaos-test-0123456789';
const CAPABILITY = 'room-chaos';
const TOPIC = 'room-chaos';
const TENANTS = ['ca', 'cb'] as const;
const TASKS = 1500;
const BATCH = 50;

let stack: Stack;
let registry: ServiceProcess;
let routerB: ServiceProcess | undefined;
let routerBPort = 0;
let routers: string[] = [];
const agents: ReachAgent[] = [];
const key: Record<string, string> = {};
/** Handler runs per task_id (an agent may run a task twice; its completion must go out once). */
const runs = new Map<string, number>();

const as = (tenant: string) => ({ authorization: `Bearer ${key[tenant] ?? ADMIN}` });
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** 20–50 ms, fixed per task_id. */
function workMs(taskId: string): number {
  let h = 0;
  for (const ch of taskId) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return 20 + (h % 31);
}

async function startAgent(agentId: string): Promise<void> {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    // On the cluster leg, the cluster's seeds: the agent reads keys of every slot.
    ...(stack.redisClusterNodes
      ? { redisConnection: { clusterNodes: seedNodes(stack.redisClusterNodes) } }
      : {}),
    agentId,
    capabilities: [CAPABILITY],
    maxConcurrency: 4,
    apiKey: ADMIN,
    shared: true,
    handler: async (task: TaskContext) => {
      runs.set(task.taskId, (runs.get(task.taskId) ?? 0) + 1);
      await sleep(workMs(task.taskId));
      return { ok: true };
    },
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agents.push(agent);
  agent.start();
  await agent.ready();
}

/** Tasks waiting in the room now, through whichever router answers (undefined when none does). */
async function waiting(): Promise<number | undefined> {
  for (const router of routers) {
    try {
      const res = await http<{ queues: { capability: string; queued: number }[] }>(
        `${router}/v1/queues`,
        { headers: as('admin') },
      );
      if (res.status === 200)
        return res.body.queues.find((q) => q.capability === CAPABILITY)?.queued ?? 0;
    } catch {
      // that router is down: the next one
    }
  }
  return undefined;
}

/**
 * Submits a batch until every task of it is accepted (202 new, 200 it exists), going round the
 * routers on a failure with the same task_ids, as a caller would.
 */
async function submit(tenant: string, ids: readonly string[], first: number): Promise<void> {
  const tasks = ids.map((task_id) => ({
    task_id,
    capability: CAPABILITY,
    payload: { t: tenant },
    callback_topic: TOPIC,
    timeout_s: 120,
  }));
  const until = Date.now() + 30_000;
  for (let r = first; ; r++) {
    try {
      const res = await http<{ results: { http_status: number }[] }>(
        `${routers[r % routers.length] as string}/v1/tasks/batch`,
        { body: { tasks }, headers: as(tenant) },
      );
      if (res.status === 200 && res.body.results.every((x) => [200, 202].includes(x.http_status)))
        return;
    } catch {
      // the router is down: the next one
    }
    if (Date.now() > until) throw new Error(`batch of ${tenant} from ${ids[0]} not accepted`);
    await sleep(100);
  }
}

/** Follows `tenant`'s topic by long poll, through whichever router answers, until stopped. */
class Follower {
  readonly items: CallbackItem[] = [];
  private cursor = '0';
  private stopped = false;
  private readonly loop: Promise<void>;

  constructor(private readonly tenant: string) {
    this.loop = this.follow();
  }

  /** Final items seen so far, by task_id. */
  finals(): Map<string, CallbackItem[]> {
    const out = new Map<string, CallbackItem[]>();
    for (const item of this.items) {
      if (item.status === 'progress' || item.status === 'chunk' || item.status === 'truncated')
        continue;
      out.set(item.task_id, [...(out.get(item.task_id) ?? []), item]);
    }
    return out;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
  }

  /** Reads what is left of the topic after the cursor (no wait): the end of the run. */
  async drain(): Promise<void> {
    for (let r = 0; ; r++) {
      const page = await this.page(routers[r % routers.length] as string, 0).catch(() => undefined);
      if (page?.items.length === 0) return;
      if (!page) await sleep(200);
    }
  }

  private async page(router: string, waitMs: number): Promise<CallbacksReply | undefined> {
    const res = await fetch(
      `${router}/v1/callbacks/${TOPIC}?after=${this.cursor}&wait_ms=${waitMs}&limit=1000`,
      { headers: as(this.tenant), signal: AbortSignal.timeout(waitMs + 5000) },
    );
    if (res.status !== 200) {
      await res.arrayBuffer();
      return undefined;
    }
    const page = (await res.json()) as CallbacksReply;
    this.items.push(...page.items);
    this.cursor = page.cursor;
    return page;
  }

  private async follow(): Promise<void> {
    for (let r = 0; !this.stopped;) {
      const page = await this.page(routers[r % routers.length] as string, 1000).catch(
        () => undefined,
      );
      if (!page) {
        r++;
        await sleep(200);
      }
    }
  }
}

/** What the router and the room hold of tasks with no final item: for a failure message. */
async function whereAre(taskIds: readonly string[]): Promise<string> {
  if (taskIds.length === 0) return '';
  const redis = connectRedis(stack);
  try {
    const room = stack.keys.room(CAPABILITY);
    const lines = await Promise.all(
      taskIds.map(async (id) => {
        const tenant = id.split('-')[0] ?? '';
        const view = await http(`${stack.routerUrl}/v1/tasks/${id}`, { headers: as(tenant) });
        const [taking, held, queued] = await Promise.all([
          redis.zscore(`${room}:taking`, id),
          redis.zscore(`${room}:held`, id),
          redis.hexists(`${room}:x`, id),
        ]);
        return `${id}: ${JSON.stringify(view.body)} room: taking ${taking} held ${held} entry ${queued}`;
      }),
    );
    return `tasks with no final item:\n${lines.join('\n')}`;
  } finally {
    await redis.quit();
  }
}

beforeAll(async () => {
  stack = await startStack({
    env: {
      ...FAST_LEASES,
      REACH_AUTH: 'required',
      REACH_ADMIN_KEY: ADMIN,
      REACH_RECEIPT_TIMEOUT_MS: '3000',
      REACH_CONSUME_BOUND_MS: '2000',
      REACH_RETRY_BASE_MS: '100',
      REACH_RETRY_CAP_MS: '2000',
      REACH_DISPATCH_GRACE_MS: '2000',
    },
  });
  registry = stack.registry;
  ({ port: routerBPort, started: routerB } = await onFreePort('router-b', (port) =>
    startRouter(stack.env, port),
  ));
  routers = [stack.routerUrl, `http://127.0.0.1:${routerBPort}`];
  for (const t of TENANTS) {
    const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
      body: { tenant: t, role: 'caller' },
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(res.status).toBe(201);
    key[t] = res.body.key;
  }
  await startAgent('room-chaos-a0');
  await startAgent('room-chaos-a1');
}, 120_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await routerB?.stop();
  await stack?.router.stop();
  await registry?.stop();
}, 60_000);

it('loses no task and publishes no completion twice while a router and registry-sync are killed mid-drain', async () => {
  const started = Date.now();
  const progress = (what: string) =>
    console.log(`room chaos +${((Date.now() - started) / 1000).toFixed(1)}s: ${what}`);
  const followers = TENANTS.map((t) => new Follower(t));
  const ids = new Map<string, string[]>(
    TENANTS.map((t) => [t, Array.from({ length: TASKS / 2 }, (_, i) => `${t}-${i}`)]),
  );
  /** Tasks waiting in the room at each kill. */
  const atKill: Record<string, number | undefined> = {};

  // Two submitters (one per tenant) going round both routers, batch by batch.
  const submitting = Promise.all(
    TENANTS.map(async (t, n) => {
      const mine = ids.get(t) ?? [];
      for (let from = 0, b = n; from < mine.length; from += BATCH, b++)
        await submit(t, mine.slice(from, from + BATCH), b);
    }),
  );
  const chaos = (async () => {
    // Router B dies with tasks of both tenants in the room, some of them taken by its drainer.
    await waitFor(async () => ((await waiting()) ?? 0) >= 300, {
      timeoutMs: 20_000,
      intervalMs: 20,
    });
    atKill['router-b'] = await waiting();
    routerB?.kill('SIGKILL');
    await routerB?.exited;
    progress(`router B killed, ${atKill['router-b']} waiting`);
    routerB = await startRouter(stack.env, routerBPort);
    progress('router B answers again');
    atKill['registry-sync'] = await waiting();
    registry.kill('SIGKILL');
    await registry.exited;
    progress(`registry-sync killed, ${atKill['registry-sync']} waiting`);
    registry = await startNodeService({
      name: 'registry-sync',
      entry: entryOf('registry-sync'),
      env: { ...stack.env, REGISTRY_PORT: new URL(stack.registryUrl).port },
      healthUrl: `${stack.registryUrl}/healthz`,
      timeoutMs: 60_000,
    });
    progress('registry-sync answers again');
  })();
  await Promise.all([submitting, chaos]);
  progress(`${TASKS} tasks accepted`);

  const finals = () => {
    const all = new Map<string, CallbackItem[]>();
    for (const f of followers) for (const [id, items] of f.finals()) all.set(id, items);
    return all;
  };
  const allIds = [...ids.values()].flat();
  await waitFor(
    () => {
      const seen = finals();
      return allIds.every((id) => seen.has(id));
    },
    { timeoutMs: 60_000, intervalMs: 250 },
  ).then(
    () => progress('every task final on its topic'),
    () => progress('not every task final after 60 s'),
  );
  await Promise.all(followers.map((f) => f.stop()));
  await Promise.all(followers.map((f) => f.drain()));

  const seen = finals();
  const missing = allIds.filter((id) => !seen.has(id));
  const twice = allIds.filter((id) => (seen.get(id)?.length ?? 0) > 1);
  const notCompleted = allIds.filter((id) =>
    (seen.get(id) ?? []).some((x) => x.status !== 'completed'),
  );
  const ranTwice = [...runs.values()].filter((n) => n > 1).length;
  progress(
    `final: ${seen.size} tasks with a final item, missing ${missing.length}, twice ${twice.length}, ` +
      `not completed ${notCompleted.length}; handler runs ${[...runs.values()].reduce((a, b) => a + b, 0)} ` +
      `(${ranTwice} tasks ran more than once); waiting at the kills ${JSON.stringify(atKill)}`,
  );
  // The room was in use when each process died.
  expect(atKill['router-b']).toBeGreaterThan(0);
  expect(atKill['registry-sync']).toBeGreaterThan(0);
  expect(missing.slice(0, 20), await whereAre(missing.slice(0, 5))).toEqual([]);
  expect(twice.slice(0, 20)).toEqual([]);
  expect(notCompleted.slice(0, 20)).toEqual([]);
  expect(await waiting()).toBe(0);
}, 150_000);
