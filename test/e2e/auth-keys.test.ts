/**
 * API keys end to end, with REACH_AUTH=required and an admin key, both services as processes
 * logging at debug: keys made and revoked with `reach keys`, an SDK agent registered with an
 * agent key, an SDK client running a task with a caller key, 401 without a key, a revoked key
 * refused by the router and by registry-sync within a second — and none of the keys in any log
 * line of either service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { entryOf } from '@agent-reach/launcher';
import { runCli, type Io } from '@agent-reach/cli';
import {
  ReachAgent,
  ReachClient,
  isReachHttpError,
  isTaskFailedError,
} from '@agent-reach/worker-sdk';
import {
  onFreePort,
  randomPrefix,
  startNodeService,
  testServices,
  type ServiceProcess,
} from '@agent-reach/testkit';
import { FAST_LEASES, http } from '../support/stack.ts';

const ADMIN = `admin-e2e-${'k'.repeat(40)}`;
const lines: string[] = [];
const secrets: string[] = [ADMIN];
let registry: ServiceProcess;
let router: ServiceProcess;
let registryUrl = '';
let routerUrl = '';
let agent: ReachAgent | undefined;
let client: ReachClient | undefined;

async function reach(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    out: (t) => void (out += t),
    err: (t) => void (err += t),
    env: {},
    stderrIsTTY: false,
  };
  const code = await runCli([...argv, '--router', routerUrl, '--registry', registryUrl], io);
  return { code, out, err };
}

async function makeKey(role: string): Promise<{ key_id: string; key: string }> {
  const run = await reach([
    'keys',
    'create',
    '--tenant',
    'default',
    '--role',
    role,
    '--json',
    '--key',
    ADMIN,
  ]);
  expect(run.code, run.err).toBe(0);
  const made = JSON.parse(run.out) as { key_id: string; key: string };
  secrets.push(made.key);
  return made;
}

async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - start;
}

beforeAll(async () => {
  const services = testServices();
  const env: Record<string, string> = {
    REDIS_URL: services.redisUrl,
    REACH_PREFIX: randomPrefix(),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'debug',
    REACH_AUTH: 'required',
    REACH_ADMIN_KEY: ADMIN,
    ...FAST_LEASES,
  };
  const onLine = (line: string) => void lines.push(line);
  ({ started: registry } = await onFreePort('registry-sync', async (port) => {
    registryUrl = `http://127.0.0.1:${port}`;
    return startNodeService({
      name: 'registry-sync',
      entry: entryOf('registry-sync'),
      env: { ...env, REGISTRY_PORT: String(port) },
      healthUrl: `${registryUrl}/healthz`,
      onLine,
    });
  }));
  ({ started: router } = await onFreePort('router', async (port) => {
    routerUrl = `http://127.0.0.1:${port}`;
    return startNodeService({
      name: 'router',
      entry: entryOf('router'),
      env: { ...env, ROUTER_PORT: String(port) },
      healthUrl: `${routerUrl}/healthz`,
      onLine,
    });
  }));
});

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await Promise.all([router?.stop(), registry?.stop()]);
});

describe('API keys across the services', () => {
  it('refuses requests without a key on both services, and serves the public routes', async () => {
    expect((await http(`${routerUrl}/v1/dlq`)).status).toBe(401);
    expect((await http(`${registryUrl}/v1/agents`)).status).toBe(401);
    expect((await http(`${routerUrl}/livez`)).status).toBe(200);
    expect((await fetch(`${registryUrl}/metrics`)).status).toBe(200);
    expect((await fetch(`${routerUrl}/docs/json`)).status).toBe(200);
  });

  it('runs a task from an SDK client with a caller key to an SDK agent with an agent key', async () => {
    const agentKey = await makeKey('agent');
    // An agent key limited to what the agent serves.
    const callerKey = await makeKey('caller');
    agent = new ReachAgent({
      registryUrl,
      routerUrl,
      redisUrl: testServices().redisUrl,
      apiKey: agentKey.key,
      agentId: 'auth-e2e-echo',
      capabilities: ['echo', 'fan-out', 'fan-in'],
      maxConcurrency: 4,
      // fan-out submits a child task with the agent's own key (role agent may submit); fan-in
      // also awaits its result, read from the agent's topic with that key.
      handler: async (task) =>
        task.capability === 'fan-out'
          ? (await task.submit({ capability: 'echo', payload: 'child' })).status
          : task.capability === 'fan-in'
            ? await task
                .submit({ capability: 'echo', payload: 'child' })
                .result()
                .catch((e: unknown) => (isTaskFailedError(e) ? e.error : String(e)))
            : task.payload,
      shutdownTimeoutMs: 2000,
      logger: pino({ level: 'silent' }),
    });
    agent.start();
    await agent.ready();
    client = new ReachClient({
      routerUrl,
      apiKey: callerKey.key,
      pollWaitMs: 1000,
      logger: pino({ level: 'silent' }),
    });
    await expect(client.run('echo', { hello: 'keys' }, { timeoutMs: 15_000 })).resolves.toEqual({
      hello: 'keys',
    });
    // The child is accepted (its status is the router's: here dead, a loop, as the only echo
    // agent is its parent's); without the agent's key it would have been a 401.
    await expect(client.run('fan-out', {}, { timeoutMs: 15_000 })).resolves.toMatch(
      /^(sent|accepted|dead)$/,
    );
    // Its result (dead as a loop here) reaches the waiting handler through the agent's key.
    await expect(client.run('fan-in', {}, { timeoutMs: 15_000 })).resolves.toBe('loop');
    const anonymous = new ReachClient({ routerUrl, apiKey: '', logger: pino({ level: 'silent' }) });
    const refused = await anonymous
      .submit({ capability: 'echo', payload: 1 })
      .catch((e: unknown) => e);
    await anonymous.close();
    expect(isReachHttpError(refused) && refused.code).toBe('UNAUTHORIZED');
    const agents = await reach(['agents', '--key', callerKey.key]);
    expect(agents.code, agents.err).toBe(0);
    expect(agents.out).toContain('auth-e2e-echo');
  });

  it('an observing agent gets no caller task until an operator promotes it, at a weight', async () => {
    const agentKey = await makeKey('agent');
    const callerKey = await makeKey('caller');
    const operatorKey = await makeKey('operator');
    const watcher = new ReachAgent({
      registryUrl,
      routerUrl,
      redisUrl: testServices().redisUrl,
      apiKey: agentKey.key,
      agentId: 'auth-e2e-watcher',
      capabilities: ['watched'],
      observe: true,
      handler: async (task) => task.payload,
      shutdownTimeoutMs: 2000,
      logger: pino({ level: 'silent' }),
    });
    watcher.start();
    try {
      await watcher.ready();
      const submit = () =>
        http<{ error?: string; agent_id?: string }>(`${routerUrl}/v1/tasks`, {
          body: { capability: 'watched', payload: 1, on_no_agent: 'reject' },
          headers: { authorization: `Bearer ${callerKey.key}` },
        });
      const before = await submit();
      expect(before.status).toBe(503);
      expect(before.body.error).toBe('NO_AGENT');
      // A caller key may not promote; an operator key may, through the CLI, with a weight.
      const byCaller = await reach([
        'agents',
        'promote',
        'auth-e2e-watcher',
        '--key',
        callerKey.key,
      ]);
      expect(byCaller.code).not.toBe(0);
      expect(byCaller.err).toContain('FORBIDDEN');
      const promoted = await reach([
        'agents',
        'promote',
        'auth-e2e-watcher',
        '--weight',
        '2',
        '--json',
        '--key',
        operatorKey.key,
      ]);
      expect(promoted.code, promoted.err).toBe(0);
      expect(JSON.parse(promoted.out)).toMatchObject({
        agent_id: 'auth-e2e-watcher',
        observe: false,
        weight: 2,
      });
      await within(5000, async () => (await submit()).status === 202);
    } finally {
      await watcher.close();
    }
  });

  it('a key revoked with reach keys revoke is refused by the router and registry-sync within a second', async () => {
    const caller = await makeKey('caller');
    const auth = { authorization: `Bearer ${caller.key}` };
    expect((await http(`${routerUrl}/v1/dlq`, { headers: auth })).status).toBe(200);
    expect((await http(`${registryUrl}/v1/agents`, { headers: auth })).status).toBe(200);
    const listed = await reach(['keys', 'list', '--key', ADMIN]);
    expect(listed.out).toContain(caller.key_id);
    const start = Date.now();
    const revoked = await reach(['keys', 'revoke', caller.key_id, '--key', ADMIN]);
    expect(revoked.code, revoked.err).toBe(0);
    await Promise.all([
      within(
        1000,
        async () => (await http(`${routerUrl}/v1/dlq`, { headers: auth })).status === 401,
      ),
      within(
        1000,
        async () => (await http(`${registryUrl}/v1/agents`, { headers: auth })).status === 401,
      ),
    ]);
    expect(Date.now() - start).toBeLessThan(1000);
  });

  it('writes none of the keys to the logs (debug level, both services)', () => {
    const text = lines.join('\n');
    expect(text).toMatch(/"level":20/);
    expect(text).toMatch(/api key created/);
    for (const secret of secrets) expect(text).not.toContain(secret.slice(-43));
    expect(text).not.toContain(ADMIN);
  });
});
