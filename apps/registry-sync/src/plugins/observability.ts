import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { EventSink } from '@agent-reach/events';
import type { ReachKeys } from '@agent-reach/protocol';
import {
  installHttpMetrics,
  installMetricsEndpoint,
  observeTaskEvents,
  registerApiDocs,
} from '@agent-reach/service-kit';
import { createRegistryMetrics, type RegistryMetrics } from '../metrics/registry-metrics.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** registry-sync's metrics, created once per service instance. */
export interface RegistryObservability {
  metrics: RegistryMetrics;
  /** Wraps the event sink: stage metrics and one log line per stage with trace_id and task_id. */
  observe(sink: EventSink): EventSink;
}

/** Creates registry-sync's metrics; nothing reads Redis until Prometheus scrapes. */
export function createRegistryObservability(deps: {
  redis: RedisClient;
  keys: ReachKeys;
  logger: Logger;
}): RegistryObservability {
  const metrics = createRegistryMetrics(deps);
  return {
    metrics,
    observe: (sink) => observeTaskEvents(sink, { registry: metrics.registry, logger: deps.logger }),
  };
}

/**
 * OpenAPI docs at `/docs` (document at `/docs/json`) and, given metrics, `GET /metrics` with
 * request counters. Call before any route is added: both learn routes from hooks.
 */
export async function registerObservability(
  app: FastifyInstance,
  metrics: RegistryMetrics | undefined,
): Promise<void> {
  await registerApiDocs(app, {
    title: 'Agent-Reach registry-sync',
    description:
      "The agents' API: register, heartbeat, deregister, and read the registry. Agents take tasks from Redis streams (docs/PROTOCOL.md).",
    version,
    tags: [{ name: 'operations', description: 'Health and metrics' }],
  });
  if (!metrics) return;
  installHttpMetrics(app, metrics.registry);
  installMetricsEndpoint(app, metrics.registry);
}
