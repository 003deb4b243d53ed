/**
 * ioredis re-sends a command whose reply was lost on a dropped connection. The submission's
 * idempotency check and claim are one atomic step keyed by the request, so the re-sent claim is
 * recognised as the same submission: the task is delivered once, not refused as a duplicate and
 * not delivered twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { reachKeys } from '@agent-reach/protocol';
import { createRegistryService, type RegistryService } from '@agent-reach/registry-sync';
import { createRouterService, type RouterService } from '@agent-reach/router';
import {
  randomPrefix,
  startTcpProxy,
  testServices,
  waitFor,
  type TcpProxy,
} from '@agent-reach/testkit';

const silent = pino({ level: 'silent' });
let prefix: string;
let redis: Redis;
let proxy: TcpProxy;
let sync: RegistryService;
let router: RouterService;

beforeAll(async () => {
  prefix = randomPrefix();
  const url = testServices().redisUrl;
  redis = new Redis(url);
  proxy = await startTcpProxy(Number(new URL(url).port));
  sync = await createRegistryService({ redisUrl: url, prefix }, { logger: silent });
  // The router talks to Redis through the proxy, which will lose one reply.
  router = await createRouterService(
    { redisUrl: `redis://127.0.0.1:${proxy.port}`, prefix, storeTimeoutMs: 5000 },
    { logger: silent },
  );
  const res = await sync.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: 'solo', capabilities: ['once'], max_concurrency: 10 },
  });
  expect(res.statusCode).toBe(200);
});

afterAll(async () => {
  await router?.close();
  await sync?.close();
  await proxy?.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

describe('a reply lost on a dropped connection', () => {
  it('does not turn the re-sent claim into a refusal or a second delivery', async () => {
    const taskId = 'resend-marker-7f3a';
    const dropped = proxy.dropReplyOnce(taskId);
    const res = await router.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      payload: { task_id: taskId, capability: 'once', payload: 1 },
    });
    await dropped;
    expect(proxy.dropped()).toBe(1);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ task_id: taskId, status: 'sent', agent_id: 'solo' });
    const keys = reachKeys(prefix);
    const entries = await redis.xrange(keys.inbox('solo'), '-', '+');
    expect(entries.filter(([, f]) => f.includes(taskId))).toHaveLength(1);
    // The router answers once the entry is in the inbox, which is the `sent` record.
    const stages = async () =>
      (await router.app.inject({ url: `/v1/tasks/${taskId}` }))
        .json<{ timeline: { stage: string }[] }>()
        .timeline.map((e) => e.stage);
    const timeline = await waitFor(
      async () => {
        const now = await stages();
        return now.includes('sent') ? now : undefined;
      },
      { message: 'the sent stage recorded' },
    );
    expect(timeline.filter((s) => s === 'accepted')).toHaveLength(1);
    expect(timeline.filter((s) => s === 'sent')).toHaveLength(1);
  });
});
