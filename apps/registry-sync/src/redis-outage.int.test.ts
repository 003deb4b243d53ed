/**
 * registry-sync through a Redis outage, on a Redis of its own: /livez stays 200 (process only),
 * /healthz answers 503 in time while Redis is away, the duty loops' failed commands end no
 * process (an unhandled rejection would fail this run), and all is well again once Redis is back.
 * At start-up, a Redis that does not answer fails the start within 10 s, naming it.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnRedis, waitFor, type OwnRedis } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from './index.ts';

let own: OwnRedis;
let service: RegistryService;

const fast = { heartbeatIntervalMs: 100, suspectMs: 400, offlineMs: 800, sweepIntervalMs: 50 };

beforeAll(async () => {
  own = await startOwnRedis();
  service = await createRegistryService(
    { redisUrl: own.url, prefix: 'outage', ...fast, snapshotIntervalMs: 200 },
    { logger: pino({ level: 'silent' }) },
  );
}, 30_000);

afterAll(async () => {
  await service?.close();
  await own?.stop();
});

const status = async (url: string) => (await service.app.inject({ url })).statusCode;

describe('a Redis outage', () => {
  it('keeps /livez at 200, answers /healthz 503 in time, and recovers when Redis is back', async () => {
    expect(await status('/healthz')).toBe(200);
    own.kill('SIGKILL');
    await own.exited();
    await waitFor(async () => (await status('/healthz')) === 503, { timeoutMs: 8000 });
    const t0 = performance.now();
    expect(await status('/healthz')).toBe(503);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(await status('/livez')).toBe(200);
    // The duty loops meet failing commands for a while (every 50 ms), and nothing exits.
    await waitFor(async () => (await status('/livez')) === 200 && performance.now() - t0 > 2000, {
      timeoutMs: 5000,
    });
    await own.restart();
    await waitFor(async () => (await status('/healthz')) === 200, { timeoutMs: 15_000 });
  }, 40_000);

  it('fails a start within 10 s when Redis does not answer, naming it', async () => {
    // Nothing listens on the port of a stopped Redis of its own.
    const dead = await startOwnRedis();
    await dead.stop();
    const t0 = performance.now();
    await expect(
      createRegistryService(
        { redisUrl: dead.url, prefix: 'outage2' },
        { logger: pino({ level: 'silent' }) },
      ),
    ).rejects.toThrow(`Redis at REDIS_URL=${dead.url} did not answer within 10 s`);
    expect(performance.now() - t0).toBeLessThan(12_000);
  }, 30_000);
});
