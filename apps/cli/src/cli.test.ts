/**
 * `reach` against a stub HTTP server that answers the documented replies: how each command
 * renders them, its exit codes and its errors. test/e2e/cli.test.ts runs it against a real stack.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@agent-reach/testkit';
import { runCli, type Io } from './cli.ts';
import { startStub, type StubServer } from './testing/stub-server.ts';

interface Run {
  code: number;
  out: string;
  err: string;
}

async function reach(argv: string[], env: Record<string, string> = {}): Promise<Run> {
  let out = '';
  let err = '';
  const io: Io = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env,
    stderrIsTTY: false,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

const dead = {
  task_id: 'task-dead-1',
  capability: 'summarise',
  reason: 'max_attempts',
  dead_at: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  attempts: 4,
  error: 'handler threw: boom',
};

let stub: StubServer;
let router: string[];
/** task_id of every POST /v1/tasks the stub received. */
const submittedIds: (string | undefined)[] = [];
/** Every POST /v1/tasks body the stub received. */
const submittedBodies: Record<string, unknown>[] = [];

const found = {
  task_id: 'sum-9',
  tenant: 'default',
  status: 'dead',
  capability: 'summarise',
  agent_id: 'gpu-7',
  attempts: 3,
  created_at: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  ended_at: Date.UTC(2026, 0, 2, 3, 4, 17, 678),
  duration_ms: 12_000,
  error_code: 'MODEL_NOT_LOADED',
  archived: true,
};

beforeAll(async () => {
  stub = await startStub({
    'GET /v1/tasks': ({ url }) => ({
      status: 200,
      body:
        url.searchParams.get('capability') === 'none'
          ? { items: [], next_cursor: null, source: 'redis' }
          : { items: [found], next_cursor: 'MTc6eA', source: 'redis+influxdb' },
    }),
    'GET /v1/dlq': ({ url }) => ({
      status: 200,
      body: { items: url.searchParams.get('capability') === 'none' ? [] : [dead] },
    }),
    'POST /v1/dlq/task-dead-1/replay': {
      status: 202,
      body: { task_id: 'task-dead-1', status: 'retry_wait', attempt: 5 },
    },
    'POST /v1/tasks/task-run-1/cancel': {
      status: 202,
      body: { task_id: 'task-run-1', status: 'cancelled' },
    },
    'POST /v1/tasks/task-done-1/cancel': {
      status: 409,
      body: { error: 'ALREADY_FINAL', message: 'task task-done-1 has already completed' },
    },
    'POST /v1/dlq/task-live/replay': {
      status: 409,
      body: { error: 'NOT_DEAD', message: 'task task-live is not dead' },
    },
    'POST /v1/tasks': ({ body }) => {
      const { capability, task_id } = JSON.parse(body) as { capability: string; task_id?: string };
      submittedIds.push(task_id);
      submittedBodies.push(JSON.parse(body) as Record<string, unknown>);
      if (capability === 'down')
        return {
          status: 503,
          body: { error: 'STORE_UNAVAILABLE', message: 'retry shortly', task_id },
        };
      return {
        status: 202,
        body: {
          task_id: `t-${capability}`,
          status: 'sent',
          agent_id: 'a1',
          stream: 's',
          message_id: '1-0',
        },
      };
    },
    'POST /v1/keys': ({ body }) => {
      const b = JSON.parse(body) as Record<string, unknown>;
      return {
        status: 201,
        body: {
          key_id: '0123456789abcdef',
          key: `rk_0123456789abcdef_${'s'.repeat(43)}`,
          tenant: b['tenant'],
          role: b['role'],
          capabilities: b['capabilities'] ?? ['*'],
          label: b['label'] ?? '',
          expires_at: b['expires_at'] ?? null,
        },
      };
    },
    'GET /v1/keys': {
      status: 200,
      body: {
        items: [
          {
            key_id: '0123456789abcdef',
            tenant: 'acme',
            role: 'caller',
            capabilities: ['echo'],
            label: 'ci',
            created_at: 1_700_000_000_000,
            expires_at: null,
          },
        ],
      },
    },
    'DELETE /v1/keys/0123456789abcdef': { status: 204, body: null },
    'DELETE /v1/keys/ffffffffffffffff': {
      status: 404,
      body: { error: 'NOT_FOUND', message: 'no API key ffffffffffffffff' },
    },
    'GET /v1/tasks/t-slow': { status: 200, body: view('t-slow', 'sent', ['accepted', 'sent']) },
    'GET /v1/tasks/t-mid': {
      status: 200,
      body: {
        ...view('t-mid', 'received', ['accepted', 'sent', 'received']),
        parent_task_id: 't-top',
        hops: 1,
        children: ['t-mid.a', 't-mid.b'],
      },
    },
    'GET /v1/tasks/t-mid/timeline': {
      status: 200,
      body: {
        task_id: 't-mid',
        source: 'redis',
        parent_task_id: 't-top',
        children: ['t-mid.a', 't-mid.b'],
        stages: [{ stage: 'accepted', at: 1000, gap_ms: 0, agent_id: null, attempt: null }],
      },
    },
    'GET /v1/tasks/t-doomed': {
      status: 200,
      body: { ...view('t-doomed', 'dead', ['accepted', 'sent', 'dead']), dead_reason: 'deadline' },
    },
  });
  router = ['--router', stub.url];
});

