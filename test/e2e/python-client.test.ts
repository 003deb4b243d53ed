/**
 * The Python caller client (sdks/python, ReachClient) against a running stack, on Debian's
 * /usr/bin/python3, installed from its wheel (support/python.ts, pythonVenv): a Python agent serves `py-work`, and tests/caller_checks.py submits (single,
 * repeated task_id, batch, waited), awaits results from its callback topic, follows a task's
 * events, cancels, and meets the stable error codes. The README's caller runs as written.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@agent-reach/testkit';
import { FAST_LEASES, http, startStack, type Stack } from '../support/stack.ts';
import {
  PY_SDK,
  requirePythonRedis,
  pythonVenv,
  startPythonAgent,
  type PythonAgent,
} from '../support/python.ts';

let stack: Stack;
const agents: PythonAgent[] = [];

beforeAll(async () => {
  requirePythonRedis();
  stack = await startStack({ env: { ...FAST_LEASES } });
});

afterAll(async () => {
  await Promise.all(agents.splice(0).map((a) => a.stop()));
  await stack?.stop();
});

function agent(script: string, agentId: string): PythonAgent {
  const a = startPythonAgent(script, {
    REACH_REGISTRY_URL: stack.registryUrl,
    REDIS_URL: stack.redisUrl,
    REACH_AGENT_ID: agentId,
  });
  agents.push(a);
  return a;
}

/** Runs a Python caller script to its end; its stdout's last line parsed as JSON. */
function runCaller(script: string): Record<string, unknown> {
  const run = spawnSync(pythonVenv().python, [script], {
    env: { PATH: process.env.PATH ?? '', REACH_ROUTER_URL: stack.routerUrl },
    encoding: 'utf8',
    timeout: 90_000,
  });
  expect(run.status, run.stderr).toBe(0);
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as Record<string, unknown>;
}

describe('the Python caller client', () => {
  it('submits, waits, follows events, cancels and raises the stable codes', async () => {
    const a = agent('tests/work_agent.py', 'py-caller-work');
    await waitFor(
      async () => (await http(`${stack.registryUrl}/v1/agents/py-caller-work`)).status === 200,
      { timeoutMs: 15_000, message: `the agent did not register:\n${a.output()}` },
    );
    const seen = runCaller(join(PY_SDK, 'tests', 'caller_checks.py'));
    expect(seen['run']).toEqual({ done: 3 });
    // The same task_id twice: one task, one result.
    expect(seen['repeat']).toEqual({ same_id: true, result: { done: 4 } });
    expect(seen['events']).toEqual(
      expect.arrayContaining([
        ['stage', 'accepted'],
        ['stage', 'received'],
        ['progress', 0.5],
        ['chunk', 'a'],
        ['chunk', 'b'],
        ['stage', 'completed'],
      ]),
    );
    expect((seen['events'] as unknown[][]).at(-1)).toEqual(['stage', 'completed']);
    expect(seen['events_final']).toBe(true);
    expect(seen['batch']).toEqual({
      statuses: [202, 202, 202],
      results: [{ done: 0 }, { done: 1 }, { done: 2 }],
    });
    expect(seen['waited']).toMatchObject({ status: 'completed', result: { done: 6 } });
    expect(seen['failed']).toEqual({ status: 'dead', error: 'not_retryable' });
    expect(seen['cancel']).toMatchObject({ status: 'cancelled' });
    expect(seen['cancelled_item']).toBe('cancelled');
    expect(seen['cancel_final']).toEqual({ code: 'ALREADY_FINAL', status: 409 });
    expect(seen['unknown_task']).toEqual({ code: 'TASK_NOT_FOUND', status: 404 });
    expect(seen['no_agent']).toEqual({ task_id: 'nobody-1', attempts: 2, code: 'NO_AGENT' });
  });

  it("the README's caller runs as written against the README's agent", async () => {
    const readme = readFileSync(join(PY_SDK, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
    const agentCode = blocks.find((b) => b.includes('agent.run()')) ?? '';
    const callerCode = blocks.find((b) => b.includes('ReachClient(')) ?? '';
    expect(callerCode).toContain('client.run(');
    const dir = mkdtempSync(join(tmpdir(), 'reach-py-'));
    try {
      // Only the addresses change: the test's services are on ports of their own.
      const local = (code: string): string =>
        code
          .replace('http://127.0.0.1:8080', stack.registryUrl)
          .replace('http://127.0.0.1:8081', stack.routerUrl)
          .replace('redis://127.0.0.1:6379', stack.redisUrl);
      writeFileSync(join(dir, 'agent.py'), local(agentCode));
      writeFileSync(join(dir, 'caller.py'), local(callerCode));
      agent(join(dir, 'agent.py'), 'shouter-1');
      const run = spawnSync(pythonVenv().python, [join(dir, 'caller.py')], {
        env: { PATH: process.env.PATH ?? '' },
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain("{'text': 'HI'}");
      expect(run.stdout).toContain('INVALID_PAYLOAD');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
