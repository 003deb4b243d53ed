import type { RedisClient } from '@agent-reach/service-kit/redis';
import type { RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { CLIENT_DEFAULTS } from '@agent-reach/protocol';
import {
  createRedis,
  disconnectNow,
  redisExtrasFromEnv,
  type RedisConnectionExtras,
} from '@agent-reach/service-kit/redis';
import { settlesWithin } from '../util/sleep.ts';

/** One entry of a stream as XREADGROUP returns it; `fields` is null when the entry was trimmed away. */
export interface StreamEntry {
  /** The stream it was read from (one read may cover several). */
  stream: string;
  id: string;
  fields: string[] | null;
}

/** Where an entry was read from, so its XACK goes back to the same place. */
export interface ReadOrigin {
  stream: string;
  group: string;
  /** The agent's own inbox, or a capability pool shared by the pull agents (acks then name the pool). */
  kind: 'inbox' | 'pool';
}

/**
 * Flattens an XREADGROUP reply (`[[stream, [[id, fields|null], …]], …]` or null) into entries,
 * each with its stream. Anything that does not have that shape is skipped rather than trusted.
 */
export function parseReadReply(reply: unknown): StreamEntry[] {
  if (!Array.isArray(reply)) return [];
  const out: StreamEntry[] = [];
  for (const streamReply of reply as unknown[]) {
    if (!Array.isArray(streamReply) || typeof streamReply[0] !== 'string') continue;
    const stream = streamReply[0];
    const entries: unknown = streamReply[1];
    if (!Array.isArray(entries)) continue;
    for (const entry of entries as unknown[]) {
      if (!Array.isArray(entry) || typeof entry[0] !== 'string') continue;
      const fields: unknown = entry[1];
      const ok = Array.isArray(fields) && fields.every((f) => typeof f === 'string');
      out.push({ stream, id: entry[0], fields: ok ? fields : null });
    }
  }
  return out;
}

/**
 * The code of a Redis error reply (`NOGROUP`, `WRONGTYPE`, …), or undefined for anything else.
 * Redis puts a machine-readable code as the first word of every error reply; that word is the
 * documented contract, so reading it is not branching on free text.
 */
export function redisErrorCode(err: unknown): string | undefined {
  if (!(err instanceof Error) || err.name !== 'ReplyError') return undefined;
  const code = /^([A-Z][A-Z_-]*)\b/.exec(err.message)?.[1];
  return code;
}

/** Credentials that win over every other source (the ones a registration issued, for instance). */
export interface RedisCredentials {
  username: string;
  password: string;
}

/**
 * The Redis part of an agent's compiled options (`CompiledAgentOptions` has this shape): kept
 * narrow so the connection helpers do not depend on the whole of the agent's settings.
 */
export interface AgentRedisSettings {
  readonly redisUrl: string;
  readonly redisOptions: RedisOptions;
  readonly redisConnection: RedisConnectionExtras;
  /** Names the connections in CLIENT LIST (`reach:<agentId>:<role>`). */
  readonly agentId: string;
}

/**
 * Opens one ioredis connection for `role`, named so it shows in CLIENT LIST, with errors logged
 * not thrown. The URL, TLS files, credentials and sentinels come from the options
 * (`redisUrl`, `redisConnection`), then `redisOptions`, then `credentials` when given.
 */
export function openRedis(
  options: AgentRedisSettings,
  role: 'cmd' | 'read' | 'control',
  logger: Logger,
  credentials?: RedisCredentials,
): RedisClient {
  const redis = createRedis(
    { ...options.redisConnection, url: options.redisUrl },
    {
      // Acks of tasks that finish in the same tick leave in one write (never on the blocking reader).
      enableAutoPipelining: role === 'cmd',
      ...options.redisOptions,
      ...(credentials ?? {}),
      connectionName: `reach:${options.agentId}:${role}`,
      // Connected by the first command, once registered: the register reply may carry the
      // credentials to connect with (REACH_AGENT_ACL=on, see useCredentials).
      lazyConnect: true,
    },
  );
  // ioredis emits 'error' on every failed reconnect (and prints to stderr without a listener):
  // warn once per outage, then keep quiet until the connection is back.
  let down = false;
  redis.on('error', (err: unknown) => {
    if (down) return logger.debug({ err, role }, 'redis still unreachable');
    down = true;
    logger.warn({ err, role }, 'redis connection lost; reconnecting');
  });
  redis.on('ready', () => {
    if (down) logger.info({ role }, 'redis connection restored');
    down = false;
  });
  return redis;
}

/** QUIT politely, falling back to a hard disconnect if Redis does not answer in time. */
export async function closeRedis(redis: RedisClient, timeoutMs = 1000): Promise<void> {
  if (redis.status === 'end') return;
  // Never connected (closed before registering): nothing to say goodbye to.
  if (redis.status === 'wait') return redis.disconnect();
  // Waiting to reconnect: no goodbye to say, and a QUIT would only wait in its queue.
  if (redis.status === 'reconnecting') return disconnectNow(redis);
  const quit = redis.quit().catch(() => undefined);
  if (!(await settlesWithin(quit, timeoutMs))) disconnectNow(redis);
}

/**
 * `redisUrl` and `redisConnection` of the agent options from the environment: REDIS_URL
 * (default `redis://127.0.0.1:6379`), REDIS_TLS_CA, REDIS_TLS_CERT, REDIS_TLS_KEY (PEM file paths,
 * with a `rediss://` URL), REDIS_USERNAME, REDIS_PASSWORD, REDIS_SENTINELS (`host:port,…`) and
 * REDIS_SENTINEL_NAME. Throws a message naming a malformed variable.
 */
export function redisConnectionFromEnv(env: NodeJS.ProcessEnv = process.env): {
  redisUrl: string;
  redisConnection: RedisConnectionExtras;
} {
  return {
    redisUrl: env['REDIS_URL'] || CLIENT_DEFAULTS.redisUrl,
    redisConnection: redisExtrasFromEnv(env) ?? {},
  };
}