afterAll(async () => {
  await stub.close();
});

function view(taskId: string, status: string, stages: string[]) {
  return {
    task_id: taskId,
    status,
    capability: 'echo',
    agent_id: 'a1',
    attempts: 1,
    created_at: 1000,
    deadline_ms: 0,
    timeline: stages.map((stage, i) => ({ stage, at: 1000 + i * 10 })),
  };
}

describe('reach task', () => {
  it('shows the task’s parent and children', async () => {
    const run = await reach(['task', 't-mid', ...router]);
    expect(run.code).toBe(0);
    expect(run.out).toContain('parent: t-top\n');
    expect(run.out).toContain('children: t-mid.a, t-mid.b\n');
  });
});

describe('reach tasks list', () => {
  it('passes each filter on and shows a page with the way to the next', async () => {
    const run = await reach([
      'tasks',
      'list',
      '--status',
      'dead',
      '--capability',
      'summarise',
      '--agent',
      'gpu-7',
      '--error-code',
      'MODEL_NOT_LOADED',
      '--since',
      '1h',
      '--min-duration-ms',
      '10000',
      '--limit',
      '20',
      ...router,
    ]);
    expect(run.code).toBe(0);
    const q = stub.requests.at(-1)?.url.searchParams;
    expect(Object.fromEntries(q ?? [])).toEqual({
      status: 'dead',
      capability: 'summarise',
      agent_id: 'gpu-7',
      error_code: 'MODEL_NOT_LOADED',
      since: '1h',
      min_duration_ms: '10000',
      limit: '20',
    });
    expect(run.out).toMatch(
      /TASK\s+STATUS\s+CAPABILITY\s+AGENT\s+CREATED\s+TOOK\s+ERROR CODE\s+FROM/,
    );
    expect(run.out).toMatch(
      /sum-9\s+dead\s+summarise\s+gpu-7\s+2026-01-02T03:04:05.678Z\s+12\.00 s\s+MODEL_NOT_LOADED\s+archive/,
    );
    expect(run.out).toContain(
      '1 task from Redis and the InfluxDB archive; next page: add --cursor MTc6eA',
    );
    const json = await reach(['tasks', 'list', '--json', ...router]);
    expect(JSON.parse(json.out)).toMatchObject({ items: [found], next_cursor: 'MTc6eA' });
  });

  it('says when nothing matches, and refuses a bad limit', async () => {
    const run = await reach(['tasks', 'list', '--capability', 'none', ...router]);
    expect(run.out).toBe('no tasks match (from Redis)\n');
    expect((await reach(['tasks', 'list', '--limit', '0', ...router])).code).toBe(2);
    expect((await reach(['tasks', 'show', ...router])).code).toBe(2);
  });
});

