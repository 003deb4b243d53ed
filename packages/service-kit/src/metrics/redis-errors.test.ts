import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { createMetricsRegistry } from './registry.ts';
import { registerRedisErrorCounter } from './redis-errors.ts';

/** A TCP port nothing listens on: one the system gave out and was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('reach_redis_errors_total', () => {
  it('counts the connection errors of a client whose Redis refuses it', async () => {
    const registry = createMetricsRegistry('test', { defaultMetrics: false });
    const client = new Redis({
      host: '127.0.0.1',
      port: await closedPort(),
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => (times < 3 ? 20 : null),
    });
    registerRedisErrorCounter(registry, client);
    expect(await registry.getSingleMetricAsString('reach_redis_errors_total')).toContain(
      'reach_redis_errors_total{service="test"} 0',
    );
    await client.connect().catch(() => undefined);
    // The first try and the retries each fail: polled, with a deadline.
    const count = async () =>
      Number(
        /reach_redis_errors_total\{service="test"\} (\d+)/.exec(
          await registry.getSingleMetricAsString('reach_redis_errors_total'),
        )?.[1],
      );
    const deadline = Date.now() + 5000;
    while ((await count()) < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await count()).toBeGreaterThanOrEqual(2);
    client.disconnect();
  });
});
