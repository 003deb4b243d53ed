/**
 * Task search (`GET /v1/tasks`) on a mix of 1,000 tasks of two tenants with auth on, a short
 * REACH_TASK_RETENTION_S and four task shards (three on the cluster leg): each filter answers
 * exactly the tasks the test knows match, page by page newest first; a tenant sees only its own;
 * and once the first tasks' Redis state expired, a search reaching back finds them in the
 * InfluxDB archive (`archived: true`, `source: redis+influxdb`) beside the recent ones, none twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NonRetryableError, type ReachAgent, type TaskContext } from '@agent-reach/worker-sdk';
import { waitFor } from '@agent-reach/testkit';
import { startAgent } from '../support/agents.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';

const ADMIN = 'e2e-admin-key-of-the-search-test-0123456789';
/** Short enough for the first tasks to expire during the test. */
const RETENTION_S = 25;
const onCluster = process.env.REACH_TEST_REDIS === 'cluster';

interface Summary {
  task_id: string;
  tenant: string;
  status: string;
  capability: string;
  agent_id: string;
  attempts: number;
  created_at: number;
  ended_at?: number;
  duration_ms?: number;
  error_code?: string;
  parent_task_id?: string;
  archived?: boolean;
}
interface Page {
  items: Summary[];
  next_cursor: string | null;
  source: string;
}

/** What the test submitted, to tell what each search must answer. */
interface Known {
  id: string;
  tenant: 'acme' | 'globex';
  capability: string;
  status: 'completed' | 'dead';
  parent?: string;
  old: boolean;
}

let stack: Stack;
const agents: ReachAgent[] = [];
const key: Record<string, string> = {};
const known: Known[] = [];
let oldSince = 0;
/** When the recent tasks' submission began. */
let newSince = 0;

const handler = async (task: TaskContext): Promise<unknown> => {
  if (task.capability === 'doomed')
    throw new NonRetryableError('no model', { code: 'MODEL_NOT_LOADED' });
  if (task.capability === 'slow') await new Promise((r) => setTimeout(r, 1200));
  return { ok: true };
};

async function startWith(agentId: string, capabilities: string[], apiKey: string) {
  agents.push(
    await startAgent(stack, agentId, capabilities, handler, { maxConcurrency: 32, apiKey }),
  );
}

const as = (who: string) => ({ authorization: `Bearer ${key[who]}` });

async function makeKey(body: Record<string, unknown>): Promise<string> {
  const res = await http<{ key: string }>(`${stack.routerUrl}/v1/keys`, {
    body,
    headers: { authorization: `Bearer ${ADMIN}` },
  });
  expect(res.status).toBe(201);
  return res.body.key;
}

/** Submits tasks in one batch as `who`, recording what each should end as. */
async function submit(who: 'acme' | 'globex', tasks: Omit<Known, 'tenant' | 'status'>[]) {
  const res = await http<{ results: { http_status: number }[] }>(
    `${stack.routerUrl}/v1/tasks/batch`,
    {
      body: {
        tasks: tasks.map((t) => ({
          task_id: t.id,
          capability: t.capability,
          payload: {},
          ...(t.parent ? { parent_task_id: t.parent } : {}),
        })),
      },
      headers: as(who),
    },
  );
  expect(res.status).toBe(200);
  expect(res.body.results.every((i) => i.http_status === 202)).toBe(true);
  for (const t of tasks)
    known.push({ ...t, tenant: who, status: t.capability === 'doomed' ? 'dead' : 'completed' });
}