describe('reach dlq', () => {
  it('lists dead letters as a table a person reads, and --json as the reply itself', async () => {
    const human = await reach(['dlq', 'list', ...router]);
    expect(human.code).toBe(0);
    expect(human.out).toMatch(/TASK\s+CAPABILITY\s+REASON\s+ATTEMPTS\s+DEAD AT\s+ERROR/);
    expect(human.out).toMatch(
      /task-dead-1\s+summarise\s+max_attempts\s+4\s+2026-01-02T03:04:05.678Z\s+handler threw: boom/,
    );
    expect(human.out).toContain('reach dlq replay <task_id>');
    const json = await reach(['dlq', 'list', '--json', ...router]);
    expect(JSON.parse(json.out)).toEqual({ items: [dead] });
  });

  it('passes --capability and --limit on, and says so when there is nothing', async () => {
    const run = await reach(['dlq', 'list', '--capability', 'none', '--limit', '5', ...router]);
    expect(run.out).toBe('no dead letters for none\n');
    const last = stub.requests.at(-1);
    expect(last?.url.searchParams.get('limit')).toBe('5');
    expect((await reach(['dlq', 'list', '--limit', '0', ...router])).code).toBe(2);
  });

  it('replays a dead letter, and prints the server code with exit 3 when it is not dead', async () => {
    const ok = await reach(['dlq', 'replay', 'task-dead-1', ...router]);
    expect(ok).toMatchObject({ code: 0, err: '' });
    expect(ok.out).toContain('replayed task-dead-1: attempt 5, retry_wait');
    const refused = await reach(['dlq', 'replay', 'task-live', ...router]);
    expect(refused.code).toBe(3);
    expect(refused.err).toBe('reach: NOT_DEAD: task task-live is not dead\n');
  });
});

describe('reach cancel', () => {
  it('cancels a task, and prints ALREADY_FINAL with exit 3 for a finished one', async () => {
    const ok = await reach(['cancel', 'task-run-1', ...router]);
    expect(ok).toMatchObject({ code: 0, err: '' });
    expect(ok.out).toContain('cancelled task-run-1');
    const json = await reach(['cancel', 'task-run-1', '--json', ...router]);
    expect(JSON.parse(json.out)).toEqual({ task_id: 'task-run-1', status: 'cancelled' });
    const refused = await reach(['cancel', 'task-done-1', ...router]);
    expect(refused.code).toBe(3);
    expect(refused.err).toBe('reach: ALREADY_FINAL: task task-done-1 has already completed\n');
    expect((await reach(['cancel', ...router])).code).toBe(2);
  });
});

describe('reach submit', () => {
  it('sends a task_id of its own, and names it for a retry when the answer is a 503', async () => {
    const run = await reach(['submit', 'down', '{"n":1}', ...router]);
    expect(run.code).toBe(3);
    const id = submittedIds.at(-1);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(run.err).toContain(`add --task-id ${id}`);
    expect(run.err).toContain('reach: STORE_UNAVAILABLE: retry shortly');
    const again = await reach(['submit', 'down', '{"n":1}', '--task-id', 'mine-1', ...router]);
    expect(submittedIds.at(-1)).toBe('mine-1');
    expect(again.err).toContain('add --task-id mine-1');
  });
});

