import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { reachKeys } from '@agent-reach/protocol';
import {
  baseFastifyOptions,
  installHostGuard,
  isLoopbackHost,
  serviceLogger,
} from '@agent-reach/service-kit';
import {
  connectRedis,
  createRedis,
  type RedisClient,
  type RedisConnectionSettings,
} from '@agent-reach/service-kit/redis';
import { createRelayMetrics } from './metrics.ts';
import { compileRelayOptions, type RelayOptions } from './options.ts';
import { RedisUser } from './redis-user.ts';
import { RegistryApi } from './registry-api.ts';
import { Relay } from './relay.ts';

/** A running relay with its HTTP endpoints. */
export interface RelayService {
  relay: Relay;
  options: RelayOptions;
  /** Starts listening on options.port/host; returns the address. */
  listen(): Promise<string>;
  /** Stops: running calls finish, instances deregister, the membership is left. Idempotent. */
  close(): Promise<void>;
}

function connect(
  connection: RedisConnectionSettings,
  name: string,
  o: { acl: boolean; pipelined: boolean },
): RedisClient {
  const acl = o.acl;
  return createRedis(connection, {
    lazyConnect: true,
    connectionName: name,
    // Commands: every served agent's reads and acks of one tick leave in one write.
    enableAutoPipelining: o.pipelined,
    maxRetriesPerRequest: 2,
    retryStrategy: (times) => Math.min(50 * times, 1000),
    // A relay's own Redis user may not run INFO, which the ready check sends.
    ...(acl ? { enableReadyCheck: false } : {}),
  });
}

/**
 * Wires a relay from settings: two Redis connections whatever the fleet's size (commands, and
 * declaration notices) plus the wake-up subscriber (one per master on a Cluster), registry-sync
 * over HTTP, and `/livez`, `/healthz`, `/metrics`.
 */
export async function createRelayService(
  opts: Partial<RelayOptions> = {},
  extra: { logger?: Logger } = {},
): Promise<RelayService> {
  const options = compileRelayOptions(opts);
  const logger = (extra.logger ?? serviceLogger('relay', options.logLevel)).child({
    relay_id: options.relayId,
  });
  const keys = reachKeys(options.prefix);
  const registry = new RegistryApi({
    url: options.registryUrl,
    ...(options.relayKey ? { key: options.relayKey } : {}),
  });
  const issue = () => registry.redisCredentials(options.relayId);
  // REACH_RELAY_REDIS_ACL=on: a Redis user that reaches the endpoint agents' keys only.
  const user = options.redisAcl ? await issue() : undefined;
  const acl = user !== undefined;
  const connection = {
    ...options.redisConnection,
    url: options.redisUrl,
    ...(user ? { username: user.username, password: user.password } : {}),
  };
  const redis = connect(connection, 'reach-relay', { acl, pipelined: true });
  const subscriber = connect(connection, 'reach-relay-notices', { acl, pipelined: false });
  const clients: RedisClient[] = [redis, subscriber];
  // The wake-up subscriber is added once the relay made it.
  const redisUser = acl ? new RedisUser({ issue, clients: () => clients, logger }) : undefined;
  for (const conn of clients) {
    conn.on('error', (err: Error) => {
      logger.warn({ err, module: 'redis' }, 'redis connection error');
      redisUser?.onError(err);
    });
    await connectRedis(conn, connection);
  }
  const metrics = createRelayMetrics();
  const relay = new Relay({
    redis,
    subscriber,
    keys,
    registry,
    metrics,
    logger,
    relayId: options.relayId,
    leaseMs: options.leaseMs,
    probeIntervalMs: options.probeIntervalMs,
    checkIntervalMs: options.checkIntervalMs,
    discoverIntervalMs: options.discoverIntervalMs,
    sweepMs: options.sweepMs,
    onRedisError: (err) => redisUser?.onError(err),
  });
  clients.push(relay.wakeClient);

  // The services' base options: request lines at debug only (DebugRequestLog), API errors.
  const app = Fastify({
    ...baseFastifyOptions(64 * 1024),
    loggerInstance: logger.child({ module: 'http' }),
  });
  // Its routes are public (health and metrics): on loopback it answers loopback names only, so a
  // page in a browser cannot read them through a rebinding host name (docs/SECURITY.md, Edges).
  if (isLoopbackHost(options.host))
    installHostGuard(app as unknown as FastifyInstance, {
      open: true,
      allowedHosts: [],
      allowedOrigins: [],
    });
  app.get('/livez', async () => ({ status: 'ok' }));
  app.get('/healthz', async (_req, reply) => {
    try {
      await redis.ping();
    } catch {
      return reply.code(503).send({ status: 'unavailable', redis: 'down' });
    }
    return {
      status: 'ok',
      relay_id: options.relayId,
      relays: relay.members.length,
      agents: relay.served.size,
    };
  });
  app.get('/metrics', async (_req, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  await relay.start();

  let closing: Promise<void> | undefined;
  return {
    relay,
    options,
    listen: () => app.listen({ port: options.port, host: options.host }),
    close: () =>
      (closing ??= (async () => {
        await app.close();
        await relay.close();
        subscriber.disconnect();
        await redis.quit().catch(() => redis.disconnect());
      })()),
  };
}
