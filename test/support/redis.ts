/**
 * Redis connections of the tests themselves (probes, raw workers): ioredis' Cluster client on the
 * cluster leg, a plain connection otherwise, so a test reads keys of any slot either way.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { testServices } from '@agent-reach/testkit';

/** Either client; both take the same single-slot commands, scripts and `call()`. */
export type TestRedis = Redis | Cluster;

/** Where a test's Redis is: a URL, and on the cluster leg the cluster's seeds. */
export interface RedisTarget {
  redisUrl: string;
  /** `host:port,…` (REDIS_CLUSTER_NODES); empty or absent for a standalone Redis. */
  redisClusterNodes?: string;
}

/** `host:port,…` → ioredis startup nodes. */
export function seedNodes(seeds: string): { host: string; port: number }[] {
  return seeds.split(',').map((s) => {
    const at = s.trim().lastIndexOf(':');
    return { host: s.trim().slice(0, at), port: Number(s.trim().slice(at + 1)) };
  });
}

/**
 * A connection to `target` (default: the run's Redis, `testServices()`), with `options` for each
 * node's connection. On a cluster, MOVED and ASK are followed and a failover is retried.
 */
export function connectRedis(
  target: RedisTarget = testServices(),
  options: RedisOptions = {},
): TestRedis {
  if (target.redisClusterNodes) {
    return new Cluster(seedNodes(target.redisClusterNodes), {
      redisOptions: options,
      maxRedirections: 16,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      retryDelayOnTryAgain: 100,
      slotsRefreshInterval: 2000,
    });
  }
  return new Redis(target.redisUrl, options);
}

/** The environment that points a service or agent process at `target`. */
export function redisEnv(target: RedisTarget): Record<string, string> {
  return {
    REDIS_URL: target.redisUrl,
    ...(target.redisClusterNodes ? { REDIS_CLUSTER_NODES: target.redisClusterNodes } : {}),
  };
}
