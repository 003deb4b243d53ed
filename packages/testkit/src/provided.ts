/** Service URLs the global setup hands to every test file (through vitest's provide/inject). */
export interface ReachServicesInfo {
  redisUrl: string;
  /**
   * Seed nodes (`host:port,…`) of the Redis Cluster this run uses (the cluster leg,
   * `REACH_TEST_REDIS=cluster`); empty or absent on the standalone leg. Give them to services as
   * `REDIS_CLUSTER_NODES`; `redisUrl` is then the first seed's.
   */
  redisClusterNodes?: string;
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
