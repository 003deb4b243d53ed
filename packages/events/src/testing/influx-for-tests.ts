import { testServices } from '@agent-reach/testkit';

/** The real InfluxDB the integration tests write to. */
export interface InfluxForTests {
  /** InfluxDB 1.x API: `/ping`, `/write`, `/query`. */
  url: string;
  /** Also serves `/api/v2/write`. */
  v2Url: string;
}

/**
 * `INFLUX_URL` / `INFLUX_V2_URL` when set (vitest.config.ts then skips the global setup),
 * else what testkit's global setup started for this run.
 */
export function influxForTests(): InfluxForTests {
  const url = process.env.INFLUX_URL;
  if (url) return { url, v2Url: process.env.INFLUX_V2_URL || url };
  const services = testServices();
  return { url: services.influxUrl, v2Url: services.influxV2Url };
}

/** A random id that is safe in InfluxQL string literals and as a database name. */
export function randomId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 10)}`;
}
