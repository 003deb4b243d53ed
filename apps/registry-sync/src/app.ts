import Fastify, { type FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { RedisClient } from '@agent-reach/service-kit/redis';
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
  type KeyVerifier,
} from '@agent-reach/service-kit';
import type { FleetEventLog } from '@agent-reach/dispatch';
import type { AgentRegistry } from './registry/agent-registry.ts';
import { agentsRoutes } from './routes/agents/index.ts';
import { heartbeatsRoutes } from './routes/agents/heartbeats.ts';
import { endpointsRoutes } from './routes/endpoints/index.ts';
import { relaysRoutes } from './routes/relays/index.ts';
import type { RelayAcl } from './acl/relay-acl.ts';
import type { HeartbeatBatch } from './registry/heartbeat-batch.ts';
import type { EndpointDeclarations } from './endpoints/endpoint-declarations.ts';
import type { EndpointRegistration } from './endpoints/endpoint-registration.ts';
import { registerObservability } from './plugins/observability.ts';
import type { RegistryMetrics } from './metrics/registry-metrics.ts';
import type { CardFetchSettings } from './cards/card-fetcher.ts';
import type { ObservationReporter } from './observation/observation-report.ts';

/** Collaborators the HTTP app is built from. */
export interface RegistryAppDeps {
  redis: RedisClient;
  registry: AgentRegistry;
  bodyLimitBytes: number;
  /**
   * API keys (docs/SECURITY.md): whether requests need one, and what checks them. The agent
   * routes that take the agent's token (heartbeat, heartbeats, serve, deregister) are
   * `agent-token` routes.
   */
  auth: { required: boolean; verifier: KeyVerifier; failures?: AuthFailureLimiter };
  /** Hosts, origins and proxies the app answers and trusts; without it, loopback rules only. */
  edge?: EdgeSettings;
  /** Publishes these agents to routers now (a registry delta); resolves once written. */
  onRegistryChange: (agentIds: readonly string[]) => Promise<void>;
  fleet: FleetEventLog;
  /** Where a registration's `card_url` may point, and its fetch's timeout and size cap. */
  cards: CardFetchSettings;
  /** Many agents' heartbeats in one request (a relay's). */
  heartbeats: HeartbeatBatch;
  /** Endpoint agents: their declarations, and their relays' registrations. */
  endpoints: { declarations: EndpointDeclarations; registration: EndpointRegistration };
  /** Relays' Redis users (REACH_AGENT_ACL=on); absent while it is off. */
  relayAcl?: RelayAcl;
  logger?: FastifyServerOptions['loggerInstance'];
  /** Serves `GET /metrics` when given. */
  metrics?: RegistryMetrics;
  /** Serves `GET /v1/agents/:agent_id/observation` when given. */
  observations?: ObservationReporter;
}

/** Builds the registry-sync HTTP app; never listens (server.ts does, tests use inject). */
export async function buildRegistryApp(deps: RegistryAppDeps) {
  const app = Fastify({
    ...baseFastifyOptions(deps.bodyLimitBytes),
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
  installAuth(app, {
    required: deps.auth.required,
    verifier: deps.auth.verifier,
    ...(deps.auth.failures ? { failures: deps.auth.failures } : {}),
  });
  // Docs and metrics learn routes from hooks: before any route.
  await registerObservability(app, deps.metrics);
  // Liveness: 200 while the process serves HTTP, without touching Redis, so that an
  // orchestrator restarts a hung process but not every replica through a Redis outage (that is
  // readiness, /healthz).
  app.get('/livez', { config: { auth: 'public' } }, async () => ({ status: 'ok' }));
  app.get('/healthz', { config: { auth: 'public' } }, async (_request, reply) => {
    try {
      await pingWithin(deps.redis);
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ error: 'STORE_UNAVAILABLE', message: 'Redis does not answer' });
    }
  });
  await app.register(agentsRoutes, {
    registry: deps.registry,
    onRegistryChange: deps.onRegistryChange,
    fleet: deps.fleet,
    cards: deps.cards,
    keys: { required: deps.auth.required, verifier: deps.auth.verifier },
    ...(deps.observations ? { observations: deps.observations } : {}),
  });
  await app.register(heartbeatsRoutes, {
    batch: deps.heartbeats,
    onRegistryChange: deps.onRegistryChange,
    fleet: deps.fleet,
  });
  await app.register(endpointsRoutes, deps.endpoints);
  await app.register(relaysRoutes, { acl: deps.relayAcl });
  return app;
}
