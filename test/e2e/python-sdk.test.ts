/**
 * The Python worker SDK (sdks/python) against the running stack, on Debian's /usr/bin/python3 and
 * python3-redis: its unit tests, the package's wheel installed into a virtualenv (which every
 * Python test then runs), the example agent completing a task with progress and output, and an
 * agent that fails a task, renews a task's execution lease past it, drains on SIGTERM, stops when
 * an operator drains it, and stops when a newer instance fences it (409 STALE_EPOCH). Agents are confined in Redis
 * (REACH_AGENT_ACL=on), so every ack they write is signed.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { connectRedis, type TestRedis } from '../support/redis.ts';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';
import {
  PY_SDK,
  PYTHON,
  requirePythonRedis,
  pythonVenv,
  startPythonAgent,
  type PythonAgent,
} from '../support/python.ts';

const LEASE_MS = 1500;
let stack: Stack;
let redis: TestRedis;
const agents: PythonAgent[] = [];

interface TaskView {
  status: string;
  agent_id?: string;
  attempts: number;
  result?: unknown;
  timeline: { stage: string; error_code?: string; reason?: string }[];
}
interface Item {
  task_id: string;
  status: string;
  result?: unknown;
}

beforeAll(async () => {
  requirePythonRedis();
  stack = await startStack({
    env: { ...FAST_LEASES, REACH_AGENT_ACL: 'on', REACH_EXEC_LEASE_MS: String(LEASE_MS) },
  });
  redis = connectRedis(stack);
});

afterEach(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
});

afterAll(async () => {
  await redis?.quit();
  await stack?.stop();
});

function start(script: string, agentId: string, extra: Record<string, string> = {}): PythonAgent {
  const agent = startPythonAgent(script, {
    REACH_REGISTRY_URL: stack.registryUrl,
    REACH_ROUTER_URL: stack.routerUrl,
    REDIS_URL: stack.redisUrl,
    REACH_AGENT_ID: agentId,
    ...extra,
  });
  agents.push(agent);
  return agent;
}

async function healthy(agentId: string, agent: PythonAgent): Promise<void> {
  await waitFor(
    async () => {
      const r = await http<{ status: string }>(`${stack.registryUrl}/v1/agents/${agentId}`);
      return r.status === 200 && r.body.status === 'HEALTHY';
    },
    { timeoutMs: 15_000, message: `agent ${agentId} did not register:\n${agent.output()}` },
  );
}

const view = async (id: string) => (await http<TaskView>(`${stack.routerUrl}/v1/tasks/${id}`)).body;

async function settled(id: string, status: string, timeoutMs = 15_000): Promise<TaskView> {
  return waitFor(
    async () => {
      const t = await view(id);
      return t.status === status ? t : undefined;
    },
    { timeoutMs, message: `task ${id} did not become ${status}` },
  );
}

async function submit(body: Record<string, unknown>): Promise<string> {
  // An agent registry-sync just called HEALTHY reaches the router with the next snapshot (its
  // announcement follows within the write's coalescing window): until then the router answers
  // 503 NO_AGENT, which a caller sends again.
  const r = await waitFor(
    async () => {
      const res = await http<{ task_id: string; error?: string }>(`${stack.routerUrl}/v1/tasks`, {
        body,
      });
      return res.status === 503 && res.body.error === 'NO_AGENT' ? undefined : res;
    },
    { timeoutMs: 5_000, intervalMs: 50, message: 'the router never routed to the agent' },
  );
  expect(r.status).toBe(202);
  return r.body.task_id;
}

describe('the Python worker SDK', () => {
  it("passes its unit tests, and installs as a wheel into a venv that uses Debian's redis", () => {
    const unit = spawnSync(PYTHON, ['-m', 'unittest', 'discover', '-s', 'tests'], {
      cwd: PY_SDK,
      env: { PATH: process.env.PATH ?? '', PYTHONPATH: join(PY_SDK, 'src') },
      encoding: 'utf8',
    });
    expect(unit.status, unit.stderr).toBe(0);
    expect(unit.stderr).toMatch(/Ran [1-9]\d* tests?[\s\S]*OK/);

    // Every Python agent and caller of these tests runs from this venv (support/python.ts).
    const venv = pythonVenv();
    expect(venv.wheel).toMatch(/agent_reach-[\d.]+-py3-none-any\.whl$/);
    const where = spawnSync(
      venv.python,
      ['-c', 'import agent_reach, redis; print(agent_reach.__file__); print(redis.__file__)'],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
    );
    expect(where.status, where.stderr).toBe(0);
    const [sdk, redisPy] = where.stdout.trim().split('\n');
    expect(sdk).toMatch(/\/venv\/lib\/python3\.\d+\/site-packages\/agent_reach\/__init__\.py$/);
    expect(redisPy).toBe('/usr/lib/python3/dist-packages/redis/__init__.py');
    // Its one required dependency is redis, and Debian's satisfies it: nothing came from an index.
    const deps = spawnSync(
      venv.python,
      [
        '-c',
        "import importlib.metadata as m; print([r for r in m.requires('agent-reach') if 'extra ==' not in r]); print(m.version('redis'))",
      ],
      { encoding: 'utf8' },
    );
    expect(deps.status, deps.stderr).toBe(0);
    const [required, redisVersion] = deps.stdout.trim().split('\n');
    // setuptools writes `redis (>=4.3)` or `redis>=4.3`, depending on its version.
    expect(required).toMatch(/^\['redis ?\(?>=4\.3\)?'\]$/);
    expect(redisVersion).toMatch(/^(4\.([3-9]|\d\d)|[5-9])\./);
  });

  it('the example agent completes a task with its progress and output on the callback topic first', async () => {
    const agent = start('examples/echo_agent.py', 'py-echo-1');
    await healthy('py-echo-1', agent);
    const id = await submit({
      capability: 'py-echo',
      payload: { text: 'hello' },
      callback_topic: 'py-cb',
      stream: true,
    });
    const done = await settled(id, 'completed');
    expect(done.result).toEqual({ text: 'hello' });
    expect(done.attempts).toBe(1);
    const stages = done.timeline.map((e) => e.stage);
    expect(stages).toEqual(expect.arrayContaining(['sent', 'received', 'streaming', 'completed']));
    const items = (
      await http<{ items: Item[] }>(`${stack.routerUrl}/v1/callbacks/py-cb?limit=100`)
    ).body.items.filter((i) => i.task_id === id);
    expect(items.map((i) => i.status)).toEqual(['progress', 'chunk', 'completed']);
    expect(agent.proc.exitCode).toBeNull();
    // Every ack was signed with the instance's key (REACH_AGENT_ACL=on refuses the others).
    const stats = await redis.hgetall(stack.keys.stats());
    expect(Object.keys(stats).filter((k) => k.startsWith('acks_refused:'))).toEqual([]);
    // A drain with nothing running: exit 0, deregistered.
    expect(await agent.stop()).toBe(0);
    await waitFor(
      async () => (await http(`${stack.registryUrl}/v1/agents/py-echo-1`)).status === 404,
      { message: 'py-echo-1 was not removed after its deregistration' },
    );
  });

  it("the README's agent runs as written: it completes a task and fails one with its error code", async () => {
    const readme = readFileSync(join(PY_SDK, 'README.md'), 'utf8');
    const code = /```python\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    expect(code).toContain('agent.run()');
    const dir = mkdtempSync(join(tmpdir(), 'reach-py-'));
    const file = join(dir, 'readme_agent.py');
    // Only the addresses change: the test's services are on ports of their own.
    writeFileSync(
      file,
      code
        .replace('http://127.0.0.1:8080', stack.registryUrl)
        .replace('redis://127.0.0.1:6379', stack.redisUrl),
    );
    try {
      const agent = start(file, 'shouter-1');
      await healthy('shouter-1', agent);
      const ok = await submit({ capability: 'shout', payload: { text: 'hi' } });
      expect(await settled(ok, 'completed')).toMatchObject({ result: { text: 'HI' } });
      const bad = await submit({ capability: 'shout', payload: { text: 5 } });
      const dead = await settled(bad, 'dead');
      expect(dead.timeline.find((e) => e.stage === 'failed')).toMatchObject({
        error_code: 'INVALID_PAYLOAD',
      });
    } finally {
      await Promise.all(agents.splice(0).map((a) => a.stop()));
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('fails a task with its error code, renews a task running past its execution lease, stops a cancelled one', async () => {
    const agent = start('tests/work_agent.py', 'py-work-1');
    await healthy('py-work-1', agent);
    const failed = await submit({ capability: 'py-work', payload: { fail: 'INVALID_PAYLOAD' } });
    const dead = await settled(failed, 'dead');
    expect(dead.attempts).toBe(1);
    expect(dead.timeline.find((e) => e.stage === 'failed')).toMatchObject({
      error_code: 'INVALID_PAYLOAD',
    });
    // Three leases long: taken back after one unless renewed.
    const slow = await submit({ capability: 'py-work', payload: { sleep_ms: 3 * LEASE_MS, n: 7 } });
    const done = await settled(slow, 'completed');
    expect(done).toMatchObject({ attempts: 1, result: { done: 7 } });
    expect(done.timeline.map((e) => e.stage)).not.toContain('retried');

    // Cancelled while running: Task.cancelled is set, the handler returns, the timeline says stopped.
    const long = await submit({ capability: 'py-work', payload: { sleep_ms: 60_000 } });
    await waitFor(async () => (await view(long)).timeline.some((e) => e.stage === 'received'), {
      message: 'the long task was not received',
    });
    const cancel = await http(`${stack.routerUrl}/v1/tasks/${long}/cancel`, { body: {} });
    expect(cancel.status).toBeLessThan(300);
    await waitFor(async () => (await view(long)).timeline.some((e) => e.stage === 'stopped'), {
      message: `the cancelled handler did not stop:\n${agent.output()}`,
    });
    expect((await view(long)).status).toBe('cancelled');
  });

  it("a handler runs a child task: linked to its parent both ways, its result in the parent's", async () => {
    // Two agents: the loop guard keeps a child from the agents already on its parent's trace.
    const one = start('tests/work_agent.py', 'py-work-7');
    const other = start('tests/work_agent.py', 'py-work-8');
    await healthy('py-work-7', one);
    await healthy('py-work-8', other);
    const id = await submit({ capability: 'py-work', payload: { n: 10, child: { n: 11 } } });
    const done = await settled(id, 'completed').catch((err: unknown) => {
      throw new Error(`${String(err)}\n${one.output()}\n${other.output()}`);
    });
    expect(done.result).toEqual({ done: 10, child: { done: 11 } });
    const children = (done as TaskView & { children?: string[] }).children ?? [];
    expect(children).toHaveLength(1);
    const child = await http<{ parent_task_id?: string; hops?: number }>(
      `${stack.routerUrl}/v1/tasks/${children[0]}`,
    );
    expect(child.body).toMatchObject({ parent_task_id: id, hops: 1 });
  });

  it('drains on SIGTERM: the running task completes, then the agent deregisters and exits 0', async () => {
    const agent = start('tests/work_agent.py', 'py-work-2');
    await healthy('py-work-2', agent);
    const id = await submit({ capability: 'py-work', payload: { sleep_ms: 1500, n: 2 } });
    await waitFor(async () => (await view(id)).timeline.some((e) => e.stage === 'received'), {
      message: 'the task was not received',
    });
    agent.proc.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    expect(await view(id)).toMatchObject({ status: 'completed', attempts: 1, result: { done: 2 } });
    await waitFor(
      async () => (await http(`${stack.registryUrl}/v1/agents/py-work-2`)).status === 404,
      { message: 'py-work-2 was not removed after its deregistration' },
    );
  });

  it('starts in two phases: STARTING and given no task until mark_ready(), then served', async () => {
    const agent = start('tests/work_agent.py', 'py-work-4', { WORK_READY_AFTER_MS: '2500' });
    await waitFor(
      async () => {
        const r = await http<{ status: string }>(`${stack.registryUrl}/v1/agents/py-work-4`);
        return r.status === 200 && r.body.status === 'STARTING';
      },
      { timeoutMs: 15_000, message: `py-work-4 did not register STARTING:\n${agent.output()}` },
    );
    const early = await http<{ error?: string }>(`${stack.routerUrl}/v1/tasks`, {
      body: { capability: 'py-work', payload: { n: 8 }, on_no_agent: 'reject' },
    });
    expect(early.status).toBe(503);
    expect(early.body.error).toBe('NO_AGENT');
    await healthy('py-work-4', agent);
    const id = await submit({ capability: 'py-work', payload: { n: 8 } });
    expect(await settled(id, 'completed')).toMatchObject({ result: { done: 8 } });
  });

  it('a task held by an agent killed with SIGKILL is taken back and completed by another', async () => {
    const doomed = start('tests/work_agent.py', 'py-work-5');
    await healthy('py-work-5', doomed);
    // Long on its first attempt only: the attempt the killed agent holds never ends.
    const id = await submit({
      capability: 'py-work',
      payload: { sleep_ms: 60_000, first_attempt_only: true, n: 5 },
    });
    await waitFor(async () => (await view(id)).timeline.some((e) => e.stage === 'received'), {
      message: 'the task was not received',
    });
    doomed.proc.kill('SIGKILL');
    expect(await doomed.exited).toBe(128);
    const heir = start('tests/work_agent.py', 'py-work-6');
    await healthy('py-work-6', heir);
    // Unrenewed, its execution lease lapses (and the agent goes OFFLINE): sent again elsewhere.
    const done = await settled(id, 'completed', 20_000);
    expect(done).toMatchObject({ agent_id: 'py-work-6', attempts: 2, result: { done: 5 } });
    expect(done.timeline.map((e) => e.stage)).toContain('retried');
  });

  it('stops and exits 0 when an operator drains it, without registering again', async () => {
    const agent = start('tests/work_agent.py', 'py-work-7');
    await healthy('py-work-7', agent);
    const drain = await http(`${stack.routerUrl}/v1/agents/py-work-7/drain`, { body: {} });
    expect(drain.status, JSON.stringify(drain.body)).toBe(200);
    expect(await agent.exited).toBe(0);
    expect(agent.output()).toMatch(/drained by an operator/);
    expect(agent.output()).not.toMatch(/registering again/);
    expect((await http(`${stack.registryUrl}/v1/agents/py-work-7`)).status).toBe(404);
  });

  it('stops reading and exits when a newer instance fences it off (STALE_EPOCH)', async () => {
    const agent = start('tests/work_agent.py', 'py-work-3', { WORK_AGENT_INSTANCE_ID: 'old' });
    await healthy('py-work-3', agent);
    const taken = await http<{ epoch: number }>(`${stack.registryUrl}/v1/agents/register`, {
      body: {
        agent_id: 'py-work-3',
        instance_id: 'new',
        capabilities: ['py-work'],
        max_concurrency: 1,
      },
    });
    expect(taken.status).toBe(200);
    // The next heartbeat answers 409 STALE_EPOCH: the agent stops, without deregistering the new one.
    expect(await agent.exited).toBe(3);
    expect(agent.output()).toMatch(/fenced/);
    const record = await http<{ status: string }>(`${stack.registryUrl}/v1/agents/py-work-3`);
    expect(record.status).toBe(200);
  });
});
