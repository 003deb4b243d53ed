import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { Logger } from 'pino';
import type { EventSink } from '@agent-reach/events';
import type { ReachKeys } from '@agent-reach/protocol';
import type { SnapshotHolder } from '@agent-reach/dispatch';
import {
  createRedis,
  installHttpMetrics,
  installMetricsEndpoint,
  observeTaskEvents,
  registerApiDocs,
  type RedisConnectionSettings,
} from '@agent-reach/service-kit';
import { createRouterConsole, type RouterConsole } from '../console/index.ts';
import {
  createRouterMetrics,
  installSubmitMetrics,
  type RouterMetrics,
} from '../metrics/router-metrics.ts';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** The router's metrics and console, created once per service instance. */
export interface RouterObservability {
  metrics: RouterMetrics;
  console: RouterConsole;
  /** Wraps the event sink: stage metrics, one log line per stage with trace_id, recent tasks. */
  observe(sink: EventSink): EventSink;
  /** Lets the metrics report the snapshot the router routes by. */
  watchSnapshot(snapshot: SnapshotHolder): void;
}

/** What {@link createRouterObservability} needs. */
export interface RouterObservabilityDeps {
  redis: RedisClient;
  /** Where the console's own connections go. */
  connection: RedisConnectionSettings;
  keys: ReachKeys;
  logger: Logger;
}

/** Creates the router's metrics registry and console; nothing reads Redis until scraped or opened. */
export function createRouterObservability(deps: RouterObservabilityDeps): RouterObservability {
  let snapshot: SnapshotHolder | undefined;
  const metrics = createRouterMetrics({
    redis: deps.redis,
    keys: deps.keys,
    snapshot: () => snapshot,
  });
  const connect = () => {
    const conn = createRedis(deps.connection, { maxRetriesPerRequest: null });
    conn.on('error', (err: Error) =>
      deps.logger.debug({ err, module: 'redis' }, 'console connection error'),
    );
    return conn;
  };
  const routerConsole = createRouterConsole({
    redis: deps.redis,
    connect,
    keys: deps.keys,
    logger: deps.logger,
  });
  return {
    metrics,
    console: routerConsole,
    observe: (sink) =>
      observeTaskEvents(sink, {
        registry: metrics.registry,
        logger: deps.logger,
        onEvent: (e) => routerConsole.recent.note(e),
      }),
    watchSnapshot: (s) => {
      snapshot = s;
    },
  };
}

/**
 * OpenAPI docs at `/docs` (document at `/docs/json`) and, given metrics, `GET /metrics` with
 * request and submit counters. Call before any route is added: both learn routes from hooks.
 */
export async function registerObservability(
  app: FastifyInstance,
  metrics: RouterMetrics | undefined,
): Promise<void> {
  await registerApiDocs(app, {
    title: 'Agent-Reach router',
    description:
      "The callers' API: submit a task for a capability, read its state and timeline, read results from a callback topic. Also the operators' console.",
    version,
    tags: [
      { name: 'console', description: "The operators' console and the data it shows" },
      { name: 'operations', description: 'Health and metrics' },
    ],
  });
  if (!metrics) return;
  installHttpMetrics(app, metrics.registry);
  installSubmitMetrics(app, metrics);
  installMetricsEndpoint(app, metrics.registry);
}
