/**
 * Redis through Sentinel: with REDIS_SENTINELS and REDIS_SENTINEL_NAME, registry-sync, the router
 * and a worker-sdk agent ask the sentinel for the master (REDIS_URL's host is not used) and the
 * core path runs: register, submit, deliver, complete, callback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { ReachAgent, ReachClient, redisConnectionFromEnv } from '@agent-reach/worker-sdk';
import {
  startOwnRedis,
  startSentinel,
  type OwnRedis,
  type OwnSentinel,
} from '@agent-reach/testkit';
import { startStack, type Stack } from '../support/stack.ts';

let redis: OwnRedis;
let sentinel: OwnSentinel;
let stack: Stack;
let agent: ReachAgent;
let client: ReachClient;

beforeAll(async () => {
  redis = await startOwnRedis();
  sentinel = await startSentinel(redis.port);
  // A host that does not resolve: only the sentinel can name the master.
  const env = {
    REDIS_URL: 'redis://master-from-sentinel.invalid:1',
    REDIS_SENTINELS: sentinel.address,
    REDIS_SENTINEL_NAME: sentinel.name,
  };
  stack = await startStack({ redisUrl: redis.url, env });
  agent = new ReachAgent({
    registryUrl: stack.registryUrl,
    routerUrl: stack.routerUrl,
    ...redisConnectionFromEnv(env),
    agentId: 'sentinel-echo',
    capabilities: ['sentinel-echo'],
    handler: (task) => Promise.resolve(task.payload),
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
  await sentinel?.stop();
  await redis?.stop();
});

describe('Redis through Sentinel', () => {
  it('runs the core path with the master the sentinel names', async () => {
    const submitted = await client.submit({ capability: 'sentinel-echo', payload: { s: 1 } });
    expect(submitted.agent_id).toBe('sentinel-echo');
    const item = await client.result(submitted.task_id, { timeoutMs: 10_000 });
    expect(item).toMatchObject({ status: 'completed', result: { s: 1 } });
  });
});
