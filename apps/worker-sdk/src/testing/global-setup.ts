/**
 * Vitest global setup for the SDK: real Redis only (the SDK never talks to InfluxDB), from
 * `REDIS_URL` or started by `@agent-reach/testkit`. Tests read it with `testServices()`.
 */
import { startServices } from '@agent-reach/testkit';
import type { TestProject } from 'vitest/node';

/** Starts Redis; the function it returns is vitest's teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const services = await startServices({ influx: false });
  project.provide('reachServices', {
    redisUrl: services.redisUrl,
    influxUrl: '',
    influxV2Url: '',
    influxBucket: services.influxBucket,
  });
  return () => services.stop();
}
