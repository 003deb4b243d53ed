import pino from 'pino';
import { randomPrefix, testServices } from '@agent-reach/testkit';
import { createRouterService, type RouterService } from '../index.ts';

/** Routers started in process for a test file, each on its own key prefix, closed together. */
export function routerFactory(): {
  /** A router on the test Redis; with `events`, writing to and reading from that InfluxDB (v1 API). */
  start: (events?: { url: string; bucket: string }) => Promise<RouterService>;
  closeAll: () => Promise<void>;
} {
  const silent = pino({ level: 'silent' });
  const routers: RouterService[] = [];
  return {
    async start(events) {
      const r = await createRouterService(
        { redisUrl: testServices().redisUrl, prefix: randomPrefix() },
        { logger: silent, ...(events ? { events: { ...events, api: 'v1' as const } } : {}) },
      );
      routers.push(r);
      return r;
    },
    async closeAll() {
      await Promise.all(routers.map((r) => r.close()));
    },
  };
}
