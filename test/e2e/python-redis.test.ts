/**
 * A Python agent reaching Redis the ways the services do, from the same environment variables
 * (agent_reach.RedisConnection.from_env): over TLS with client certificates and an ACL user
 * (rediss://, REDIS_TLS_CA/CERT/KEY, REDIS_USERNAME/REDIS_PASSWORD), and through Sentinel
 * (REDIS_SENTINELS, REDIS_SENTINEL_NAME; REDIS_URL's host is never used). Each runs a task.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  startOwnRedis,
  startSentinel,
  startTlsRedis,
  waitFor,
  type OwnRedis,
  type OwnSentinel,
  type TlsRedis,
} from '@agent-reach/testkit';
import { http, startStack, type Stack } from '../support/stack.ts';
import { startPythonAgent, type PythonAgent } from '../support/python.ts';

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  // Last started, first stopped: the agent, the stack, then Redis.
  for (const stop of cleanups.splice(0).reverse()) await stop();
});

/** Starts tests/work_agent.py with `env`, waits until it is HEALTHY, and runs one waited task. */
async function runsATask(stack: Stack, agentId: string, env: Record<string, string>) {
  const agent: PythonAgent = startPythonAgent('tests/work_agent.py', {
    REACH_REGISTRY_URL: stack.registryUrl,
    REACH_AGENT_ID: agentId,
    ...env,
  });
  cleanups.push(() => agent.stop());
  await waitFor(
    async () => {
      const r = await http<{ status: string }>(`${stack.registryUrl}/v1/agents/${agentId}`);
      return r.status === 200 && r.body.status === 'HEALTHY';
    },
    { timeoutMs: 15_000, message: `${agentId} did not register:\n${agent.output()}` },
  );
  const done = await waitFor(
    async () => {
      const r = await http<{ status: string; result?: unknown; error?: string }>(
        `${stack.routerUrl}/v1/tasks?wait_ms=10000`,
        { body: { capability: 'py-work', payload: { n: agentId } } },
      );
      // The router learns of the agent with the next snapshot: NO_AGENT until then.
      return r.status === 503 && r.body.error === 'NO_AGENT' ? undefined : r;
    },
    { timeoutMs: 15_000, intervalMs: 100, message: 'the router never routed to the agent' },
  );
  expect(done.body).toMatchObject({ status: 'completed', result: { done: agentId } });
  return agent;
}

describe('a Python agent and Redis', () => {
  it('over TLS with client certificates, as the ACL user the services use', async () => {
    const tls: TlsRedis = await startTlsRedis();
    cleanups.push(() => tls.stop());
    const stack = await startStack({ redisUrl: tls.url, env: tls.env });
    cleanups.push(() => stack.stop());
    await runsATask(stack, 'py-tls', { ...tls.env, REDIS_URL: tls.url });
    // Its connections are TLS ones of that user: the server refuses any other (redis-tls.test.ts).
    const admin = tls.connect();
    await admin.connect();
    try {
      // A connection still in its handshake (no command yet, `cmd=NULL`) shows `default` until
      // its AUTH: only those that ran a command say which user they are.
      const list = ((await admin.client('LIST')) as string)
        .split('\n')
        .filter((line) => line.trim() !== '' && !line.includes(' cmd=NULL '));
      expect(list.join('\n')).toContain(`user=${tls.username}`);
      expect(list.filter((line) => line.includes(' user=default '))).toEqual([]);
    } finally {
      admin.disconnect();
    }
  });

  it('through Sentinel, with a REDIS_URL whose host only the sentinel can replace', async () => {
    const redis: OwnRedis = await startOwnRedis();
    cleanups.push(() => redis.stop());
    const sentinel: OwnSentinel = await startSentinel(redis.port);
    cleanups.push(() => sentinel.stop());
    const env = {
      REDIS_URL: 'redis://master-from-sentinel.invalid:1',
      REDIS_SENTINELS: sentinel.address,
      REDIS_SENTINEL_NAME: sentinel.name,
    };
    const stack = await startStack({ redisUrl: redis.url, env });
    cleanups.push(() => stack.stop());
    await runsATask(stack, 'py-sentinel', env);
  });
});
