/**
 * Registry-sync coming back after every instance was away, on the real test Redis: the new
 * leader reads how long no pass ran from the last pass's mark (Redis time), so its first passes
 * give leases that time back instead of calling a fleet OFFLINE whose heartbeats could not land;
 * once the grace is over, an agent that still sends none goes SUSPECT, then OFFLINE.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import type { RegisterReply } from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

const prefix = randomPrefix();
const fast = {
  heartbeatIntervalMs: 100,
  suspectMs: 400,
  offlineMs: 800,
  sweepIntervalMs: 50,
  snapshotIntervalMs: 200,
};
const redis = new Redis(testServices().redisUrl);
const services: RegistryService[] = [];

const start = async () => {
  const s = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, ...fast },
    { logger: pino({ level: 'silent' }) },
  );
  services.push(s);
  return s;
};

afterAll(async () => {
  for (const s of services) await s.close();
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

async function register(s: RegistryService, id: string): Promise<string> {
  const res = await s.app.inject({
    method: 'POST',
    url: '/v1/agents/register',
    payload: { agent_id: id, capabilities: ['echo'], max_concurrency: 1 },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json<RegisterReply>().token;
}

const statusOf = async (s: RegistryService, id: string) =>
  (await s.app.inject({ url: `/v1/agents/${id}` })).json<{ status: string }>().status;

describe('registry-sync back after an absence', () => {
  it('gives leases the absence back, then judges them again', async () => {
    const first = await start();
    const token = await register(first, 'away-live');
    await register(first, 'away-dead');
    await waitFor(() => first.housekeeper.passes.full > 2, { timeoutMs: 5000 });
    await first.close();
    // Away for five OFFLINE bounds: no heartbeat could land meanwhile.
    await new Promise((r) => setTimeout(r, 4000));

    const back = await start();
    await waitFor(() => back.housekeeper.passes.grace >= 2, {
      timeoutMs: 5000,
      message: 'the new leader did not see the absence',
    });
    // Two passes into the grace, with no heartbeat since before the absence: still HEALTHY.
    expect(await statusOf(back, 'away-live')).toBe('HEALTHY');
    expect(await statusOf(back, 'away-dead')).toBe('HEALTHY');

    // The live agent's heartbeats land again, with the token of its registration.
    const beats = setInterval(() => {
      void back.app.inject({
        method: 'POST',
        url: '/v1/agents/away-live/heartbeat',
        headers: { authorization: `Bearer ${token}` },
        payload: { inflight: 0 },
      });
    }, fast.heartbeatIntervalMs);
    try {
      await waitFor(async () => (await statusOf(back, 'away-dead')) === 'OFFLINE', {
        timeoutMs: 10_000,
        message: 'the agent that sent no heartbeat was never called OFFLINE',
      });
      expect(await statusOf(back, 'away-live')).toBe('HEALTHY');
      // The pass that judged it completes as a full one (it may still be publishing).
      await waitFor(() => back.housekeeper.passes.full > 0, {
        timeoutMs: 5000,
        message: 'no full pass after the grace',
      });
    } finally {
      clearInterval(beats);
    }
  }, 30_000);
});
