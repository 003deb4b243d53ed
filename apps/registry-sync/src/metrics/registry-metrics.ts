import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Registry } from 'prom-client';
import type { ReachKeys } from '@agent-reach/protocol';
import {
  createMetricsRegistry,
  registerFleetGauges,
  registerRedisErrorCounter,
} from '@agent-reach/service-kit';
import { registerHousekeepingMetrics } from '../duties/housekeeper.ts';
import { registerSnapshotMetrics } from '../duties/snapshot-writer.ts';

/** registry-sync's metrics of one service instance. */
export interface RegistryMetrics {
  registry: Registry;
}

/** What registry-sync's metrics read at scrape time. */
export interface RegistryMetricsDeps {
  redis: RedisClient;
  keys: ReachKeys;
}

/**
 * Creates registry-sync's registry (one per instance, never the global one): process metrics,
 * and the fleet gauges — agents by status, inbox depths, dead letters, tasks due, the acks
 * backlog and the store's counters such as refused acks — read from Redis at scrape time, and
 * the main Redis connection's errors, and the housekeeping passes the process completed.
 * Request counts and stage latencies (received, completed, failed, retried, dead) are added by
 * the HTTP hooks and the event-sink observer.
 */
export function createRegistryMetrics(deps: RegistryMetricsDeps): RegistryMetrics {
  const registry = createMetricsRegistry('registry-sync');
  registerFleetGauges(registry, { redis: deps.redis, keys: deps.keys });
  registerRedisErrorCounter(registry, deps.redis);
  registerHousekeepingMetrics(registry);
  registerSnapshotMetrics(registry);
  return { registry };
}