/** Every page of a search as `who`, in order; checks that no task comes twice. */
async function searchAll(
  who: string,
  query: Record<string, string | number>,
): Promise<{ items: Summary[]; sources: Set<string> }> {
  const items: Summary[] = [];
  const sources = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 0; pages < 200; pages++) {
    const qs: URLSearchParams = new URLSearchParams(
      Object.entries({ ...query, ...(cursor ? { cursor } : {}) }).map(
        ([k, v]): [string, string] => [k, String(v)],
      ),
    );
    const res: { status: number; body: Page } = await http<Page>(
      `${stack.routerUrl}/v1/tasks?${qs.toString()}`,
      { headers: as(who) },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    items.push(...res.body.items);
    sources.add(res.body.source);
    cursor = res.body.next_cursor;
    if (cursor === null) break;
  }
  expect(cursor).toBeNull();
  expect(new Set(items.map((i) => i.task_id)).size).toBe(items.length);
  return { items, sources };
}

const ids = (items: Summary[]) => items.map((i) => i.task_id).sort();
const expected = (pick: (k: Known) => boolean) =>
  known
    .filter(pick)
    .map((k) => k.id)
    .sort();

/**
 * Waits until the operator's search finds `n` final tasks created since `since`; on time-out,
 * says which tasks were not found final and how the first of them stand.
 */
async function waitForFinal(since: number, n: number): Promise<void> {
  let found: Summary[] = [];
  try {
    await waitFor(
      async () => {
        found = (await searchAll('admin', { since, status: 'completed,dead', limit: 1000 })).items;
        return found.length >= n ? true : undefined;
      },
      { timeoutMs: 60_000, intervalMs: 1000, message: `fewer than ${n} tasks ended` },
    );
  } catch (err: unknown) {
    const ended = new Set(found.map((i) => i.task_id));
    const notEnded = known.filter(
      (k) =>
        k.old === (since !== newSince) && !ended.has(`${k.tenant}/${k.id}`) && !ended.has(k.id),
    );
    const views = await Promise.all(
      notEnded.slice(0, 5).map(async (k) => {
        const res = await http(
          `${stack.routerUrl}/v1/tasks/${encodeURIComponent(`${k.tenant}/${k.id}`)}`,
          {
            headers: as('admin'),
          },
        );
        return `${k.tenant}/${k.id}: ${res.status} ${JSON.stringify(res.body)}`;
      }),
    );
    throw new Error(
      `${found.length} of ${n} found ended; not found: ${notEnded.length}\n${views.join('\n')}\n` +
        `service errors: ${stack.errorLines().slice(-10).join('\n')}`,
      { cause: err },
    );
  }
}

