import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DIST_CONDITION,
  freePort,
  httpStatus,
  livePidFrom,
  randomPrefix,
  requireBinaries,
  spawnManaged,
  startInfluxd,
  startRedisServer,
  tsxLoaderUrl,
  waitFor,
  type ManagedProcess,
} from '@agent-reach/process-kit';

// `npm start` as a developer runs it — the launcher in its own process, the services from their
// builds — in a temporary root (its own `.reach/`), on free ports, against a redis-server and an
// influxd of the test's own, so that it never meets a developer's `npm start`.
const entry = fileURLToPath(new URL('./fixtures/launch.ts', import.meta.url));

interface Launcher {
  proc: ManagedProcess;
  root: string;
  routerUrl: string;
  registryUrl: string;
  /** Every line it printed, its children's included. */
  lines: string[];
}

let dir: string;
let redis: ManagedProcess | undefined;
let influx: ManagedProcess | undefined;
let redisUrl: string;
let influxUrl: string;
const launchers: Launcher[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-reach-launcher-'));
  const bins = requireBinaries(['redis-server', 'influxd']);
  const redisPort = await freePort();
  redis = await startRedisServer({
    bin: bins['redis-server'],
    dir: join(dir, 'redis'),
    port: redisPort,
  });
  redisUrl = `redis://127.0.0.1:${redisPort}`;
  const httpPort = await freePort();
  influx = await startInfluxd({
    bin: bins.influxd,
    dir: join(dir, 'influxdb'),
    httpPort,
    rpcPort: await freePort(),
    databases: ['reach'],
  });
  influxUrl = `http://127.0.0.1:${httpPort}`;
}, 60_000);

afterEach(async () => {
  // A launcher a failed test left running: SIGKILL reaches its children through its exit hook
  // only when it exits on its own, so stop it with SIGINT first.
  for (const l of launchers.splice(0)) await l.proc.stop('SIGINT', 20_000);
});

