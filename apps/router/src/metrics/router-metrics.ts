import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { isErrorCode, type ReachKeys } from '@agent-reach/protocol';
import type { SnapshotHolder } from '@agent-reach/dispatch';
import {
  createMetricsRegistry,
  registerFleetGauges,
  registerRedisErrorCounter,
} from '@agent-reach/service-kit';

/** The router's own metrics, beside the shared HTTP, task-event and fleet ones. */
export interface RouterMetrics {
  registry: Registry;
  /** `reach_router_submits_total{status,outcome}`: accepted, existing, or the error code. */
  submits: Counter<'status' | 'outcome'>;
  /** `reach_router_routing_seconds{status}`: the submit handler — ranking, claim, delivery, `sent`. */
  routing: Histogram<'status'>;
  /** `reach_router_webhooks_total{outcome}`: webhook tries delivered, retried later, or given up (failed). */
  webhooks: Counter<'outcome'>;
}

/** What the router's metrics read at scrape time. */
export interface RouterMetricsDeps {
  redis: RedisClient;
  keys: ReachKeys;
  /** The snapshot holder, once there is one. */
  snapshot: () => SnapshotHolder | undefined;
}

/**
 * Creates the router's registry (one per service instance) with its submit and routing
 * metrics, the snapshot it holds, the fleet gauges read from Redis at scrape time, and its main
 * Redis connection's errors.
 */
export function createRouterMetrics(deps: RouterMetricsDeps): RouterMetrics {
  const registry = createMetricsRegistry('router');
  const submits = new Counter({
    name: 'reach_router_submits_total',
    help: 'Task submissions by HTTP status and outcome: accepted (202), existing (200, a repeated task_id) or the error code',
    labelNames: ['status', 'outcome'] as const,
    registers: [registry],
  });
  const routing = new Histogram({
    name: 'reach_router_routing_seconds',
    help: 'Time the router spends on a submission once it is valid: ranking candidates, claiming the task_id, delivering, recording sent',
    labelNames: ['status'] as const,
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const webhooks = new Counter({
    name: 'reach_router_webhooks_total',
    help: 'Webhook tries by outcome: delivered, retried (failed, tried again later) or failed (given up after the last try)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const info = () =>
    deps.snapshot()?.info() ?? { version: 0, age_ms: -1, agents: 0, full_loads: 0, deltas: 0 };
  new Gauge({
    name: 'reach_router_snapshot_version',
    help: 'Version of the registry snapshot this router routes by',
    registers: [registry],
    collect() {
      this.set(info().version);
    },
  });
  new Gauge({
    name: 'reach_router_snapshot_age_seconds',
    help: 'Time since this router last read the registry snapshot (-1 before the first read)',
    registers: [registry],
    collect() {
      const age = info().age_ms;
      this.set(age < 0 ? -1 : age / 1000);
    },
  });
  new Gauge({
    name: 'reach_router_registry_updates',
    help: 'Registry updates this router applied since it started: full snapshots loaded (full) and deltas applied (delta)',
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const { full_loads, deltas } = info();
      this.set({ kind: 'full' }, full_loads);
      this.set({ kind: 'delta' }, deltas);
    },
  });
  registerFleetGauges(registry, { redis: deps.redis, keys: deps.keys });
  registerRedisErrorCounter(registry, deps.redis);
  return { registry, submits, routing, webhooks };
}

const SUBMIT_URL = '/v1/tasks';
const isSubmit = (request: FastifyRequest) =>
  request.method === 'POST' && request.routeOptions.url === SUBMIT_URL;

/** The stable error code of an error reply body, or `OTHER`; never an unbounded label. */
function errorCode(payload: unknown): string {
  if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return 'OTHER';
  try {
    const body = JSON.parse(payload.toString()) as { error?: unknown };
    return isErrorCode(body.error) ? body.error : 'OTHER';
  } catch {
    return 'OTHER';
  }
}

/**
 * Counts every `POST /v1/tasks` by outcome and times the handler (from validation passed to the
 * reply). Hooks only: the dispatcher is not touched. Add before the routes.
 */
export function installSubmitMetrics(app: FastifyInstance, metrics: RouterMetrics): void {
  const started = new WeakMap<FastifyRequest, bigint>();
  // Synchronous hooks: an async one costs a promise per request, on every route.
  app.addHook('preHandler', (request, _reply, done) => {
    if (isSubmit(request)) started.set(request, process.hrtime.bigint());
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    if (isSubmit(request)) {
      const status = String(reply.statusCode);
      const outcome =
        reply.statusCode === 202
          ? 'accepted'
          : reply.statusCode === 200
            ? 'existing'
            : errorCode(payload);
      metrics.submits.inc({ status, outcome });
      const t0 = started.get(request);
      if (t0 !== undefined)
        metrics.routing.observe({ status }, Number(process.hrtime.bigint() - t0) / 1e9);
    }
    done(null, payload);
  });
}
