import Fastify, { type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { RedisClient } from '@agent-reach/service-kit/redis';
import cookie from '@fastify/cookie';
import {
  baseFastifyOptions,
  installAuth,
  installHostGuard,
  trustProxyOption,
  type AuthFailureLimiter,
  type EdgeSettings,
  installErrorHandling,
  installRequestContext,
  isRedisUnavailable,
  pingWithin,
  type ApiKeyStore,
} from '@agent-reach/service-kit';
import type { CallbackReader } from './callbacks/callback-reader.ts';
import type { ResultWaiter } from './callbacks/result-waiter.ts';
import type { Submitter } from './submit/submitter.ts';
import type { TaskReader } from './tasks/task-reader.ts';
import type {
  ShadowSettingsStore,
  SnapshotHolder,
  TaskCanceller,
  WaitingRoom,
} from '@agent-reach/dispatch';
import { callbacksRoutes } from './routes/callbacks/index.ts';
import { tasksRoutes } from './routes/tasks/index.ts';
import { cancelRoutes } from './routes/cancel/index.ts';
import { schedulesRoutes, type ScheduleRouteDeps } from './routes/schedules/index.ts';
import { dlqRoutes } from './routes/dlq/index.ts';
import { routeRoutes } from './routes/route/index.ts';
import { ERROR_CODES, type ErrorCode, type ReachKeys } from '@agent-reach/protocol';
import type { DeadLetters } from './dlq/dead-letters.ts';
import { registerObservability, type RouterObservability } from './plugins/observability.ts';
import { consoleRoutes } from './routes/console/index.ts';
import { consoleSessionRoutes } from './routes/console/session.ts';
import { keysRoutes } from './routes/keys/index.ts';
import { tenantsRoutes } from './routes/tenants/index.ts';
import { capabilitiesRoutes } from './routes/capabilities/index.ts';
import { agentsRoutes } from './routes/agents/index.ts';
import { RegistryForwarder } from './agents/registry-forwarder.ts';
import { queuesRoutes } from './routes/queues/index.ts';
import type { TenantRecords } from './tenants/tenant-records.ts';
import { statsRoutes } from './routes/stats/index.ts';
import { timelineRoutes } from './routes/timeline/index.ts';
import { taskSearchRoutes } from './routes/task-search/index.ts';
import type { TaskSearch } from './search/task-search.ts';
import { eventsRoutes, type EventsRouteDeps } from './routes/events/index.ts';
import type { EventsReader } from './observability/events-reader.ts';
import { registerRateLimit } from './plugins/rate-limit.ts';
import type { InflightQuota } from './quotas/inflight-quota.ts';
import type { KeyLimits } from './quotas/key-limits.ts';
import { installMcp } from './mcp/route.ts';
import { InputSchemaReader } from './mcp/input-schemas.ts';
import { a2aRoutes } from './a2a/index.ts';
import type { PushConfigStore } from './a2a/push-configs.ts';
import { webhooksRoutes, type WebhooksRouteDeps } from './routes/webhooks/index.ts';

/** Collaborators the router's HTTP app is built from. */
export interface RouterAppDeps {
  redis: RedisClient;
  submitter: Submitter;
  tasks: TaskReader;
  callbacks: CallbackReader;
  /** Holds `POST /v1/tasks?wait_ms=` replies until the result arrives. */
  waiter: ResultWaiter;
  snapshot: SnapshotHolder;
  deadLetters: DeadLetters;
  /** `POST /v1/tasks/:id/cancel`. */
  canceller: TaskCanceller;
  /** `/v1/schedules`; without it, no schedule routes. */
  schedules?: ScheduleRouteDeps;
  keys: ReachKeys;
  /** The concurrency watermark in force. */
  watermark: () => number;
  maxPayloadBytes: number;
  /** API keys (docs/SECURITY.md): whether requests need one, and the store that checks them. */
  auth: { required: boolean; store: ApiKeyStore; failures?: AuthFailureLimiter };
  /** Hosts, origins and proxies the app answers and trusts; without it, loopback rules only. */
  edge?: EdgeSettings;
  /** Per-key quotas (docs/SECURITY.md): requests per second and tasks in flight; without it, none. */
  quotas?: { limits: KeyLimits; inflight: InflightQuota };
  logger?: FastifyServerOptions['loggerInstance'];
  /** Metrics and console; without it the app has docs only. */
  observability?: RouterObservability;
  /** Reads task events back from InfluxDB (stats, expired tasks' timelines); without it, as if INFLUX_URL were unset. */
  eventsReader?: EventsReader;
  /** `GET /v1/tasks/:task_id/events`; without it, the route is not served. */
  taskEvents?: EventsRouteDeps;
  /** A2A push-notification configs (docs/A2A.md); without them, A2A push calls are refused. */
  a2aPush?: PushConfigStore;
  /** Webhook failures and tenants' webhook secrets (`/v1/webhooks`); without them, no such routes. */
  webhooks?: WebhooksRouteDeps;
  /** Tenant records (`/v1/tenants`, operators); without them, no tenant routes. */
  tenants?: TenantRecords;
  /** The waiting rooms (`/v1/queues`); without them, no such route. */
  room?: WaitingRoom;
  /** Capabilities' shadow settings (`/v1/capabilities/:capability/shadow`); without them, no such route. */
  shadows?: ShadowSettingsStore;
  /** Task search (`GET /v1/tasks`); without it, no such route. */
  search?: TaskSearch;
  /** Sends the operators' agent drain and serve calls on to registry-sync; without it, they are 503. */
  registry?: RegistryForwarder;
}

/** Builds the router's HTTP app; never listens (server.ts does, tests use inject). */
export async function buildRouterApp(deps: RouterAppDeps) {
  // The body may carry a payload of the full limit plus the envelope around it.
  const app = Fastify({
    ...baseFastifyOptions(deps.maxPayloadBytes + 64 * 1024),
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    ...trustProxyOption(deps.edge),
  }).withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandling(app, isRedisUnavailable);
  // First of all: a request to a host or from an origin this service must not answer (DNS
  // rebinding into a keyless local stack) is refused before anything else runs.
  installHostGuard(app, {
    open: !deps.auth.required,
    allowedHosts: deps.edge?.allowedHosts ?? [],
    allowedOrigins: deps.edge?.allowedOrigins ?? [],
  });
  // Before any route: a crash or unhandled rejection is logged with its request (runMain).
  installRequestContext(app);
  // The console's login cookie; then keys, checked before any route's body is read.
  await app.register(cookie);
  installAuth(app, {
    required: deps.auth.required,
    verifier: deps.auth.store,
    ...(deps.auth.failures ? { failures: deps.auth.failures } : {}),
  });
  // Docs and metrics learn routes from hooks: before any route.
  await registerObservability(app, deps.observability?.metrics);
  // Per-key request rates: after the auth hook names the key, on every route declared below.
  if (deps.quotas) {
    await registerRateLimit(app, {
      redis: deps.redis,
      keys: deps.keys,
      limits: deps.quotas.limits,
      open: !deps.auth.required,
    });
  }
  // Liveness: 200 while the process serves HTTP, without touching Redis, so that an
  // orchestrator restarts a hung process but not every replica through a Redis outage (that is
  // readiness, /healthz).
  app.get('/livez', { config: { auth: 'public' } }, async () => ({ status: 'ok' }));
  // Ready once Redis answers and the router holds a registry snapshot to route by: before
  // registry-sync has written one, every submission would get NO_AGENT.
  app.get('/healthz', { config: { auth: 'public' } }, async (_request, reply) => {
    const fail = (error: ErrorCode, message: string) =>
      reply.code(ERROR_CODES[error]).header('retry-after', '1').send({ error, message });
    try {
      await pingWithin(deps.redis);
    } catch {
      return fail('STORE_UNAVAILABLE', 'Redis does not answer');
    }
    const snapshot = deps.snapshot.info();
    if (snapshot.version === 0) {
      return fail(
        'NO_SNAPSHOT',
        'no registry snapshot yet: start registry-sync on the same Redis and REACH_PREFIX',
      );
    }
    return { status: 'ok', snapshot };
  });
  await app.register(tasksRoutes, {
    submitter: deps.submitter,
    tasks: deps.tasks,
    waiter: deps.waiter,
    ...(deps.quotas ? { quota: deps.quotas.inflight } : {}),
    // A batch carries many payloads: room for 16 MiB of them, or one of the full limit.
    batchBodyLimit: Math.max(16 * 1024 * 1024, deps.maxPayloadBytes + 64 * 1024),
  });
  await app.register(callbacksRoutes, { reader: deps.callbacks });
  await app.register(dlqRoutes, { deadLetters: deps.deadLetters });
  await app.register(cancelRoutes, { canceller: deps.canceller });
  if (deps.schedules) await app.register(schedulesRoutes, deps.schedules);
  await app.register(routeRoutes, {
    redis: deps.redis,
    keys: deps.keys,
    snapshot: deps.snapshot,
    watermark: deps.watermark,
  });
  await app.register(statsRoutes, { events: deps.eventsReader, room: deps.room });
  await app.register(timelineRoutes, { tasks: deps.tasks, events: deps.eventsReader });
  if (deps.search) await app.register(taskSearchRoutes, { search: deps.search });
  if (deps.taskEvents) await app.register(eventsRoutes, deps.taskEvents);
  // The A2A gateway (docs/A2A.md): cards from the snapshot, JSON-RPC over the routes' own code.
  await app.register(a2aRoutes, {
    redis: deps.redis,
    keys: deps.keys,
    submitter: deps.submitter,
    tasks: deps.tasks,
    waiter: deps.waiter,
    canceller: deps.canceller,
    snapshot: deps.snapshot,
    auth: { required: deps.auth.required, verifier: deps.auth.store },
    ...(deps.quotas ? { quota: deps.quotas.inflight } : {}),
    ...(deps.taskEvents ? { events: deps.taskEvents } : {}),
    ...(deps.a2aPush ? { push: deps.a2aPush } : {}),
  });
  // MCP over Streamable HTTP (docs/MCP.md): its tools call the routes above by inject.
  installMcp(app, { schemas: new InputSchemaReader({ redis: deps.redis, keys: deps.keys }) });
  await app.register(keysRoutes, { store: deps.auth.store });
  if (deps.tenants) await app.register(tenantsRoutes, { records: deps.tenants });
  if (deps.webhooks) await app.register(webhooksRoutes, deps.webhooks);
  if (deps.room) await app.register(queuesRoutes, { room: deps.room });
  if (deps.shadows) await app.register(capabilitiesRoutes, { shadows: deps.shadows });
  await app.register(agentsRoutes, {
    registry: deps.registry ?? new RegistryForwarder({ url: undefined }),
  });
  await app.register(consoleSessionRoutes, { verifier: deps.auth.store });
  if (deps.observability) await app.register(consoleRoutes, deps.observability.console);
  return app;
}
