/**
 * A Python pull agent (sdks/python, `channel="pull"`) against a running stack, confined in Redis
 * (REACH_AGENT_ACL=on, so its acks are signed): it takes pooled tasks most urgent band first with
 * one slot, releases unrun the pool tasks whose placement it does not offer, and fails its probes
 * while its health check says no, which makes it SUSPECT. On a Redis Cluster
 * (REACH_TEST_REDIS=cluster) the agent speaks to it with REDIS_CLUSTER_NODES.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RELEASED_CONSUMER, WORKER_GROUP } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';
import {
  PY_SDK,
  requirePythonRedis,
  startPythonAgent,
  type PythonAgent,
} from '../support/python.ts';

let stack: Stack;
let redis: TestRedis;
let gates: string;
const agents: PythonAgent[] = [];

interface TaskView {
  status: string;
  agent_id?: string;
  result?: unknown;
}

beforeAll(async () => {
  requirePythonRedis();
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AGENT_ACL: 'on', REACH_PROBE_MS: '300' },
  });
  redis = connectRedis(stack);
  gates = mkdtempSync(join(tmpdir(), 'reach-py-gates-'));
});

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
  if (gates) rmSync(gates, { recursive: true, force: true });
});

async function pullAgent(agentId: string, env: Record<string, string> = {}): Promise<PythonAgent> {
  const agent = startPythonAgent('tests/pull_agent.py', {
    REACH_REGISTRY_URL: stack.registryUrl,
    REDIS_URL: stack.redisUrl,
    REACH_AGENT_ID: agentId,
    GATE_DIR: gates,
    // On the cluster leg the agent is a Cluster client (agent_reach.cluster), confined by ACL.
    ...(stack.redisClusterNodes ? { REDIS_CLUSTER_NODES: stack.redisClusterNodes } : {}),
    ...env,
  });
  agents.push(agent);
  await waitFor(
    async () => (await http(`${stack.registryUrl}/v1/agents/${agentId}`)).status === 200,
    { timeoutMs: 15_000, message: `${agentId} did not register:\n${agent.output()}` },
  );
  return agent;
}

/**
 * Submits a batch task straight to the pool, whatever its depth: these tests read the pool as the
 * agent does (a request that says `reject` never waits in the waiting room, which would otherwise
 * keep all but two of them until the agent's one slot frees).
 */
