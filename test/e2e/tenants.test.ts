/**
 * Tenants and quotas with auth on (REACH_AUTH=required), real services and real keys made with
 * the admin key: two tenants each seeing only their own tasks, callback topics and dead letters
 * (the same task_id in both is two tasks); a tenant's task never reaching another tenant's agent
 * but reaching a shared one; a caller over its request rate getting 429s while another caller's
 * tasks flow; the in-flight quota freeing a slot when a task ends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import {
  NonRetryableError,
  ReachAgent,
  ReachClient,
  type TaskContext,
} from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { hold } from '../support/hold.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = 'e2e-admin-key-of-the-tenants-test-0123456789';
let stack: Stack;
const agents: ReachAgent[] = [];
const clients: ReachClient[] = [];
const key: Record<string, string> = {};

async function makeKey(body: Record<string, unknown>): Promise<string> {
  const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body,
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

/** Tasks with `payload.hold` run until the test lets them go. */
const held = hold();

/** The handler of every agent here: the agent's id as the result, once `payload.hold` is let go. */
const handlerOf =
  (agentId: string) =>
  async (task: TaskContext): Promise<unknown> => {
    const payload = (task.payload ?? {}) as { hold?: boolean; fail?: boolean };
    if (payload.fail) throw new NonRetryableError('asked to fail');
    if (payload.hold) await held.wait;
    return { by: agentId };
  };

async function startAgent(
  agentId: string,
  capabilities: string[],
  apiKey: string,
  extra: { shared?: boolean; channel?: 'pull' } = {},
): Promise<void> {
  const agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    redisUrl: stack.redisUrl,
    agentId,
    capabilities,
    maxConcurrency: 8,
    apiKey,
    ...extra,
    handler: handlerOf(agentId),
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agents.push(agent);
  agent.start();
  await agent.ready();
}

function client(apiKey: string): ReachClient {
  const c = new ReachClient({ routerUrl: stack.routerUrl, apiKey });
  clients.push(c);
  return c;
}

const get = <T = Record<string, unknown>>(who: string, path: string) =>
  http<T>(`${stack.routerUrl}${path}`, { headers: { authorization: `Bearer ${key[who]}` } });

const submit = <T = Record<string, unknown>>(who: string, body: Record<string, unknown>) =>
  http<T>(`${stack.routerUrl}/v1/tasks`, {
    body,
    headers: { authorization: `Bearer ${key[who]}` },
  });

beforeAll(async () => {
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AUTH: 'required', REACH_ADMIN_KEY: ADMIN },
  });
  key.acme = await makeKey({ tenant: 'acme', role: 'caller', label: 'acme app' });
  key.globex = await makeKey({ tenant: 'globex', role: 'caller', label: 'globex app' });
  key.acmeBurst = await makeKey({ tenant: 'acme', role: 'caller', rate_per_s: 5 });
  key.acmeOneAtATime = await makeKey({ tenant: 'acme', role: 'caller', max_inflight: 1 });
  const acmeAgents = await makeKey({ tenant: 'acme', role: 'agent' });
  const globexAgents = await makeKey({ tenant: 'globex', role: 'agent' });
  await startAgent('acme-worker', ['echo', 'doomed', 'slow'], acmeAgents);
  await startAgent('globex-worker', ['echo', 'doomed', 'translate', 'only-globex'], globexAgents);
  // Registered by an operator key as shared: serves every tenant.
  await startAgent('shared-worker', ['echo', 'translate'], ADMIN, { shared: true });
  // Reads acme's pool of `batchy` (its own tenant's pools only).
  await startAgent('acme-puller', ['batchy'], acmeAgents, { channel: 'pull' });
}, 60_000);

