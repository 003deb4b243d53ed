import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import pino from 'pino';
import { randomPrefix, testServices, waitFor } from '@agent-reach/testkit';
import { createRegistryService, type RegistryService } from '../index.ts';

let service: RegistryService;
let redis: Redis;
let prefix: string;

beforeAll(async () => {
  prefix = randomPrefix();
  service = await createRegistryService(
    { redisUrl: testServices().redisUrl, prefix, snapshotIntervalMs: 200 },
    { logger: pino({ level: 'silent' }) },
  );
  redis = new Redis(testServices().redisUrl);
});

afterAll(async () => {
  await service.close();
  const found = await redis.keys(`${prefix}:*`);
  if (found.length > 0) await redis.del(...found);
  await redis.quit();
});

describe('registry-sync GET /metrics', () => {
  it('counts requests by route and reports the fleet from the snapshot', async () => {
    const reg = await service.app.inject({
      method: 'POST',
      url: '/v1/agents/register',
      payload: { agent_id: 'met-1', capabilities: ['echo'], max_concurrency: 2 },
    });
    expect(reg.statusCode).toBe(200);
    await service.app.inject({
      method: 'POST',
      url: '/v1/agents/met-1/heartbeat',
      payload: { inflight: 0 },
    });
    const text = await waitFor(
      async () => {
        const res = await service.app.inject({ url: '/metrics' });
        expect(res.statusCode).toBe(200);
        return /reach_agents\{status="HEALTHY",service="registry-sync"\} 1/.test(res.body)
          ? res.body
          : undefined;
      },
      { message: 'the registered agent never showed as HEALTHY in /metrics' },
    );
    expect(text).toMatch(
      /reach_http_requests_total\{[^}]*route="\/v1\/agents\/register"[^}]*status="200"[^}]*\} 1/,
    );
    expect(text).toMatch(
      /reach_http_requests_total\{[^}]*route="\/v1\/agents\/:agent_id\/heartbeat"[^}]*status="401"[^}]*\} 1/,
    );
    expect(text).toContain('reach_inbox_backlog{agent_id="met-1",service="registry-sync"} 0');
    expect(text).toContain('reach_acks_backlog{service="registry-sync"} 0');
    expect(text).toContain('reach_events_write_failures_total{service="registry-sync"} 0');
    expect(text).toContain('process_resident_memory_bytes');
  });

  it('counts the housekeeping passes it completed as the leader, by kind', async () => {
    const passes = async () => {
      const text = (await service.app.inject({ url: '/metrics' })).body;
      const full =
        /^reach_housekeeping_passes_total\{kind="full",service="registry-sync"\} (\d+)$/m;
      const grace =
        /^reach_housekeeping_passes_total\{kind="grace",service="registry-sync"\} (\d+)$/m;
      return { full: Number(full.exec(text)?.[1]), grace: Number(grace.exec(text)?.[1]) };
    };
    const first = await passes();
    expect(Number.isInteger(first.full)).toBe(true);
    expect(first.grace).toBe(0);
    expect(first.full).toBeLessThanOrEqual(service.housekeeper.passes.full);
    await waitFor(async () => (await passes()).full >= first.full + 2, {
      message: 'the full passes did not grow',
    });
    expect(service.housekeeper.passes.grace).toBe(0);
  });

  it('serves OpenAPI 3 for every route, and the UI', async () => {
    const doc = (await service.app.inject({ url: '/docs/json' })).json<{
      openapi: string;
      info: { title: string };
      paths: Record<string, unknown>;
    }>();
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.title).toContain('registry-sync');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/healthz',
        '/metrics',
        '/v1/agents/register',
        '/v1/agents/{agent_id}/heartbeat',
        '/v1/agents/{agent_id}/deregister',
        '/v1/agents',
        '/v1/agents/{agent_id}',
      ]),
    );
    const ui = await service.app.inject({ url: '/docs' });
    expect(ui.statusCode).toBeLessThan(400);
  });
});