beforeAll(async () => {
  stack = await startStack({
    influx: 'v1',
    env: {
      ...FAST_LEASES,
      REACH_AUTH: 'required',
      REACH_ADMIN_KEY: ADMIN,
      REACH_TASK_RETENTION_S: String(RETENTION_S),
      // Small pages of the index: every search here crosses shard frontiers.
      REACH_SEARCH_SCAN_MAX: '1000',
      ...(onCluster ? {} : { REACH_TASK_SHARDS: '4' }),
    },
  });
  key.admin = ADMIN;
  key.acme = await makeKey({ tenant: 'acme', role: 'caller' });
  key.globex = await makeKey({ tenant: 'globex', role: 'caller' });
  const acmeAgents = await makeKey({ tenant: 'acme', role: 'agent' });
  const globexAgents = await makeKey({ tenant: 'globex', role: 'agent' });
  await startWith('acme-1', ['echo', 'slow'], acmeAgents);
  // Children run elsewhere than their parents (one agent twice in a chain is a loop).
  await startWith('acme-2', ['child'], acmeAgents);
  await startWith('gpu-7', ['doomed'], acmeAgents);
  await startWith('globex-1', ['echo', 'doomed'], globexAgents);

  // The old tasks: 150 of acme's, archived and expired from Redis before the rest are submitted.
  oldSince = Date.now() - 1000;
  await submit('acme', [
    ...Array.from({ length: 120 }, (_, i) => ({
      id: `old-echo-${i}`,
      capability: 'echo',
      old: true,
    })),
    ...Array.from({ length: 30 }, (_, i) => ({
      id: `old-doomed-${i}`,
      capability: 'doomed',
      old: true,
    })),
  ]);
  await waitForFinal(oldSince, 150);
  // Their Redis state expires RETENTION_S after they ended; wait until none is left there.
  await waitFor(
    async () => {
      const r = await http(`${stack.routerUrl}/v1/tasks/old-echo-119`, { headers: as('acme') });
      const body = r.body as { archived?: boolean };
      return r.status === 404 || body.archived === true ? true : undefined;
    },
    {
      timeoutMs: (RETENTION_S + 40) * 1000,
      intervalMs: 1000,
      message: 'the old tasks never expired',
    },
  );

  // The recent ones: 850 more over both tenants.
  newSince = Date.now();
  const parents = Array.from({ length: 20 }, (_, i) => ({
    id: `parent-${i}`,
    capability: 'echo',
    old: false,
  }));
  await submit('acme', parents);
  await submit('acme', [
    ...Array.from({ length: 350 }, (_, i) => ({ id: `echo-${i}`, capability: 'echo', old: false })),
    ...Array.from({ length: 100 }, (_, i) => ({
      id: `doomed-${i}`,
      capability: 'doomed',
      old: false,
    })),
    ...Array.from({ length: 40 }, (_, i) => ({ id: `slow-${i}`, capability: 'slow', old: false })),
    ...Array.from({ length: 80 }, (_, i) => ({
      id: `child-${i}`,
      capability: 'child',
      parent: `parent-${i % 20}`,
      old: false,
    })),
  ]);
  await submit('globex', [
    ...Array.from({ length: 200 }, (_, i) => ({ id: `echo-${i}`, capability: 'echo', old: false })),
    ...Array.from({ length: 60 }, (_, i) => ({
      id: `doomed-${i}`,
      capability: 'doomed',
      old: false,
    })),
  ]);
  expect(known).toHaveLength(1000);
  await waitForFinal(newSince, 850);
}, 240_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await stack?.stop();
});