afterAll(async () => {
  held.release();
  await Promise.all(clients.map((c) => c.close()));
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

describe('tenants, with auth on', () => {
  it('the same task_id in two tenants is two tasks, each on its own tenant’s topic, each tenant seeing only its own', async () => {
    const [a, g] = await Promise.all([
      submit('acme', {
        task_id: 'order-1',
        capability: 'echo',
        payload: {},
        callback_topic: 'done',
      }),
      submit('globex', {
        task_id: 'order-1',
        capability: 'echo',
        payload: {},
        callback_topic: 'done',
      }),
    ]);
    expect([a.status, g.status]).toEqual([202, 202]);
    type Items = { items: { task_id: string; status: string; result: { by: string } }[] };
    const topicOf = (who: string) =>
      waitFor(
        async () => {
          const page = (await get<Items>(who, '/v1/callbacks/done')).body;
          return page.items.length > 0 ? page.items : undefined;
        },
        { timeoutMs: 10_000, message: `${who}'s result never reached its topic` },
      );
    const [acmeItems, globexItems] = await Promise.all([topicOf('acme'), topicOf('globex')]);
    // One result each, named by the tenant's own task_id, run by an agent that may serve it.
    expect(acmeItems).toHaveLength(1);
    expect(globexItems).toHaveLength(1);
    expect(acmeItems[0]).toMatchObject({ task_id: 'order-1', status: 'completed' });
    expect(['acme-worker', 'shared-worker']).toContain(acmeItems[0]?.result.by);
    expect(['globex-worker', 'shared-worker']).toContain(globexItems[0]?.result.by);

    expect((await get('acme', '/v1/tasks/order-1')).body).toMatchObject({
      task_id: 'order-1',
      status: 'completed',
    });
    // Another tenant's task and topic answer 404, never 403.
    const theirTask = await get('acme', '/v1/tasks/globex%2Forder-1');
    expect(theirTask.status).toBe(404);
    expect(theirTask.body).toMatchObject({ error: 'TASK_NOT_FOUND' });
    expect((await get('acme', '/v1/callbacks/globex%2Fdone')).status).toBe(404);
    // The admin key (an operator) sees both.
    key.admin = ADMIN;
    expect((await get('admin', '/v1/tasks/globex%2Forder-1')).body).toMatchObject({
      task_id: 'globex/order-1',
    });
  });

  it('a tenant’s dead letters are its own', async () => {
    const dead = await submit<{ task_id: string }>('acme', {
      capability: 'doomed',
      payload: { fail: true },
    });
    expect(dead.status).toBe(202);
    const id = dead.body.task_id;
    type Dlq = { items: { task_id: string; reason: string }[] };
    const listed = await waitFor(
      async () => {
        const items = (await get<Dlq>('acme', '/v1/dlq')).body.items;
        return items.find((i) => i.task_id === id);
      },
      { timeoutMs: 10_000, message: 'the failed task never reached acme’s dead letters' },
    );
    expect(listed.reason).toBe('not_retryable');
    expect((await get<Dlq>('globex', '/v1/dlq')).body.items).toEqual([]);
    const replay = await http(`${stack.routerUrl}/v1/dlq/acme%2F${id}/replay`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.globex}` },
    });
    expect(replay.status).toBe(404);
  });

  it('a tenant’s task never reaches another tenant’s agent, but reaches a shared one', async () => {
    const acme = client(key.acme as string);
    const runs = await Promise.all(
      Array.from({ length: 30 }, () => acme.run<{ by: string }>('echo', {}, { timeoutMs: 10_000 })),
    );
    const by = new Set(runs.map((r) => r.by));
    expect(by.has('globex-worker')).toBe(false);
    // translate: served by globex's agent and the shared one only.
    const translated = await Promise.all(
      Array.from({ length: 5 }, () =>
        acme.run<{ by: string }>('translate', {}, { timeoutMs: 10_000 }),
      ),
    );
    expect(new Set(translated.map((r) => r.by))).toEqual(new Set(['shared-worker']));
    // The routing explanation shows a caller only the agents that may take its tenant's tasks.
    type Route = { candidates: { agent_id: string }[] };
    const route = await get<Route>('acme', '/v1/route?capability=echo');
    expect(route.body.candidates.map((c) => c.agent_id).sort()).toEqual(
      expect.not.arrayContaining(['globex-worker']),
    );
    // only-globex: no agent acme may use.
    const none = await submit('acme', { capability: 'only-globex', payload: {} });
    expect(none.status).toBe(503);
    expect(none.body).toMatchObject({ error: 'NO_AGENT' });
    const globex = client(key.globex as string);
    expect((await globex.run<{ by: string }>('only-globex', {}, { timeoutMs: 10_000 })).by).toBe(
      'globex-worker',
    );
  });
});

describe('pools per tenant, with auth on', () => {
  it('a pull agent takes its own tenant’s pooled tasks only; another tenant’s go to its push agents or shared ones', async () => {
    type View = { status: string; agent_id: string };
    const done = (who: string, id: string) =>
      waitFor(
        async () => {
          const v = (await get<View>(who, `/v1/tasks/${id}`)).body;
          return v.status === 'completed' ? v : undefined;
        },
        { timeoutMs: 10_000, message: `${who}'s pooled task ${id} never completed` },
      );
    const mine = await submit<{ task_id: string; stream: string }>('acme', {
      capability: 'batchy',
      payload: {},
      mode: 'batch',
    });
    expect(mine.status).toBe(202);
    expect(mine.body.stream).toBe(`${stack.prefix}:{pool:acme/batchy}`);
    expect((await done('acme', mine.body.task_id)).agent_id).toBe('acme-puller');
    // Globex's pool of the same capability is its own: acme's pull agent never takes from it.
    const theirs = await submit<{ task_id: string; stream: string }>('globex', {
      capability: 'batchy',
      payload: {},
      mode: 'batch',
    });
    expect(theirs.body.stream).toBe(`${stack.prefix}:{pool:globex/batchy}`);
    // Acme's pooled translate task: no acme pull agent, so the pool drainer hands it to a push
    // agent acme may use — the shared one, never globex's.
    const drained = await submit<{ task_id: string }>('acme', {
      capability: 'translate',
      payload: {},
      mode: 'batch',
    });
    expect((await done('acme', drained.body.task_id)).agent_id).toBe('shared-worker');
    const waiting = (await get<View>('globex', `/v1/tasks/${theirs.body.task_id}`)).body;
    expect(waiting).toMatchObject({ status: 'sent', agent_id: '' });
  });
});

describe('quotas, with auth on', () => {
  it('a caller over its request rate gets 429s while another caller’s tasks flow', async () => {
    const globex = client(key.globex as string);
    const flowing = Promise.all(
      Array.from({ length: 20 }, () => globex.run('echo', {}, { timeoutMs: 10_000 })),
    );
    const burst = await Promise.all(Array.from({ length: 20 }, () => get('acmeBurst', '/v1/dlq')));
    const refused = burst.filter((r) => r.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    expect(refused[0]?.body).toMatchObject({ error: 'RATE_LIMITED' });
    expect(Number(refused[0]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await flowing).toHaveLength(20);
  });

  it('the in-flight quota frees a slot when the task ends', async () => {
    const first = await submit<{ task_id: string }>('acmeOneAtATime', {
      capability: 'slow',
      payload: { hold: true },
    });
    expect(first.status).toBe(202);
    // The first runs until let go, however slow the machine: its slot is taken meanwhile.
    const second = await submit('acmeOneAtATime', { capability: 'slow', payload: {} });
    expect(second.status).toBe(429);
    expect(second.body).toMatchObject({ error: 'RATE_LIMITED' });
    held.release();
    await waitFor(
      async () =>
        (await get<{ status: string }>('acmeOneAtATime', `/v1/tasks/${first.body.task_id}`)).body
          .status === 'completed',
      { timeoutMs: 10_000, message: 'the slow task never completed' },
    );
    // A full quota is looked through at most every 50 ms per key and router: a submission right
    // after the end may still be refused (429, Retry-After), and one a moment later is accepted.
    await waitFor(
      async () =>
        (await submit('acmeOneAtATime', { capability: 'slow', payload: {} })).status === 202,
      { timeoutMs: 5000, message: 'the freed slot took no new task' },
    );
  });
});
