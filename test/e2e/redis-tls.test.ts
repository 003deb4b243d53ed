/**
 * Redis over TLS with an ACL user: a `redis-server --port 0 --tls-port <p>` that asks for client
 * certificates (made here with openssl) and knows only one user with a password. registry-sync,
 * the router and a worker-sdk agent reach it with rediss:// and REDIS_TLS_CA/CERT/KEY plus
 * REDIS_USERNAME/REDIS_PASSWORD, and the core path runs: register, submit, deliver, complete,
 * the callback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Redis } from 'ioredis';
import { ReachAgent, ReachClient, redisConnectionFromEnv } from '@agent-reach/worker-sdk';
import { startTlsRedis, waitFor, type TlsRedis } from '@agent-reach/testkit';
import { http, startStack, type Stack } from '../support/stack.ts';

let tls: TlsRedis;
let stack: Stack;
let agent: ReachAgent;
let client: ReachClient;
let admin: Redis;

beforeAll(async () => {
  tls = await startTlsRedis();
  admin = tls.connect();
  await admin.connect();
  // At debug level, so the logs the last test reads hold everything the services say.
  stack = await startStack({ redisUrl: tls.url, env: { ...tls.env, LOG_LEVEL: 'debug' } });
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    // What an agent process reads from its environment: the same variables as the services.
    ...redisConnectionFromEnv(tls.env),
    agentId: 'tls-echo',
    capabilities: ['tls-echo'],
    handler: (task) => Promise.resolve({ echoed: task.payload }),
    shutdownTimeoutMs: 2000,
    logger: pino({ level: 'silent' }),
  });
  agent.start();
  await agent.ready();
  client = new ReachClient({ routerUrl: stack.routerUrl });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await agent?.close();
  await stack?.stop();
  admin?.disconnect();
  await tls?.stop();
});

describe('Redis over TLS with an ACL user', () => {
  it('runs the core path: register, submit, deliver, complete, callback', async () => {
    const agents = await http<{ agents: { agent_id: string; status: string }[] }>(
      `${stack.registryUrl}/v1/agents`,
    );
    expect(agents.body.agents.map((a) => a.agent_id)).toContain('tls-echo');
    const submitted = await client.submit({ capability: 'tls-echo', payload: { n: 1 } });
    expect(submitted.agent_id).toBe('tls-echo');
    const item = await client.result(submitted.task_id, { timeoutMs: 10_000 });
    expect(item).toMatchObject({ status: 'completed', result: { echoed: { n: 1 } } });
    // The waited form of a submission too (the router's blocking connections).
    const waited = await http<{ status: string; result: unknown }>(
      `${stack.routerUrl}/v1/tasks?wait_ms=5000`,
      { body: { capability: 'tls-echo', payload: 2 } },
    );
    expect(waited.body).toMatchObject({ status: 'completed', result: { echoed: 2 } });
  });

  it('every connection is the ACL user over TLS; none without TLS or credentials gets in', async () => {
    const clients = ((await admin.client('LIST')) as string)
      .trim()
      .split('\n')
      .map((line): Record<string, string> =>
        Object.fromEntries(line.split(' ').map((kv) => kv.split('=', 2) as [string, string])),
      );
    // registry-sync, the router (commands, subscriber, blocking readers) and the agent.
    expect(clients.length).toBeGreaterThan(5);
    expect(new Set(clients.map((c) => c['user']))).toEqual(new Set([tls.username]));
    expect(clients.some((c) => String(c['name']).startsWith('reach:tls-echo:'))).toBe(true);

    const plain = new Redis(`redis://127.0.0.1:${tls.port}`, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    plain.on('error', () => undefined);
    await expect(plain.connect().then(() => plain.ping())).rejects.toThrow();
    plain.disconnect();

    // TLS but no credentials: the server answers, and refuses every command.
    const anonymous = new Redis({
      host: '127.0.0.1',
      port: tls.port,
      tls: { ...tls.tls },
      lazyConnect: true,
      enableReadyCheck: false,
      maxRetriesPerRequest: 0,
    });
    anonymous.on('error', () => undefined);
    await anonymous.connect();
    await expect(anonymous.ping()).rejects.toThrow(/NOAUTH/);
    anonymous.disconnect();
  });

  it('completes 20 concurrent tasks over TLS', async () => {
    const ids = await Promise.all(
      Array.from({ length: 20 }, (_, n) => client.submit({ capability: 'tls-echo', payload: n })),
    );
    for (const { task_id } of ids)
      await waitFor(
        async () => (await client.result(task_id, { timeoutMs: 5000 })).status === 'completed',
      );
  });

  it('logs no Redis password', () => {
    const logs = stack.registry.output() + stack.router.output();
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(tls.password);
  });
});
