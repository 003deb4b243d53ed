import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

// A real process under runMain (fixtures/guarded-service.ts), through tsx: the guard's listeners
// are process-wide, so it cannot be tried in the test's own process.
const entry = fileURLToPath(new URL('./fixtures/guarded-service.ts', import.meta.url));
const KEY = 'fixture-key-0123456789abcdef0123456789abcdef';
const HEADER_SECRET = 'header-secret-5f1c9a';
const BODY_SECRET = 'body-secret-8e2d47';

interface Fixture {
  port: number;
  pid: number;
  /** Resolves with the exit code (`null` after a signal). */
  exited: Promise<number | null>;
  output(): string;
  /** The JSON log lines written so far. */
  lines(): Record<string, unknown>[];
}

const started: Fixture[] = [];

afterEach(async () => {
  for (const f of started.splice(0)) {
    try {
      process.kill(f.pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await f.exited;
  }
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts the fixture and waits until it serves. */
async function startFixture(env: Record<string, string> = {}): Promise<Fixture> {
  const fixture = await spawnFixture(env);
  let gone = false;
  void fixture.exited.then(() => (gone = true));
  await until('the fixture answering /livez', async () => {
    if (gone) throw new Error(`the fixture exited while starting:\n${fixture.output()}`);
    const res = await fetch(`http://127.0.0.1:${fixture.port}/livez`);
    return res.status === 200 ? true : undefined;
  }).catch((err: unknown) => {
    throw gone ? new Error(`the fixture exited while starting:\n${fixture.output()}`) : err;
  });
  return fixture;
}

/** Starts the fixture as a process, without waiting for it. */
async function spawnFixture(env: Record<string, string> = {}): Promise<Fixture> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', entry], {
    env: { ...process.env, PORT: String(port), FIXTURE_KEY: KEY, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (text += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (text += c));
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const fixture: Fixture = {
    port,
    pid: child.pid!,
    exited,
    output: () => text,
    lines: () =>
      text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
  started.push(fixture);
  return fixture;
}

/** A request as a caller would send it: its key and a secret in the headers, one in the body. */
function fail(f: Fixture, path: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${f.port}${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEY}`,
      'x-fixture-secret': HEADER_SECRET,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ secret: BODY_SECRET }),
  });
}

const lineWith = (f: Fixture, msg: string) => async () =>
  f.lines().find((l) => l.msg === msg) ?? undefined;

function expectNoSecrets(f: Fixture): void {
  for (const secret of [KEY, HEADER_SECRET, BODY_SECRET]) expect(f.output()).not.toContain(secret);
}

describe('runMain: the process guard', () => {
  it('logs an unhandled rejection with the recent requests, counts it and serves on', async () => {
    const f = await startFixture();
    expect((await fail(f, '/fail/first/rejection')).status).toBe(202);
    const line = await until(
      'the rejection line',
      lineWith(f, 'unhandled promise rejection; serving on'),
    );
    expect(line).toMatchObject({
      level: 50,
      service: 'fixture',
      module: 'process-guard',
      err: { message: 'fixture rejection (first)' },
    });
    // The default mode names the requests it may have come from, newest first: this one.
    expect((line.recent_requests as unknown[])[0]).toEqual({
      reqId: expect.stringMatching(/^req-/) as unknown,
      method: 'POST',
      route: '/fail/:kind/rejection',
      key_id: 'k-fixture',
      in_flight: false,
    });
    expect(line).not.toHaveProperty('headers');
    expect(line).not.toHaveProperty('body');
    expect(line).not.toHaveProperty('url');
    // Still serving, and a second one is counted too.
    expect((await fail(f, '/fail/second/rejection')).status).toBe(202);
    const metrics = await until('two rejections counted', async () => {
      const text = await (await fetch(`http://127.0.0.1:${f.port}/metrics`)).text();
      return text.includes('reach_unhandled_rejections_total{service="fixture"} 2')
        ? text
        : undefined;
    });
    expect(metrics).toContain('# TYPE reach_unhandled_rejections_total counter');
    expect((await fetch(`http://127.0.0.1:${f.port}/livez`)).status).toBe(200);
    expectNoSecrets(f);
  });

  it('with REACH_REQUEST_CONTEXT=exact, names the one request a rejection came from', async () => {
    const f = await startFixture({ REACH_REQUEST_CONTEXT: 'exact' });
    // Another request answered just before: the exact mode names only the failing one.
    expect((await fetch(`http://127.0.0.1:${f.port}/livez`)).status).toBe(200);
    expect((await fail(f, '/fail/fifth/rejection')).status).toBe(202);
    const line = await until(
      'the rejection line',
      lineWith(f, 'unhandled promise rejection; serving on'),
    );
    expect(line).toMatchObject({
      reqId: expect.stringMatching(/^req-/) as unknown,
      method: 'POST',
      route: '/fail/:kind/rejection',
      key_id: 'k-fixture',
      err: { message: 'fixture rejection (fifth)' },
    });
    expect(line).not.toHaveProperty('recent_requests');
    expect((await fetch(`http://127.0.0.1:${f.port}/livez`)).status).toBe(200);
    expectNoSecrets(f);
  });

  it('logs an uncaught exception at fatal with its request, closes and exits 1', async () => {
    const f = await startFixture({ REACH_REQUEST_CONTEXT: 'exact' });
    expect((await fail(f, '/fail/third/exception')).status).toBe(202);
    expect(await f.exited).toBe(1);
    const lines = f.lines();
    const fatal = lines.findIndex((l) => l.msg === 'uncaught exception; closing and exiting');
    expect(lines[fatal]).toMatchObject({
      level: 60,
      module: 'process-guard',
      origin: 'uncaughtException',
      reqId: expect.stringMatching(/^req-/) as unknown,
      method: 'POST',
      route: '/fail/:kind/exception',
      key_id: 'k-fixture',
      err: { message: 'fixture exception (third)' },
    });
    // The close ran, after the fatal line: by the lines' own times (ms), not their order in the
    // captured output, which a clean-clone run once saw swapped.
    const closed = lines.find((l) => l.msg === 'fixture closed');
    expect(closed).toBeDefined();
    expect(Number(closed?.time)).toBeGreaterThanOrEqual(Number(lines[fatal]?.time));
    expectNoSecrets(f);
  });

  it('refuses to start with a REACH_REQUEST_CONTEXT it does not know', async () => {
    const f = await spawnFixture({ REACH_REQUEST_CONTEXT: 'everything' });
    expect(await f.exited).toBe(1);
    expect(f.output()).toContain('REACH_REQUEST_CONTEXT=everything is not one of recent, exact');
  });

  it('exits 1 once the bound passes when the close after an uncaught exception hangs', async () => {
    const f = await startFixture({ FIXTURE_HANG_CLOSE: '1', FIXTURE_CRASH_CLOSE_MS: '300' });
    const sent = Date.now();
    expect((await fail(f, '/fail/fourth/exception')).status).toBe(202);
    expect(await f.exited).toBe(1);
    expect(Date.now() - sent).toBeLessThan(5000);
    expect(f.lines().map((l) => l.msg)).toContain('fixture did not close within 300 ms; exiting');
  });
});