describe('reach submit --priority --fallback', () => {
  it('sends priority and fallback_capabilities, and refuses a priority out of 0-9', async () => {
    const run = await reach([
      'submit',
      'echo',
      '{"n":1}',
      '--priority',
      '7',
      '--fallback',
      'echo-lite,echo-tiny',
      ...router,
    ]);
    expect(run.code).toBe(0);
    expect(submittedBodies.at(-1)).toMatchObject({
      capability: 'echo',
      priority: 7,
      fallback_capabilities: ['echo-lite', 'echo-tiny'],
    });
    const bad = await reach(['submit', 'echo', '1', '--priority', '10', ...router]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--priority must be an integer from 0 to 9');
    expect((await reach(['submit', 'echo', '1', '--fallback', ',', ...router])).code).toBe(2);
  });
});

describe('reach submit --wait', () => {
  it('gives up after --timeout with exit 124, the progress line on stderr with --progress', async () => {
    const run = await reach([
      'submit',
      'slow',
      '{"n":1}',
      '--wait',
      '--timeout',
      '0.4',
      '--progress',
      ...router,
    ]);
    expect(run.code).toBe(124);
    expect(run.err).toContain('task t-slow accepted → sent');
    expect(run.err).toContain('is still sent after 0.4 s');
    const quiet = await reach([
      'submit',
      'slow',
      '{"n":1}',
      '--wait',
      '--timeout',
      '0.2',
      ...router,
    ]);
    expect(quiet.err).not.toContain('accepted → sent');
  });

  it('exits 1 with the reason when the task ends dead', async () => {
    const run = await reach(['submit', 'doomed', '[]', '--wait', ...router]);
    expect(run.code).toBe(1);
    expect(run.out).toContain('task t-doomed dead (deadline) after 1 attempt');
  });

  it('refuses bad JSON and options of other commands with exit 2', async () => {
    expect((await reach(['submit', 'echo', '{nope', ...router])).err).toContain(
      '<json> is not valid JSON',
    );
    expect((await reach(['submit', 'echo', '1', '--window', '5m', ...router])).code).toBe(2);
    expect((await reach(['submit', 'echo', '1', '--timeout', '5', ...router])).err).toContain(
      '--timeout goes with --wait',
    );
  });
});

describe('reach keys', () => {
  it('creates a key with --key as the bearer, and prints it once', async () => {
    const run = await reach([
      'keys',
      'create',
      '--tenant',
      'acme',
      '--role',
      'caller',
      '--capabilities',
      'echo, embed',
      '--label',
      'ci',
      '--key',
      'admin-key',
      ...router,
    ]);
    expect(run).toMatchObject({ code: 0, err: '' });
    expect(run.out).toContain(`rk_0123456789abcdef_${'s'.repeat(43)}`);
    expect(run.out).toContain('only time the key is shown');
    const sent = stub.requests.at(-1);
    expect(sent?.authorization).toBe('Bearer admin-key');
    expect(JSON.parse(sent?.body ?? '{}')).toEqual({
      tenant: 'acme',
      role: 'caller',
      capabilities: ['echo', 'embed'],
      label: 'ci',
    });
  });

  it('lists and revokes keys, reading the key from REACH_KEY', async () => {
    const list = await reach(['keys', 'list', ...router], { REACH_KEY: 'env-key' });
    expect(list.code).toBe(0);
    expect(list.out).toMatch(/KEY ID\s+TENANT\s+ROLE\s+CAPABILITIES\s+LABEL\s+CREATED\s+EXPIRES/);
    expect(list.out).toMatch(/0123456789abcdef\s+acme\s+caller\s+echo\s+ci/);
    expect(stub.requests.at(-1)?.authorization).toBe('Bearer env-key');
    const gone = await reach(['keys', 'revoke', '0123456789abcdef', ...router]);
    expect(gone).toMatchObject({
      code: 0,
      out: expect.stringContaining('revoked 0123456789abcdef'),
    });
    expect(stub.requests.at(-1)?.authorization).toBeUndefined();
    const unknown = await reach(['keys', 'revoke', 'ffffffffffffffff', ...router]);
    expect(unknown).toMatchObject({
      code: 3,
      err: 'reach: NOT_FOUND: no API key ffffffffffffffff\n',
    });
  });

  it('refuses a bad role, a past expiry and a missing tenant', async () => {
    expect(
      (await reach(['keys', 'create', '--tenant', 'a', '--role', 'root', ...router])).err,
    ).toContain('--role must be one of');
    expect(
      (
        await reach([
          'keys',
          'create',
          '--tenant',
          'a',
          '--role',
          'caller',
          '--expires-at',
          '2001-01-01',
          ...router,
        ])
      ).err,
    ).toContain('--expires-at must be a future');
    expect((await reach(['keys', 'create', '--role', 'caller', ...router])).code).toBe(2);
  });

  it('sends the key’s quotas, and refuses one that is not a whole number', async () => {
    const args = ['keys', 'create', '--tenant', 'acme', '--role', 'caller'];
    const run = await reach([...args, '--rate-per-s', '50', '--max-inflight', '0', ...router]);
    expect(run.code).toBe(0);
    expect(JSON.parse(stub.requests.at(-1)?.body ?? '{}')).toMatchObject({
      rate_per_s: 50,
      max_inflight: 0,
    });
    expect((await reach([...args, '--rate-per-s', '1.5', ...router])).err).toContain(
      '--rate-per-s must be a whole number',
    );
  });
});

describe('reach itself', () => {
  it('prints the help with exit 0, and the usage with exit 2 when no command is given', async () => {
    expect(await reach(['--help'])).toMatchObject({
      code: 0,
      out: expect.stringContaining('reach stats [--window 15m]'),
    });
    expect(await reach([])).toMatchObject({ code: 2, err: expect.stringContaining('Usage:') });
    expect(await reach(['deploy'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('unknown command "deploy"'),
    });
  });

  it('reads the URLs from the environment and refuses one that is not a URL', async () => {
    const run = await reach(['dlq', 'list'], { REACH_ROUTER_URL: stub.url });
    expect(run.code).toBe(0);
    expect(await reach(['dlq', 'list', '--router', 'nope'])).toMatchObject({
      code: 2,
      err: expect.stringContaining('--router must be a URL'),
    });
  });

  it('still reads REACH_API_KEY and ROUTER_URL, each with one line naming the new name', async () => {
    const run = await reach(['keys', 'list'], { ROUTER_URL: stub.url, REACH_API_KEY: 'old-key' });
    expect(run.code).toBe(0);
    expect(stub.requests.at(-1)?.authorization).toBe('Bearer old-key');
    expect(run.err.split('\n')).toEqual([
      'reach: REACH_API_KEY is deprecated and will be ignored from the next release: set REACH_KEY instead',
      'reach: ROUTER_URL is deprecated and will be ignored from the next release: set REACH_ROUTER_URL instead',
      '',
    ]);
    const current = await reach(['keys', 'list'], { REACH_ROUTER_URL: stub.url, ROUTER_URL: 'x' });
    expect(current).toMatchObject({ code: 0, err: '' });
  });

  it('refuses agents promote without an id, with a weight out of 0.1-10, and --weight alone', async () => {
    const registry = ['--registry', `http://127.0.0.1:${await freePort()}`];
    for (const argv of [
      ['agents', 'promote'],
      ['agents', 'promote', 'a1', '--weight', '20'],
      ['agents', '--weight', '2'],
    ]) {
      const run = await reach([...argv, ...registry]);
      expect(run.code, argv.join(' ')).toBe(2);
    }
    expect((await reach(['agents', 'promote', 'a1', '--weight', 'x', ...registry])).err).toContain(
      '--weight must be a number from 0.1 to 10',
    );
  });

  it('exits 3 and names the service when nothing listens', async () => {
    const run = await reach(['agents', '--registry', `http://127.0.0.1:${await freePort()}`]);
    expect(run.code).toBe(3);
    expect(run.err).toMatch(
      /^reach: NETWORK: cannot reach http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/,
    );
  });

  it('runs as a real process through its bin', async () => {
    const bin = fileURLToPath(new URL('../bin/reach.mjs', import.meta.url));
    // Async: the stub answers from this very process.
    const res = await promisify(execFile)(
      process.execPath,
      [bin, 'dlq', 'list', '--json', '--router', stub.url],
      { timeout: 15_000 },
    );
    expect(res.stderr).toBe('');
    expect(JSON.parse(res.stdout)).toEqual({ items: [dead] });
    const usage = await promisify(execFile)(process.execPath, [
      bin,
      'stats',
      '--by',
      'region',
    ]).catch((err: unknown) => err as { code: number; stderr: string });
    expect(usage).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--by must be capability or agent'),
    });
  });
});
