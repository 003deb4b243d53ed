/** Service URLs the global setup hands to every test file (through vitest's provide/inject). */
export interface ReachServicesInfo {
  redisUrl: string;
  /** InfluxDB 1.x API: `/ping`, `/write`, `/query`. */
  influxUrl: string;
  /** Also serves InfluxDB 2's `/api/v2/write` (for @influxdata/influxdb-client). */
  influxV2Url: string;
  /** Database / bucket that exists on it. */
  influxBucket: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    reachServices: ReachServicesInfo;
  }
}