afterAll(async () => {
  await influx?.stop();
  await redis?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * Starts the launcher and waits for its banner. `logging` sets LOG_LEVEL and LOG_FORMAT (a key
 * given as undefined is left unset, as in a newcomer's shell); by default the stack logs at warn.
 */
async function launch(
  name: string,
  logging: { LOG_LEVEL?: string | undefined; LOG_FORMAT?: string | undefined } = {
    LOG_LEVEL: 'warn',
  },
): Promise<Launcher> {
  const root = join(dir, name);
  const [registryPort, routerPort, relayPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const endpointPorts = [await freePort(), await freePort(), await freePort()];
  const lines: string[] = [];
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.LOG_LEVEL;
  delete env.LOG_FORMAT;
  for (const [key, value] of Object.entries(logging)) if (value !== undefined) env[key] = value;
  const proc = await spawnManaged({
    name: 'launcher',
    command: process.execPath,
    args: ['--import', tsxLoaderUrl(), `--conditions=${DIST_CONDITION}`, entry],
    env: {
      ...env,
      LAUNCH_ROOT: root,
      REDIS_URL: redisUrl,
      REDIS_CLUSTER_NODES: '',
      INFLUX_URL: influxUrl,
      INFLUX_V2_URL: influxUrl,
      INFLUX_BUCKET: 'reach',
      REACH_PREFIX: randomPrefix(),
      REACH_AUTH: 'auto',
      REGISTRY_PORT: String(registryPort),
      ROUTER_PORT: String(routerPort),
      RELAY_PORT: String(relayPort),
      LAUNCH_ENDPOINT_PORTS: endpointPorts.join(','),
    },
    onLine: (line) => lines.push(line),
  });
  const launcher = {
    proc,
    root,
    routerUrl: `http://127.0.0.1:${routerPort}`,
    registryUrl: `http://127.0.0.1:${registryPort}`,
    lines,
  };
  launchers.push(launcher);
  await printed(launcher, /Agent-Reach is running/, 90_000);
  return launcher;
}

/** Waits for a line of the launcher's output; fails with its output if it exits first. */
async function printed(l: Launcher, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const output = () => l.lines.slice(-60).join('\n');
  let found: { line: string } | 'exited';
  try {
    // waitFor retries a probe that throws, so an exit is a value: the wait ends at once.
    found = await waitFor<{ line: string } | 'exited'>(
      () => {
        const line = l.lines.find((x) => pattern.test(x));
        if (line !== undefined) return { line };
        return l.proc.hasExited() ? 'exited' : undefined;
      },
      { timeoutMs, intervalMs: 20, message: `the launcher printing ${pattern}` },
    );
  } catch (err: unknown) {
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n${output()}`, {
      cause: err,
    });
  }
  if (found === 'exited')
    throw new Error(`the launcher exited before printing ${pattern}\n${output()}`);
  return found.line;
}

/** The live pid in `.reach/run/<name>.pid` once it is not `other`. */
function livePid(l: Launcher, name: string, other?: number): Promise<number> {
  const file = join(l.root, '.reach', 'run', `${name}.pid`);
  return waitFor(
    async () => {
      const pid = await livePidFrom(file);
      return pid !== other ? pid : undefined;
    },
    { timeoutMs: 20_000, intervalMs: 10, message: `a pid in ${file} other than ${other}` },
  );
}

/** Every pid the launcher said it started. */
function startedPids(l: Launcher): number[] {
  return l.lines.flatMap((x) => {
    const m = /(?:started|restarted) \(pid (\d+)\)/.exec(x);
    return m ? [Number(m[1])] : [];
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function pidFilesLeft(l: Launcher): Promise<string[]> {
  return (await readdir(join(l.root, '.reach', 'run')).catch(() => [])).filter((f) =>
    f.endsWith('.pid'),
  );
}

async function submit(l: Launcher, payload: unknown, waitMs?: number, capability = 'echo') {
  const res = await fetch(`${l.routerUrl}/v1/tasks${waitMs ? `?wait_ms=${waitMs}` : ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ capability, payload }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * The banner's try-it lines for the endpoint agents (`curl -s -XPOST '<url>' … -d '<json>'`,
 * through the router's task API with `wait_ms` or its A2A gateway), as requests to send.
 */
function endpointTryLines(l: Launcher): { url: string; body: unknown }[] {
  return l.lines.flatMap((x) => {
    const m =
      /^ {2}curl -s -XPOST '?(localhost:\d+\/(?:v1\/tasks\?wait_ms=\d+|a2a))'? .*-d '([^']*)'$/.exec(
        x,
      );
    return m ? [{ url: `http://${m[1]!}`, body: JSON.parse(m[2]!) as unknown }] : [];
  });
}

describe('npm start (launchStack) when a service exits', { timeout: 150_000 }, () => {
  it('restarts a killed router at once, loses no task, and stops on a crash loop', async ({
    annotate,
  }) => {
    const l = await launch('restarts');
    // A task in flight across the kill: the echo agent streams it back word by word, 200 ms apart.
    const before = await submit(l, { stream: 'one two three' });
    expect(before.status, JSON.stringify(before.body)).toBe(202);

    let pid = await livePid(l, 'router');
    const killedAt = performance.now();
    process.kill(pid, 'SIGKILL');
    await waitFor(async () => (await httpStatus(`${l.routerUrl}/livez`)) === 200, {
      timeoutMs: 30_000,
      intervalMs: 10,
      message: 'the restarted router answering /livez',
    });
    const livezMs = performance.now() - killedAt;
    await waitFor(async () => (await httpStatus(`${l.routerUrl}/healthz`)) === 200, {
      timeoutMs: 30_000,
      intervalMs: 10,
      message: 'the restarted router answering /healthz 200',
    });
    const healthzMs = performance.now() - killedAt;
    await annotate(
      `router serving again ${Math.round(livezMs)} ms after SIGKILL (/livez), ready ${Math.round(healthzMs)} ms after (/healthz)`,
    );
    expect(l.lines).toContain(
      `[start] router (pid ${pid}) was killed by SIGKILL; restarting (1 of 5 in 60 s)`,
    );
    pid = await livePid(l, 'router', pid);
    expect(l.lines).toContain(`[start] router restarted (pid ${pid})`);

    // The task sent before the kill completed; one sent after it completes too.
    const taskId = String(before.body.task_id);
    const done = await waitFor(
      async () => {
        const res = await fetch(`${l.routerUrl}/v1/tasks/${taskId}`);
        const body = (await res.json()) as { status?: string };
        return body.status === 'completed' ? body : undefined;
      },
      { timeoutMs: 15_000, intervalMs: 50, message: `task ${taskId} completed` },
    );
    expect(done).toMatchObject({ status: 'completed', result: { stream: 'one two three' } });
    const after = await submit(l, { after: true }, 10_000);
    expect(after).toMatchObject({ status: 200, body: { status: 'completed' } });

    // Four more exits within 60 s make five: a crash loop stops everything.
    for (let i = 2; i <= 5; i++) {
      process.kill(pid, 'SIGKILL');
      if (i < 5) pid = await livePid(l, 'router', pid);
    }
    expect(await l.proc.exited).toBe(1);
    expect(l.lines).toContain(
      `[start] router (pid ${pid}) was killed by SIGKILL: 5 exits in 60 s, a crash loop; stopping everything (its output is above)`,
    );
    expect(l.lines.filter((x) => /restarting \(\d of 5 in 60 s\)/.test(x))).toHaveLength(4);
    expect(l.lines).toContain('[start] all stopped; exit code 1');
    expect(startedPids(l).filter(alive)).toEqual([]);
    expect(await pidFilesLeft(l)).toEqual([]);
  });

  it('restarts a killed endpoint, and stops everything on Ctrl-C during a restart', async () => {
    const l = await launch('ctrl-c');
    // A demo endpoint is a child like the others: killed, it is started again on its port, and
    // the relay calls it again.
    const endpointPid = await livePid(l, 'demo-http');
    process.kill(endpointPid, 'SIGKILL');
    await printed(l, /^\[start\] demo-http restarted \(pid \d+\)$/);
    const echoed = await submit(l, { again: true }, 10_000, 'http.echo');
    expect(echoed.body).toMatchObject({ status: 'completed', result: { echo: { again: true } } });

    const pid = await livePid(l, 'router');
    process.kill(pid, 'SIGKILL');
    await printed(l, /router \(pid \d+\) was killed by SIGKILL; restarting/);
    l.proc.kill('SIGINT');
    expect(await l.proc.exited).toBe(0);
    expect(l.lines).toContain('[start] all stopped');
    expect(startedPids(l).filter(alive)).toEqual([]);
    expect(await pidFilesLeft(l)).toEqual([]);
  });
});

/** The JSON object `text` holds, if it is one. */
function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `[router]         [10:42:07] INFO: …` → `{ name: 'router', text: '[10:42:07] INFO: …' }`. */
function processLine(line: string): { name: string; text: string } | undefined {
  const m = /^\[([^\]]+)\] +(.*)$/.exec(line);
  return m && m[1] !== 'start' ? { name: m[1]!, text: m[2]! } : undefined;
}

// What a newcomer sees after `npm start`: no LOG_LEVEL or LOG_FORMAT set.
describe("npm start's output", { timeout: 120_000 }, () => {
  it('is readable, ends with the banner once up, and prints no line per task', async () => {
    const l = await launch('readable', { LOG_LEVEL: undefined, LOG_FORMAT: undefined });
    await printed(l, /^Ctrl-C stops everything\.$/);
    const bannerAt = l.lines.indexOf('Agent-Reach is running.');
    const before = l.lines.slice(0, bannerAt);

    // Each process's pino line is one readable line: time, level, module, message.
    const fromProcesses = before.flatMap((x) => processLine(x) ?? []);
    expect(fromProcesses.filter((p) => jsonObject(p.text) !== undefined)).toEqual([]);
    expect(fromProcesses).toContainEqual({
      name: 'router',
      text: expect.stringMatching(/^\[\d\d:\d\d:\d\d\] WARN: auth: AUTH IS OFF/),
    });
    expect(fromProcesses).toContainEqual({
      name: 'registry-sync',
      text: expect.stringMatching(/^\[\d\d:\d\d:\d\d\] INFO: registry-sync listening /),
    });
    // The banner follows readiness: the agents were registered before it.
    expect(before).toContain(
      '[start] agents echo-1, echo-2, echo-3 and endpoint agents demo-a2a, demo-http, demo-mcp registered',
    );
    const listed = (await (await fetch(`${l.registryUrl}/v1/agents`)).json()) as {
      agents: { agent_id: string; capabilities: string[] }[];
    };
    expect(
      Object.fromEntries(
        listed.agents
          .filter((a) => a.agent_id.startsWith('demo-'))
          .map((a) => [a.agent_id, a.capabilities]),
      ),
    ).toEqual({
      'demo-a2a': ['summarize'],
      'demo-http': ['http.echo'],
      'demo-mcp': ['word_count'],
    });

    // The banner's lines for the endpoint agents, sent as printed: each ends completed.
    const tries = endpointTryLines(l);
    expect(tries.map((t) => new URL(t.url).pathname)).toEqual([
      '/v1/tasks',
      '/v1/tasks',
      '/v1/tasks',
      '/a2a',
    ]);
    const answers = await Promise.all(
      tries.map(async (t) => {
        const res = await fetch(t.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(t.body),
        });
        return (await res.json()) as Record<string, unknown>;
      }),
    );
    expect(answers).toEqual([
      expect.objectContaining({
        status: 'completed',
        agent_id: 'demo-a2a',
        result: { text: expect.any(String) },
      }),
      expect.objectContaining({
        status: 'completed',
        agent_id: 'demo-http',
        result: expect.objectContaining({ echo: { hello: 'endpoint' } }),
      }),
      expect.objectContaining({
        status: 'completed',
        agent_id: 'demo-mcp',
        result: { words: 7, characters: 37 },
      }),
      // A2A → the queue → A2A: the gateway's task, completed by the A2A endpoint agent.
      expect.objectContaining({
        result: expect.objectContaining({
          kind: 'task',
          status: expect.objectContaining({ state: 'completed' }),
          metadata: {
            agent_reach: expect.objectContaining({ capability: 'summarize', agent_id: 'demo-a2a' }),
          },
        }),
      }),
    ]);

    // A task, then Ctrl-C: whatever came between the banner and the stop is what would have
    // pushed the banner up. The agents log tasks at debug, and run quiet.
    const task = await submit(l, { hello: 'world' }, 10_000);
    expect(task, JSON.stringify(task.body)).toMatchObject({
      status: 200,
      body: { status: 'completed' },
    });
    const streamed = await submit(l, { stream: 'a b' }, 10_000);
    expect(streamed.body).toMatchObject({ status: 'completed' });
    const third = await submit(l, { third: true }, 10_000);
    expect(third.body).toMatchObject({ status: 'completed' });
    l.proc.kill('SIGINT');
    expect(await l.proc.exited).toBe(0);
    const stopAt = l.lines.indexOf('[start] SIGINT: stopping everything (Ctrl-C again to force)');
    expect(stopAt).toBeGreaterThan(bannerAt);
    const after = l.lines.slice(l.lines.indexOf('Ctrl-C stops everything.') + 1, stopAt);
    const printedAfter = after.filter((x) => x.trim() !== '');
    expect(printedAfter.filter((x) => x.startsWith('[agent '))).toEqual([]);
    // Nothing per task from anyone: fewer lines below the banner than tasks sent (a late start-up
    // line, such as an InfluxDB API detected, may still come).
    expect(printedAfter.length, printedAfter.join('\n')).toBeLessThan(3);
  });

  it('is one JSON object a line with LOG_FORMAT=json', async () => {
    const l = await launch('json', { LOG_LEVEL: undefined, LOG_FORMAT: 'json' });
    const task = await submit(l, { hello: 'json' }, 10_000);
    expect(task.body).toMatchObject({ status: 'completed' });
    l.proc.kill('SIGINT');
    expect(await l.proc.exited).toBe(0);

    const records = l.lines.filter((x) => x !== '').map((x) => [x, jsonObject(x)] as const);
    expect(records.filter(([, r]) => typeof r?.level !== 'number').map(([x]) => x)).toEqual([]);
    const objects = records.map(([, r]) => r!);
    // The services' own lines, as they print them in production.
    expect(objects).toContainEqual(
      expect.objectContaining({ service: 'router', module: 'auth', level: 40 }),
    );
    // The launcher's lines, and the banner as one line with the URLs.
    expect(objects).toContainEqual(
      expect.objectContaining({
        service: 'launcher',
        msg: 'agents echo-1, echo-2, echo-3 and endpoint agents demo-a2a, demo-http, demo-mcp registered',
      }),
    );
    expect(objects).toContainEqual(
      expect.objectContaining({
        service: 'launcher',
        msg: 'Agent-Reach is running',
        router: l.routerUrl,
        agents: ['echo-1', 'echo-2', 'echo-3'],
        endpoint_agents: [
          expect.objectContaining({ agent_id: 'demo-a2a' }),
          expect.objectContaining({ agent_id: 'demo-http' }),
          expect.objectContaining({ agent_id: 'demo-mcp' }),
        ],
      }),
    );
  });
});