async function pooled(n: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await http<{ task_id: string; stream: string }>(`${stack.routerUrl}/v1/tasks`, {
    body: {
      capability: 'py-crunch',
      mode: 'batch',
      on_at_capacity: 'reject',
      payload: { n },
      ...extra,
    },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  return r.body.task_id;
}

const started = (agent: PythonAgent): string[] =>
  [...agent.stdout().matchAll(/^started (\S+)$/gm)].map((m) => m[1] ?? '');
const open = (n: string): void => writeFileSync(join(gates, n), '');
const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

async function refusedAcks(): Promise<string[]> {
  const stats = await redis.hgetall(stack.keys.stats());
  return Object.keys(stats).filter((k) => k.startsWith('acks_refused:'));
}

describe('a Python pull agent', () => {
  it('with one slot takes the priority-9 task, then 4, before the priority-0 ones that waited longer', async () => {
    const agent = await pullAgent('py-puller', { PULL_REGION: 'eu' });
    const first = await pooled('first');
    await waitFor(() => started(agent).length === 1, {
      message: `the first task did not start:\n${agent.output()}`,
    });
    const ids = [first, await pooled('low-1'), await pooled('low-2', { priority: 0 })];
    ids.push(await pooled('mid', { priority: 4 }), await pooled('high', { priority: 9 }));
    expect(await redis.xlen(stack.keys.poolBand('py-crunch', 2))).toBe(1);
    expect(await redis.xlen(stack.keys.poolBand('py-crunch', 1))).toBe(1);

    for (const next of ['high', 'mid', 'low-1', 'low-2']) {
      open(started(agent).at(-1) ?? '');
      await waitFor(() => started(agent).at(-1) === next || started(agent).length > 5, {
        message: `${next} did not start next (started: ${started(agent).join(', ')})`,
      });
    }
    open('low-2');
    expect(started(agent)).toEqual(['first', 'high', 'mid', 'low-1', 'low-2']);
    for (const id of ids)
      await waitFor(async () => (await view(id)).status === 'completed', {
        message: `task ${id} did not complete`,
      });
    expect(await view(ids[4] ?? '')).toMatchObject({
      agent_id: 'py-puller',
      result: { n: 'high' },
    });
    await waitFor(async () => (await redis.xlen(stack.keys.pool('py-crunch'))) === 0, {
      message: 'the pool was not emptied',
    });
    expect(await refusedAcks()).toEqual([]);
  });

  it('releases unrun a pool task of a strict region elsewhere or a tag it lacks, and runs its own', async () => {
    const agent = await pullAgent('py-puller-eu', { PULL_REGION: 'eu', PULL_TAGS: 'fast' });
    const us = await pooled('strict-us', { region: 'us', region_policy: 'strict' });
    const gpu = await pooled('needs-gpu', { tags: ['gpu'] });
    const pool = stack.keys.pool('py-crunch');
    await waitFor(
      async () => {
        const rows = (await redis.xpending(pool, WORKER_GROUP, '-', '+', 10)) as [string, string][];
        return rows.filter(([, consumer]) => consumer === RELEASED_CONSUMER).length === 2;
      },
      { message: `the two entries were not released:\n${agent.output()}` },
    );
    open('strict-eu');
    const eu = await pooled('strict-eu', { region: 'eu', region_policy: 'strict', tags: ['fast'] });
    await waitFor(async () => (await view(eu)).status === 'completed', {
      message: `the eu task did not complete:\n${agent.output()}`,
    });
    expect(started(agent)).toEqual(['strict-eu']);
    expect(await view(us)).toMatchObject({ status: 'sent', agent_id: '' });
    expect(await view(gpu)).toMatchObject({ status: 'sent', agent_id: '' });
    expect(await refusedAcks()).toEqual([]);
    for (const id of [us, gpu])
      expect((await http(`${stack.routerUrl}/v1/tasks/${id}/cancel`, { body: {} })).status).toBe(
        202,
      );
  });

  it('registers with an inline AgentCard whose placement gives its region, and takes a strict task there', async () => {
    const agent = await pullAgent('py-carded', { PULL_CARD_REGION: 'ap-south' });
    // The record shows before the registration's card is stored: wait for the card too.
    const card = await waitFor(
      async () => {
        const r = await http<{ name: string }>(`${stack.registryUrl}/v1/agents/py-carded/card`);
        return r.status === 200 ? r : undefined;
      },
      { message: `py-carded's card was not registered:\n${agent.output()}` },
    );
    expect(card.body.name).toBe('Python cruncher');
    const record = await http<{ region?: string }>(`${stack.registryUrl}/v1/agents/py-carded`);
    expect(record.body.region).toBe('ap-south');
    open('in-ap');
    const id = await pooled('in-ap', { region: 'ap-south', region_policy: 'strict' });
    await waitFor(async () => (await view(id)).status === 'completed', {
      message: `the ap-south task did not complete:\n${agent.output()}`,
    });
    expect(await view(id)).toMatchObject({ agent_id: 'py-carded', result: { n: 'in-ap' } });
  });

  it('fails its probes while its health check says no, and turns SUSPECT', async () => {
    const sick = await pullAgent('py-sick', { PULL_HEALTH: 'fail' });
    await waitFor(
      async () => {
        const r = await http<{ status: string }>(`${stack.registryUrl}/v1/agents/py-sick`);
        return r.body.status === 'SUSPECT';
      },
      { timeoutMs: 15_000, message: `py-sick did not turn SUSPECT:\n${sick.output()}` },
    );
    expect(sick.output()).toMatch(/health check said no; probe failed/);
  });

  // The README's agent names one Redis by URL, as `npm start` runs it.
  it.skipIf(process.env.REACH_TEST_REDIS === 'cluster')(
    "the README's pull agent runs as written and takes a pooled task",
    async () => {
      const readme = readFileSync(join(PY_SDK, 'README.md'), 'utf8');
      const code = [...readme.matchAll(/```python\n([\s\S]*?)```/g)]
        .map((m) => m[1] ?? '')
        .find((b) => b.includes('channel="pull"'));
      expect(code).toContain('agent.run()');
      const file = join(gates, 'readme_pull_agent.py');
      // Only the addresses change: the test's services are on ports of their own.
      writeFileSync(
        file,
        (code ?? '')
          .replace('http://127.0.0.1:8080', stack.registryUrl)
          .replace('redis://127.0.0.1:6379', stack.redisUrl),
      );
      const agent = startPythonAgent(file, {});
      agents.push(agent);
      await waitFor(
        async () => (await http(`${stack.registryUrl}/v1/agents/cruncher-1`)).status === 200,
        { timeoutMs: 15_000, message: `cruncher-1 did not register:\n${agent.output()}` },
      );
      const r = await http<{ task_id: string }>(`${stack.routerUrl}/v1/tasks`, {
        body: { capability: 'crunch', mode: 'batch', priority: 9, payload: { numbers: [1, 2, 3] } },
      });
      expect(r.status).toBe(202);
      await waitFor(async () => (await view(r.body.task_id)).status === 'completed', {
        message: `the README's pull agent did not complete the task:\n${agent.output()}`,
      });
      expect(await view(r.body.task_id)).toMatchObject({
        agent_id: 'cruncher-1',
        result: { sum: 6 },
      });
    },
  );
});