describe('task search', () => {
  const recent = (k: Known) => !k.old;
  const acmeRecent = (k: Known) => recent(k) && k.tenant === 'acme';

  it('finds a tenant’s recent tasks by capability and by status, newest first, from Redis', async () => {
    // Without `since`, what Redis holds for sure: the last REACH_TASK_RETENTION_S.
    const hot = await searchAll('acme', { capability: 'echo' });
    expect(hot.sources).toEqual(new Set(['redis']));
    const echoes = new Set(expected((k) => acmeRecent(k) && k.capability === 'echo'));
    expect(hot.items.every((i) => echoes.has(i.task_id))).toBe(true);

    const { items } = await searchAll('acme', { since: newSince, capability: 'echo', limit: 50 });
    expect(ids(items)).toEqual([...echoes].sort());
    const created = items.map((i) => i.created_at);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    expect(items.every((i) => i.tenant === 'acme' && i.status === 'completed')).toBe(true);

    const dead = await searchAll('acme', { since: newSince, status: 'dead,cancelled' });
    expect(ids(dead.items)).toEqual(expected((k) => acmeRecent(k) && k.status === 'dead'));
  });

  it('finds what one agent failed with one code, and a parent’s children', async () => {
    const failed = await searchAll('acme', {
      since: newSince,
      agent_id: 'gpu-7',
      error_code: 'MODEL_NOT_LOADED',
    });
    expect(ids(failed.items)).toEqual(expected((k) => acmeRecent(k) && k.capability === 'doomed'));
    expect(failed.items.every((i) => i.error_code === 'MODEL_NOT_LOADED')).toBe(true);
    const other = await searchAll('acme', { since: newSince, error_code: 'RATE_LIMITED' });
    expect(other.items).toEqual([]);

    const children = await searchAll('acme', { since: newSince, parent_task_id: 'parent-3' });
    expect(ids(children.items)).toEqual(
      expected((k) => k.tenant === 'acme' && k.parent === 'parent-3'),
    );
    expect(children.items.every((i) => i.parent_task_id === 'parent-3')).toBe(true);
  });

  it('finds the slow ones by duration, and a time window', async () => {
    const slow = await searchAll('acme', { since: newSince, min_duration_ms: 1200 });
    expect(slow.items.every((i) => (i.duration_ms ?? 0) >= 1200)).toBe(true);
    const slowIds = new Set(ids(slow.items));
    expect(expected((k) => k.capability === 'slow').every((id) => slowIds.has(id))).toBe(true);

    // A window around the parents' submission: everything acme created in it, nothing else.
    const all = await searchAll('acme', { since: newSince, limit: 1000 });
    const parent = all.items.find((i) => i.task_id === 'parent-0') as Summary;
    const since = parent.created_at;
    const until = since + 50;
    const windowed = await searchAll('acme', { since, until });
    expect(ids(windowed.items)).toEqual(
      ids(all.items.filter((i) => i.created_at >= since && i.created_at <= until)),
    );
    expect(windowed.items.length).toBeGreaterThan(0);
  });

  it('keeps each tenant to its own tasks; operators choose a tenant', async () => {
    const globex = await searchAll('globex', { since: newSince, limit: 1000 });
    expect(ids(globex.items)).toEqual(expected((k) => recent(k) && k.tenant === 'globex'));
    const refused = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks?tenant=acme`, {
      headers: as('globex'),
    });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('FORBIDDEN');
    const hidden = await searchAll('globex', { since: newSince, parent_task_id: 'acme/parent-3' });
    expect(hidden.items).toEqual([]);

    const operator = await searchAll('admin', {
      since: newSince,
      tenant: 'globex',
      status: 'dead',
    });
    expect(operator.items.map((i) => i.task_id).sort()).toEqual(
      expected((k) => recent(k) && k.tenant === 'globex' && k.status === 'dead').map(
        (id) => `globex/${id}`,
      ),
    );
  });

  it('reaches past Redis into the archive, each task once', async () => {
    // The old echoes expired from Redis (dead tasks stay longer, for the dead-letter queue).
    const old = await waitFor(
      async () => {
        const page = await searchAll('acme', {
          since: oldSince,
          until: newSince - 1,
          capability: 'echo',
          limit: 30,
        });
        return page.items.every((i) => i.archived) ? page : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 1000, message: 'the old echoes never left Redis' },
    );
    expect(old.sources).toEqual(new Set(['redis+influxdb']));
    expect(ids(old.items)).toEqual(expected((k) => k.old && k.capability === 'echo'));
    expect(old.items.every((i) => i.status === 'completed' && i.agent_id === 'acme-1')).toBe(true);

    // Old and recent together: the archive holds the recent ones too, shown once (Redis's copy).
    const echoes = await searchAll('acme', { since: oldSince, capability: 'echo', limit: 40 });
    expect(ids(echoes.items)).toEqual(
      expected((k) => k.tenant === 'acme' && k.capability === 'echo'),
    );
    const created = echoes.items.map((i) => i.created_at);
    expect(created).toEqual([...created].sort((a, b) => b - a));
    const doomed = await searchAll('acme', {
      since: oldSince,
      error_code: 'MODEL_NOT_LOADED',
      status: 'dead',
    });
    expect(ids(doomed.items)).toEqual(
      expected((k) => k.tenant === 'acme' && k.capability === 'doomed'),
    );
  });

  it('refuses a malformed query with a stable code', async () => {
    for (const qs of [
      'status=finished',
      'since=yesterday',
      'limit=5000',
      'cursor=%21%21',
      'until=1&since=5',
    ]) {
      const res = await http<{ error: string }>(`${stack.routerUrl}/v1/tasks?${qs}`, {
        headers: as('acme'),
      });
      expect(res.status, qs).toBe(400);
      expect(['INVALID_QUERY'], qs).toContain(res.body.error);
    }
  });
});
