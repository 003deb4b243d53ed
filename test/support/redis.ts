/**
 * Redis connections of the tests themselves (probes, raw workers), made by the services' own
 * factory (`createRedis` of @agent-reach/service-kit/redis): ioredis' Cluster client on the
 * cluster leg, a plain connection otherwise, so a test reads keys of any slot either way.
 */
import type { RedisOptions } from 'ioredis';
import { createRedis, parseHostPorts, type RedisClient } from '@agent-reach/service-kit/redis';
import { testServices } from '@agent-reach/testkit';

/** Either client; both take the same single-slot commands, scripts and `call()`. */
export type TestRedis = RedisClient;

/** Where a test's Redis is: a URL, and on the cluster leg the cluster's seeds. */
export interface RedisTarget {
  redisUrl: string;
  /** `host:port,…` (REDIS_CLUSTER_NODES); empty or absent for a standalone Redis. */
  redisClusterNodes?: string;
}

/** `host:port,…` → addresses (as REDIS_CLUSTER_NODES is read). */
export function seedNodes(seeds: string): { host: string; port: number }[] {
  return parseHostPorts(seeds, 'REDIS_CLUSTER_NODES');
}

/**
 * A connection to `target` (default: the run's Redis, `testServices()`), with `options` on top,
 * as a service would make it with REDIS_URL and REDIS_CLUSTER_NODES. On a cluster, MOVED and ASK
 * are followed and a failover is retried.
 */
export function connectRedis(
  target: RedisTarget = testServices(),
  options: RedisOptions = {},
): TestRedis {
  return createRedis(
    {
      url: target.redisUrl,
      ...(target.redisClusterNodes ? { clusterNodes: seedNodes(target.redisClusterNodes) } : {}),
    },
    options,
  );
}

/** The environment that points a service or agent process at `target`. */
export function redisEnv(target: RedisTarget): Record<string, string> {
  return {
    REDIS_URL: target.redisUrl,
    ...(target.redisClusterNodes ? { REDIS_CLUSTER_NODES: target.redisClusterNodes } : {}),
  };
}
