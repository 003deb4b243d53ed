/**
 * A router takes the settings registry-sync publishes over its own, says so when it was given a
 * different value, and picks them up when they appear after it started; its /healthz waits for
 * the first snapshot.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import {
  encodeSettings,
  reachKeys,
  SHARED_DEFAULTS,
  type PublishedSettings,
  type ReachKeys,
} from '@agent-reach/protocol';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRouterService, optionsFromEnv, type RouterService } from '../index.ts';

/** What registry-sync would publish with its defaults and an offline bound of 30 s. */
const published: PublishedSettings = {
  heartbeatIntervalMs: 5000,
  suspectMs: 15_000,
  offlineMs: 30_000,
  deliveryLeaseMs: 600_000,
  snapshotIntervalMs: 5000,
  dispatchGraceMs: SHARED_DEFAULTS.dispatchGraceMs,
  receiptTimeoutMs: 30_000,
  maxAttempts: 4,
  retryBaseMs: 2000,
  retryCapMs: 120_000,
  watermark: 0.7,
  dlqRetentionS: SHARED_DEFAULTS.dlqRetentionS,
  callbackRetentionS: SHARED_DEFAULTS.callbackRetentionS,
  callbackMaxLen: SHARED_DEFAULTS.callbackMaxLen,
  shards: SHARED_DEFAULTS.shards,
  taskShards: SHARED_DEFAULTS.taskShards,
};

interface LogLine {
  level: number;
  msg: string;
  setting?: string;
  given?: number;
  published?: number;
}

let redis: Redis;
let keys: ReachKeys;
let prefix: string;
let lines: LogLine[];
const routers: RouterService[] = [];

/** A router with the environment given, logging into `lines`. */
async function startRouter(env: NodeJS.ProcessEnv): Promise<RouterService> {
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  );
  const router = await createRouterService(
    { ...optionsFromEnv(env), redisUrl: testServices().redisUrl, prefix },
    { logger },
  );
  routers.push(router);
  return router;
}

/** What registry-sync does when it writes a snapshot: the settings, then the announcement. */
async function publish(values: PublishedSettings): Promise<void> {
  await redis.hset(keys.settings(), encodeSettings(values, 'sync-test', Date.now()));
  await redis.publish(keys.snapshotChannel(), '1');
}

beforeEach(() => {
  prefix = randomPrefix();
  keys = reachKeys(prefix);
  lines = [];
  redis = new Redis(testServices().redisUrl);
});

afterEach(async () => {
  await Promise.all(routers.splice(0).map((r) => r.close()));
  const left = await redis.keys(`${prefix}:*`);
  if (left.length > 0) await redis.del(...left);
  await redis.quit();
});

describe('settings shared with registry-sync', () => {
  it('warns at start-up about a conflicting REACH_OFFLINE_MS and uses the published value', async () => {
    await publish(published);
    const router = await startRouter({ REACH_OFFLINE_MS: '600' });
    const warning = lines.find((l) => l.level === 40 && l.setting === 'REACH_OFFLINE_MS');
    expect(warning).toMatchObject({ given: 600, published: 30_000 });
    expect(warning?.msg).toContain('600');
    expect(warning?.msg).toContain('30000');
    expect(router.settings.offlineMs).toBe(30_000);
    expect(router.settings.from).toBe('published');
    // Values not set for the router come from registry-sync without a warning.
    expect(router.settings.watermark).toBe(0.7);
    expect(lines.filter((l) => l.setting === 'REACH_WATERMARK' && l.level >= 40)).toEqual([]);
  });

  it('keeps its own values until registry-sync publishes, then takes the published ones', async () => {
    const router = await startRouter({
      REACH_OFFLINE_MS: '600',
      // Only the snapshot's announcement can bring the settings within the test.
      REACH_SNAPSHOT_MS: '60000',
    });
    expect(router.settings.from).toBe('own');
    expect(router.settings.offlineMs).toBe(600);
    expect(router.settings.watermark).toBe(SHARED_DEFAULTS.watermark);
    await publish(published);
    await waitFor(() => router.settings.offlineMs === 30_000, {
      timeoutMs: 5000,
      message: 'the router takes the published REACH_OFFLINE_MS',
    });
    expect(router.settings.watermark).toBe(0.7);
    expect(lines.some((l) => l.level === 40 && l.setting === 'REACH_OFFLINE_MS')).toBe(true);
    // A later change (registry-sync restarted with other settings) is taken too.
    await publish({ ...published, offlineMs: 45_000 });
    await waitFor(() => router.settings.offlineMs === 45_000, { timeoutMs: 5000 });
  });

  it('gives collaborators that read an options object the published values', async () => {
    await publish(published);
    const router = await startRouter({ REACH_DISPATCH_GRACE_MS: '5000' });
    const live = router.settings.over(router.options);
    expect(live.dispatchGraceMs).toBe(SHARED_DEFAULTS.dispatchGraceMs);
    expect(live.offlineMs).toBe(30_000);
    expect(live.maxHops).toBe(router.options.maxHops);
  });
});

describe('GET /healthz', () => {
  it('answers 503 NO_SNAPSHOT until the router holds a snapshot, then 200', async () => {
    const router = await startRouter({});
    const before = await router.app.inject({ url: '/healthz' });
    expect(before.statusCode).toBe(503);
    expect(before.json()).toMatchObject({ error: 'NO_SNAPSHOT', message: expect.any(String) });
    // What registry-sync's snapshot script does: the snapshot, then the announcement.
    await redis.set(
      keys.snapshot(),
      JSON.stringify({ version: 1, written_at: Date.now(), agents: [] }),
    );
    await redis.publish(keys.snapshotChannel(), '1');
    const after = await waitFor(
      async () => {
        const res = await router.app.inject({ url: '/healthz' });
        return res.statusCode === 200 && res;
      },
      { timeoutMs: 5000, message: 'healthz answers 200 once a snapshot is held' },
    );
    expect(after.json()).toMatchObject({ status: 'ok', snapshot: { version: 1 } });
  });
});
