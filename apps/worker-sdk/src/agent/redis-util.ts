import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CompiledAgentOptions } from './options.ts';
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

/** Opens one ioredis connection for `role`, named so it shows in CLIENT LIST, with errors logged not thrown. */
export function openRedis(
  options: CompiledAgentOptions,
  role: 'cmd' | 'read',
  logger: Logger,
): Redis {
  const redis = new Redis(options.redisUrl, {
    // Acks of tasks that finish in the same tick leave in one write (never on the blocking reader).
    enableAutoPipelining: role === 'cmd',
    ...options.redisOptions,
    connectionName: `reach:${options.agentId}:${role}`,
  });
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
export async function closeRedis(redis: Redis, timeoutMs = 1000): Promise<void> {
  if (redis.status === 'end') return;
  const quit = redis.quit().catch(() => undefined);
  if (!(await settlesWithin(quit, timeoutMs))) redis.disconnect();
}
