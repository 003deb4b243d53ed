/**
 * Vitest global setup: starts Redis (a Redis Cluster with `REACH_TEST_REDIS=cluster`) and InfluxDB once per run and hands their URLs to tests,
 * which read them with `testServices()`. Use it in a workspace's vitest.config.ts:
 *
 * ```ts
 * export default defineConfig({ test: { globalSetup: ['@agent-reach/testkit/global-setup'] } });
 * ```
 */
import type { TestProject } from 'vitest/node';
import { startServices } from './services.ts';
import type {} from './provided.ts'; // the ProvidedContext augmentation

/** Starts the services; the function it returns is vitest's teardown and stops them. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const services = await startServices();
  project.provide('reachServices', {
    redisUrl: services.redisUrl,
    redisClusterNodes: services.redisClusterNodes ?? '',
    influxUrl: services.influxUrl,
    influxV2Url: services.influxV2Url,
    influxBucket: services.influxBucket,
  });
  return () => services.stop();
}
