/**
 * `reach` as a real process against a running stack (registry-sync and router processes, real
 * Redis and InfluxDB) with a scripted raw-Redis worker: what a user looks for is in the human
 * output, --json parses, and the exit codes say what happened.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StatsReply, TimelineReply } from '@agent-reach/analytics';
import { type DlqReply, type TaskView } from '@agent-reach/protocol';
import { waitFor } from '@agent-reach/testkit';
import { startScriptedWorker, type ScriptedWorker } from '../support/scripted-worker.ts';
import { http, startStack, type Stack } from '../support/stack.ts';

const bin = fileURLToPath(
  new URL(
    '../bin/reach.mjs',
    pathToFileURL(createRequire(import.meta.url).resolve('@agent-reach/cli')),
  ),
);
const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
const echo = `cli-echo-${suffix}`;
const doomed = `cli-doomed-${suffix}`;
const silent = `cli-silent-${suffix}`;
const agentId = `cli-agent-${suffix}`;

let stack: Stack;
let worker: ScriptedWorker;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `reach …` (node bin/reach.mjs, or `npx reach` from the repo root) against the stack. */
function reach(args: string[], opts: { npx?: boolean } = {}): Promise<Run> {
  const env = {
    ...process.env,
    REACH_ROUTER_URL: stack.routerUrl,
    REACH_REGISTRY_URL: stack.registryUrl,
  };
  const [cmd, argv] = opts.npx
    ? ['npx', ['--no-install', 'reach', ...args]]
    : [process.execPath, [bin, ...args]];
  return new Promise((resolve) => {
    execFile(cmd, argv, { env, cwd: repoRoot, timeout: 30_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

beforeAll(async () => {
  // No archive: the task's state deleted below plays an expiry with nothing archived, so the
  // timeline comes from the stage events (test/e2e/task-history.test.ts reads archived tasks).
  stack = await startStack({
    influx: 'v1',
    env: { REACH_SWEEP_MS: '100', REACH_TASK_ARCHIVE: 'off' },
  });
  worker = await startScriptedWorker({
    redisUrl: stack.redisUrl,
    registryUrl: stack.registryUrl,
    agentId,
    capabilities: [echo, doomed, silent],
    handle: (task) => {
      if (task.capability === doomed) return { error: 'cannot do this', retryable: false };
      if (task.capability === silent) return 'ignore';
      return { result: task.payload, duration_ms: 5 };
    },
  });
});

afterAll(async () => {
  await worker?.stop();
  await stack?.stop();
});

describe('reach against a running stack', () => {
  it('agents: the worker with its status, load and capabilities; --json parses', async () => {
    const human = await reach(['agents']);
    expect(human).toMatchObject({ code: 0, stderr: '' });
    expect(human.stdout).toMatch(
      /AGENT\s+STATUS\s+HEALTH\s+INFLIGHT\s+HEARTBEAT\s+REGION\s+CHANNEL\s+CAPABILITIES/,
    );
    expect(human.stdout).toMatch(
      new RegExp(`${agentId}\\s+HEALTHY\\s+100\\s+0/4\\s+\\S+ (ms|µs|s) ago`),
    );
    expect(human.stdout).toContain(echo);
    const json = await reach(['agents', '--json', '--capability', echo]);
    const body = JSON.parse(json.stdout) as { agents: Array<{ agent_id: string; status: string }> };
    expect(body.agents).toEqual([
      expect.objectContaining({ agent_id: agentId, status: 'HEALTHY' }),
    ]);
  });

  it('submit --wait: prints the result, exit 0; the progress line goes to stderr with --progress', async () => {
    const run = await reach(['submit', echo, '{"text":"hello"}', '--wait', '--progress']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(`^task \\S+ completed by ${agentId} \\(attempt 1\\) in \\S+ m?s\\n`),
    );
    expect(run.stdout).toContain('"text": "hello"');
    expect(run.stderr).toMatch(/task \S+ accepted → sent/);
    const json = await reach([
      'submit',
      echo,
      '[1,2]',
      '--wait',
      '--json',
      '--task-id',
      `cli-json-${suffix}`,
    ]);
    expect(json).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(json.stdout) as TaskView).toMatchObject({
      task_id: `cli-json-${suffix}`,
      status: 'completed',
      result: [1, 2],
    });
  });

  it('submit --wait exits 1 when the task ends dead, and says why', async () => {
    const run = await reach(['submit', doomed, '{}', '--wait', '--timeout', '20']);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/task \S+ dead \(not_retryable\) after 1 attempt/);
    expect(run.stdout).toContain('error: cannot do this');
  });

  it('task: the timeline with gaps from Redis, then from InfluxDB once the Redis state is gone', async () => {
    const taskId = `cli-tl-${suffix}`;
    expect((await reach(['submit', echo, '"x"', '--wait', '--task-id', taskId])).code).toBe(0);
    const recent = await reach(['task', taskId]);
    expect(recent.code).toBe(0);
    expect(recent.stdout).toContain(
      `task ${taskId}  completed  capability ${echo}  agent ${agentId}  attempts 1`,
    );
    expect(recent.stdout).toMatch(/STAGE\s+AT\s+GAP\s+AGENT\s+ATTEMPT\s+NOTE/);
    expect(recent.stdout).toMatch(/accepted\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+-/);
    expect(recent.stdout).toMatch(
      new RegExp(`received\\s+\\S+Z\\s+\\+\\S+ (ms|µs|s)\\s+${agentId}\\s+1`),
    );
    expect(recent.stdout).toMatch(/completed\s+\S+Z\s+\+\S+ (ms|µs|s)\s+\S+\s+1\s+handler 5 ms/);
    expect(recent.stdout).toContain('4 stages over');
    expect(recent.stdout).toContain('(source: redis)');
    expect(recent.stdout).toContain('result: "x"');

    const keys = stack.keys;
    const redis = new Redis(stack.redisUrl);
    await redis.del(keys.task(taskId), keys.timeline(taskId));
    await redis.quit();
    await waitFor(
      async () =>
        (await http<TimelineReply>(`${stack.routerUrl}/v1/tasks/${taskId}/timeline`)).body.stages
          ?.length === 3,
      {
        message: 'the task events did not reach InfluxDB',
      },
    );
    const old = await reach(['task', taskId, '--json']);
    const body = JSON.parse(old.stdout) as TimelineReply & { task: unknown };
    expect(body).toMatchObject({ task_id: taskId, source: 'influxdb', task: null });
    expect(body.stages.map((s) => s.stage)).toEqual(['sent', 'received', 'completed']);
    const human = await reach(['task', taskId]);
    expect(human.stdout).toContain('its state expired from Redis');
    expect(human.stdout).toContain('(source: influxdb)');
  });

  it('task: an unknown task is exit 3 with the server code', async () => {
    const run = await reach(['task', `nope-${suffix}`]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^reach: TASK_NOT_FOUND: /);
  });

  it('stats: the four figures per capability and per agent, from InfluxDB', async () => {
    const query = `${stack.routerUrl}/v1/stats?window=15m&capability=${echo}`;
    await waitFor(
      async () => (await http<StatsReply>(query)).body.groups?.[0]?.outcomes.completed === 3,
      {
        message: 'the completions did not reach InfluxDB',
      },
    );
    const human = await reach(['stats', '--capability', echo]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`last 15m for ${echo}, by capability`);
    expect(human.stdout).toMatch(
      /CAPABILITY\s+SUCCESS\s+OK\/FAILED\/DEAD\s+RECEIPT mean \/ p95\s+EXECUTION mean \/ p95\s+DONE\/MIN/,
    );
    expect(human.stdout).toMatch(
      new RegExp(`${echo}\\s+100\\.0 %\\s+3/0/0\\s+\\S+ (ms|µs|s) / \\S+ (ms|µs|s)`),
    );
    const json = JSON.parse(
      (await reach(['stats', '--json', '--window', '1h', '--by', 'agent', '--capability', echo]))
        .stdout,
    ) as StatsReply;
    expect(json).toMatchObject({ window: '1h', by: 'agent', capability: echo });
    expect(json.groups).toEqual([
      expect.objectContaining({
        key: agentId,
        success_rate: 1,
        outcomes: { completed: 3, failed: 0, dead: 0, total: 3 },
        execution_ms: expect.objectContaining({ count: 3, handler_mean: 5 }),
      }),
    ]);
    // The task that failed for good: one failed attempt and one dead letter, no success.
    await waitFor(
      async () =>
        (await http<StatsReply>(`${stack.routerUrl}/v1/stats?capability=${doomed}`)).body
          .groups?.[0]?.outcomes.total === 2,
      {
        message: 'the failure did not reach InfluxDB',
      },
    );
    expect((await reach(['stats', '--capability', doomed])).stdout).toMatch(
      new RegExp(`${doomed}\\s+0\\.0 %\\s+0/1/1`),
    );
  });

  it('dlq list and replay: a task past its deadline is listed and replayed; a task that is not dead is refused', async () => {
    const sub = await reach(['submit', silent, '{"late":true}', '--task-timeout', '1', '--json']);
    expect(sub.code).toBe(0);
    const taskId = (JSON.parse(sub.stdout) as { task_id: string }).task_id;
    await waitFor(
      async () =>
        (await http<DlqReply>(`${stack.routerUrl}/v1/dlq?capability=${silent}`)).body.items?.some(
          (d) => d.task_id === taskId,
        ),
      { timeoutMs: 15_000, message: 'the task never reached the dead-letter queue' },
    );
    const list = await reach(['dlq', 'list', '--capability', silent]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(new RegExp(`${taskId}\\s+${silent}\\s+deadline\\s+1\\s+\\S+Z`));
    const json = JSON.parse(
      (await reach(['dlq', 'list', '--json', '--capability', doomed])).stdout,
    ) as DlqReply;
    expect(json.items).toEqual([
      expect.objectContaining({
        capability: doomed,
        reason: 'not_retryable',
        error: 'cannot do this',
      }),
    ]);

    const replay = await reach(['dlq', 'replay', taskId]);
    expect(replay).toMatchObject({ code: 0, stderr: '' });
    expect(replay.stdout).toMatch(new RegExp(`^replayed ${taskId}: attempt 2, `));
    const followed = await reach(['task', taskId]);
    expect(followed.stdout).toMatch(/replayed\s+\S+Z\s+\+\S+ (ms|µs|s)\s+-\s+2/);
    // Only a dead letter can be replayed: a completed task is refused with the server's code.
    const refused = await reach(['dlq', 'replay', `cli-json-${suffix}`]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(/^reach: NOT_DEAD: /);
  });

  it('works as `npx reach` from the repository root', async () => {
    const run = await reach(['agents', '--capability', echo], { npx: true });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(agentId);
  });
});
